package live

import (
	"cmp"
	"encoding/json"
	"slices"
	"sort"
	"time"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// view is what /json serves and the page draws. Times are in
// milliseconds.
type view struct {
	// Frames are the window's frames, oldest first.
	Frames []frameView `json:"frames"`
	// BudgetCPUMs and BudgetGPUMs are the recorder's frame budgets
	// (profiler.Options.CPUBudget, GPUBudget), 0 when not set.
	BudgetCPUMs float64 `json:"budget_cpu_ms"`
	BudgetGPUMs float64 `json:"budget_gpu_ms"`
	// Selected is the frame Zones lists: ?frame=ID when the window holds
	// it, else the slowest settled frame of the window that has a verdict
	// (the slowest settled one where none has).
	Selected uint64     `json:"selected"`
	Zones    []zoneView `json:"zones"`
	// Gaps are the selected frame's GPU idle gaps (timeline/limits), and
	// SelectedMs the interval they lie in: from the frame's start to the
	// next frame's. Both absent where the frame has no verdict.
	Gaps       []gapView `json:"gaps,omitempty"`
	SelectedMs float64   `json:"selected_ms,omitempty"`
	// LimitedBy is each verdict's share of the window's frames that have
	// one, by frame limit; absent where none has.
	LimitedBy map[string]float64 `json:"limited_by,omitempty"`
	// Stats are the zones' durations over the window, by kind and name,
	// the 100 with the most time.
	Stats []zoneStats `json:"stats"`
	// WorkStats are the keys of the pipeline statistics the window's GPU
	// zones count (timeline.StatKey, in bit order), and NoCounts how many
	// of its zones that count have no counts, by reason
	// (timeline.WorkMissing keys, those not zero): both absent where no
	// zone counts.
	WorkStats []string       `json:"work_stats,omitempty"`
	NoCounts  map[string]int `json:"no_counts,omitempty"`
	// Clocks are the GPU queues' clock models.
	Clocks []clockView `json:"clocks"`
	// Drops are the recorder's drop counters by cause
	// (books.Cause names), Missed the spans this view copied too
	// late to show (they had left the recorder's memory), and CaptureLost
	// the spans of batches that ?seconds captures had no room for (their
	// clients read too slowly), since the view's poller started.
	Drops  map[string]uint64 `json:"drops"`
	Missed uint64            `json:"missed"`
	// Books are the recorder's ledger, by book (books.Kind names):
	// what it was handed, delivered to a Dump or sink, holds open, and
	// lost (the book's part of Drops).
	Books       map[string]bookView `json:"books"`
	CaptureLost uint64              `json:"capture_lost"`
	// Settled is the newest frame whose GPU time is final; Open the frame
	// in progress.
	Settled uint64 `json:"settled"`
	Open    uint64 `json:"open"`
	// Refused and BadRequests count the handler's 429 and 400/405 answers.
	Refused     uint64 `json:"refused"`
	BadRequests uint64 `json:"bad_requests"`
}

// bookView is one book of the recorder's ledger; Balanced says Issued =
// Delivered + Open + Lost.
type bookView struct {
	Issued    uint64 `json:"issued"`
	Delivered uint64 `json:"delivered"`
	Open      uint64 `json:"open"`
	Lost      uint64 `json:"lost"`
	Balanced  bool   `json:"balanced"`
}

// frameView is one frame: its CPU time (BeginFrame to EndFrame) and, once
// settled, its GPU time (the union of its outermost GPU zones, as the
// recorder's "GPU time per frame" counter has it), else -1.
//
// Limit is what limits it (timeline/limits: "cpu", "gpu", "present" or
// "unknown"), "pending" until the frame has settled and the next has
// begun, absent where the window lacks what its verdict stands on (the
// work of the frame before the oldest). GPUBusy and CPUBusy are the
// shares of its interval (to the next frame's start) the GPU was busy and
// its submitting thread worked, -1 where it has no verdict or no
// submitting thread is known.
type frameView struct {
	ID      uint64  `json:"id"`
	CPUMs   float64 `json:"cpu_ms"`
	GPUMs   float64 `json:"gpu_ms"`
	Limit   string  `json:"limit,omitempty"`
	GPUBusy float64 `json:"gpu_busy"`
	CPUBusy float64 `json:"cpu_busy"`
}

// zoneView is one span of the selected frame: its track (a GPU queue, a
// lane of one, or a CPU track), kind "gpu" or "cpu", start from the
// frame's start, duration and nesting depth.
type zoneView struct {
	Track   string  `json:"track"`
	Kind    string  `json:"kind"`
	Name    string  `json:"name"`
	StartMs float64 `json:"start_ms"`
	DurMs   float64 `json:"dur_ms"`
	Depth   uint16  `json:"depth"`
	// Work is a GPU zone's counts by statistic key, where its context
	// counts pipeline statistics and it was counted; NoCounts is why it
	// has none (a timeline.WorkMissing key) where it was not. Both absent
	// on every other zone.
	Work     map[string]uint64 `json:"work,omitempty"`
	NoCounts string            `json:"no_counts,omitempty"`
}

// zoneStats are the durations of the spans of one name and kind.
type zoneStats struct {
	Name  string  `json:"name"`
	Kind  string  `json:"kind"`
	Count int     `json:"count"`
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	MaxMs float64 `json:"max_ms"`
	// Work is the work of the zones of this name over the window, where
	// any of them counts.
	Work *workStats `json:"work,omitempty"`
	agg  *workAgg
}

// workStats are the work of the zones of one name: how many were
// counted, how many have no counts, and each statistic's mean count over
// those counted, by key.
type workStats struct {
	Counted  int                `json:"counted"`
	NoCounts int                `json:"no_counts"`
	Mean     map[string]float64 `json:"mean"`
}

// workAgg sums the work of the zones of one name over the window: one a
// name whose zones count, made only for those.
type workAgg struct {
	counted, missing int
	n                [timeline.NumPipelineStats]int
	sum              [timeline.NumPipelineStats]float64
}

func (a *workAgg) add(w *timeline.Work) {
	if w.Missing != timeline.WorkCounted {
		a.missing++
		return
	}
	a.counted++
	w.Stats.Each(func(i int) {
		a.n[i]++
		a.sum[i] += float64(w.Count[i])
	})
}

func (a *workAgg) stats() *workStats {
	s := &workStats{Counted: a.counted, NoCounts: a.missing, Mean: map[string]float64{}}
	for i, n := range a.n {
		if n > 0 {
			s.Mean[timeline.StatKey(i)] = a.sum[i] / float64(n)
		}
	}
	return s
}

// clockView is one GPU queue's clock model (clock.Quality).
type clockView struct {
	Queue    string  `json:"queue"`
	ErrUs    float64 `json:"err_us"`
	DriftPPM float64 `json:"drift_ppm"`
	AgeS     float64 `json:"age_s"` // since the newest calibration; -1 before any
	Samples  int     `json:"samples"`
	Outliers uint64  `json:"outliers"`
	Resets   uint64  `json:"resets"`
}

// viewCache holds the part of the view every viewer shares, made once a
// poll, and the index of the window's spans by frame.
type viewCache struct {
	views   uint64
	made    bool
	shared  view
	byFrame map[uint64][]int32
	// plain is the default view (the slowest frame selected) as JSON,
	// with the counters of refusals it was made with: most viewers ask
	// for it, and share these bytes.
	plain            []byte
	refused, badReqs uint64
}

const ms = float64(time.Millisecond)

// viewJSON is the view with frame selected, as JSON.
func (w *watcher) viewJSON(frame uint64, refused, bad uint64) []byte {
	w.mu.Lock()
	if !w.cache.made || w.cache.views != w.win.views {
		w.cache = viewCache{views: w.win.views, made: true}
		w.makeShared(&w.cache)
	}
	c := &w.cache
	v := c.shared
	if frame == 0 || c.byFrame[frame] == nil {
		frame = v.Selected
		if c.plain != nil && c.refused == refused && c.badReqs == bad {
			b := c.plain
			w.mu.Unlock()
			return b
		}
	}
	plain := frame == v.Selected
	v.Selected = frame
	v.Zones = w.zonesOf(frame)
	v.Gaps, v.SelectedMs = w.win.verdicts.gapsOf(frame)
	v.Refused, v.BadRequests = refused, bad
	b, _ := json.Marshal(&v) // plain data: cannot fail
	if plain {
		c.plain, c.refused, c.badReqs = b, refused, bad
	}
	w.mu.Unlock()
	return b
}

// isGPU says whether a track holds GPU zones.
func isGPU(k timeline.TrackKind) bool {
	return k == timeline.TrackGPUQueue || k == timeline.TrackGPULane
}

// track returns the window's track id, or nil.
func (w *watcher) track(id timeline.TrackID) *timeline.Track {
	if i := int(id) - 1; i >= 0 && i < len(w.win.tracks) && w.win.tracks[i].ID == id {
		return &w.win.tracks[i]
	}
	for i := range w.win.tracks {
		if w.win.tracks[i].ID == id {
			return &w.win.tracks[i]
		}
	}
	return nil
}

func (w *watcher) name(id timeline.NameID) string {
	if int(id) < len(w.win.names) {
		return w.win.names[id]
	}
	return ""
}

// makeShared fills c from the window. Caller holds mu.
func (w *watcher) makeShared(c *viewCache) {
	wn := &w.win
	o := w.rec.Options()
	v := &c.shared
	v.BudgetCPUMs, v.BudgetGPUMs = float64(o.CPUBudget)/ms, float64(o.GPUBudget)/ms
	v.Missed, v.CaptureLost, v.Settled, v.Open = wn.missed, wn.capLost, wn.settled, wn.open
	v.Drops = map[string]uint64{}
	for dc := range books.NumCauses {
		v.Drops[dc.String()] = *books.Count(&wn.drops, dc)
	}
	v.Books = map[string]bookView{}
	for k := range books.NumKinds {
		b, lost := books.Of(&wn.ledger, k), books.Lost(&wn.ledger, k, wn.drops).Total()
		v.Books[k.String()] = bookView{Issued: b.Issued, Delivered: b.Delivered, Open: b.Open, Lost: lost,
			Balanced: books.Balances(&wn.ledger, k, wn.drops)}
	}

	c.byFrame = map[uint64][]int32{}
	type key struct {
		kind string
		name timeline.NameID
	}
	durs := map[key][]float64{}
	var (
		works  map[key]*workAgg // made at the first zone that counts
		wstats timeline.PipelineStats
	)
	for i := range wn.spans {
		s := &wn.spans[i]
		t := w.track(s.Track)
		if t == nil || (t.Kind != timeline.TrackCPU && !isGPU(t.Kind)) {
			continue
		}
		if s.Frame != 0 {
			c.byFrame[s.Frame] = append(c.byFrame[s.Frame], int32(i))
		}
		k := key{"cpu", s.Name}
		if isGPU(t.Kind) {
			k.kind = "gpu"
		}
		durs[k] = append(durs[k], float64(s.Dur())/ms)
		if s.Work != nil && k.kind == "gpu" {
			if works == nil {
				works, v.NoCounts = map[key]*workAgg{}, map[string]int{}
			}
			a := works[k]
			if a == nil {
				a = &workAgg{}
				works[k] = a
			}
			a.add(s.Work)
			wstats |= s.Work.Stats
			if s.Work.Missing != timeline.WorkCounted {
				v.NoCounts[s.Work.Missing.String()]++ // at most timeline's reasons, and "unknown"
			}
		}
	}
	wstats.Each(func(i int) { v.WorkStats = append(v.WorkStats, timeline.StatKey(i)) })

	// The slowest settled frame is selected, of those judged where any
	// is: the oldest of a window that began after the run has no verdict,
	// and was often the slowest (a run's first frames are).
	var slowest, slowestJudged uint64
	worst, worstJudged := -1.0, -1.0
	w.judge()
	for _, f := range wn.frames {
		fv := frameView{ID: f.ID, CPUMs: float64(f.End-f.Start) / ms, GPUMs: -1}
		wn.verdicts.limitOf(&fv)
		if f.ID <= wn.settled {
			fv.GPUMs = float64(w.gpuBusy(c.byFrame[f.ID])) / ms
			t := max(fv.CPUMs, fv.GPUMs)
			if t > worst {
				worst, slowest = t, f.ID
			}
			if fv.Limit != "" && fv.Limit != pending && t > worstJudged {
				worstJudged, slowestJudged = t, f.ID
			}
		}
		v.Frames = append(v.Frames, fv)
	}
	v.Selected = slowest
	if slowestJudged != 0 {
		v.Selected = slowestJudged
	}
	v.LimitedBy = limitedBy(v.Frames)

	for k, d := range durs {
		slices.Sort(d)
		v.Stats = append(v.Stats, zoneStats{
			Name: w.name(k.name), Kind: k.kind, Count: len(d),
			P50Ms: d[(len(d)-1)/2], P95Ms: d[(len(d)-1)*95/100], MaxMs: d[len(d)-1],
			agg: works[k],
		})
	}
	total := func(z zoneStats) float64 { return z.P50Ms * float64(z.Count) }
	slices.SortFunc(v.Stats, func(a, b zoneStats) int {
		if ta, tb := total(a), total(b); ta != tb {
			if ta > tb {
				return -1
			}
			return 1
		}
		if a.Kind != b.Kind {
			if a.Kind < b.Kind {
				return -1
			}
			return 1
		}
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	v.Stats = v.Stats[:min(len(v.Stats), 100)]
	for i := range v.Stats {
		if a := v.Stats[i].agg; a != nil {
			v.Stats[i].Work, v.Stats[i].agg = a.stats(), nil
		}
	}

	for _, g := range w.p.GPUs() {
		m := g.Clock()
		if m == nil {
			continue
		}
		q := m.Quality()
		cv := clockView{ErrUs: q.ErrNs / 1e3, DriftPPM: q.DriftPPM, AgeS: -1, Samples: q.Samples, Outliers: q.Outliers, Resets: q.Resets}
		if t := w.track(g.Track()); t != nil {
			cv.Queue = t.Name
		}
		if q.LastHost != 0 {
			cv.AgeS = float64(timeline.Now()-q.LastHost) / 1e9
		}
		v.Clocks = append(v.Clocks, cv)
	}
}

// gpuBusy is the time the outermost GPU zones of spans (indices into the
// window) cover together, on all queues.
func (w *watcher) gpuBusy(idx []int32) int64 {
	var ivs [][2]int64
	for _, i := range idx {
		s := &w.win.spans[i]
		if t := w.track(s.Track); t != nil && isGPU(t.Kind) && s.Depth == 0 {
			ivs = append(ivs, [2]int64{s.Start, s.End})
		}
	}
	slices.SortFunc(ivs, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var busy, end int64
	for i, iv := range ivs {
		if i == 0 || iv[0] > end {
			busy += iv[1] - iv[0]
			end = iv[1]
		} else if iv[1] > end {
			busy += iv[1] - end
			end = iv[1]
		}
	}
	return busy
}

// zonesOf lists the GPU and CPU spans of frame, by track and in the one
// span order. Caller holds mu.
func (w *watcher) zonesOf(frame uint64) []zoneView {
	idx := w.cache.byFrame[frame]
	if len(idx) == 0 {
		return nil
	}
	var start int64
	i := sort.Search(len(w.win.frames), func(i int) bool { return w.win.frames[i].ID >= frame })
	if i < len(w.win.frames) && w.win.frames[i].ID == frame {
		start = w.win.frames[i].Start
	}
	spans := make([]timeline.Span, len(idx))
	for k, j := range idx {
		spans[k] = w.win.spans[j]
	}
	slices.SortFunc(spans, func(a, b timeline.Span) int { return timeline.CompareSpans(&a, &b) })
	out := make([]zoneView, 0, len(spans))
	for _, s := range spans {
		t := w.track(s.Track)
		z := zoneView{Track: t.Name, Kind: "cpu", Name: w.name(s.Name), StartMs: float64(s.Start-start) / ms, DurMs: float64(s.Dur()) / ms, Depth: s.Depth}
		if isGPU(t.Kind) {
			z.Kind = "gpu"
			if w := s.Work; w != nil {
				if w.Missing != timeline.WorkCounted {
					z.NoCounts = w.Missing.String()
				} else {
					z.Work = make(map[string]uint64, w.Stats.Len())
					w.Stats.Each(func(i int) { z.Work[timeline.StatKey(i)] = w.Count[i] })
				}
			}
		}
		out = append(out, z)
	}
	return out
}
