package record

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// Options configure a Recorder. The zero Options keep the newest
// DefaultMaxSpans spans (and as many frames, samples, calibrations and
// flows) in memory for Dump, with no sink.
type Options struct {
	// Process names the traced process in every Trace the recorder makes.
	Process timeline.Process

	// WindowFrames, when > 0, makes the recorder a flight recorder that
	// keeps the last WindowFrames ended frames (and the frame in
	// progress): spans of older frames, and spans outside any frame that
	// ended before the oldest kept frame began, are evicted (Drops.Evicted),
	// as are counter samples and calibrations taken before it began
	// (Drops.Samples), and older frames (Drops.Frames).
	WindowFrames int
	// WindowDuration, when > 0, keeps only what ended in the last
	// WindowDuration. With both windows set, data must be in both.
	WindowDuration time.Duration

	// Sink, when set, receives finished data in batches (see Sink) on
	// Flush, on Close, and every FlushEvery frames. Data handed to the
	// sink leaves memory unless a window keeps it for Dump.
	Sink timeline.Sink
	// FlushEvery, when > 0, makes EndFrame flush to the Sink every
	// FlushEvery frames, on the goroutine calling EndFrame.
	FlushEvery int
	// FramesNoWait makes BeginFrame and EndFrame leave each frame
	// boundary, with its time and ID, for the recorder's own goroutine,
	// which does a boundary's work there (frames.go): they never wait for
	// the lock a Flush or the merge holds. OnBudget and FlushEvery then
	// run on that goroutine.
	FramesNoWait bool

	// CPUBudget, when > 0, is the CPU time a frame may take, from
	// BeginFrame to EndFrame; GPUBudget, when > 0, the GPU time it may
	// take, as sampled on "GPU time per frame". A frame that takes longer
	// is passed to OnBudget with the window dumped the moment it was found
	// over: for the CPU budget at its EndFrame, for the GPU budget when
	// its GPU time settles (see SettleFrames; with a frame window,
	// WindowFrames larger than the frames in flight keeps the frame in the
	// dump). Budgets without OnBudget are not checked.
	CPUBudget time.Duration
	GPUBudget time.Duration
	// OnBudget is called for each frame found over a budget, except as
	// BudgetEvery limits it, on the goroutine whose call found it
	// (EndFrame; BeginFrame or Close settling frames) once the recorder's
	// lock is released: it may call the recorder's methods, and the
	// frames it takes delay only that goroutine.
	OnBudget func(OverBudget)
	// BudgetEvery is the number of frames that must end after a call of
	// OnBudget for one budget before the next call for that budget, so
	// that a run of slow frames dumps one window, not hundreds. Frames
	// over budget in between are counted in Stats.BudgetSkipped, except
	// that a frame worse than the one last passed is passed too (and
	// waits again), and the first call for a budget, most often for a
	// warm-up frame, starts no wait. The default is WindowFrames, so that
	// the windows dumped do not overlap, or 60 without a frame window.
	BudgetEvery int

	// SettleFrames is how many frames after a frame ends its GPU results
	// are still expected when no [GPUSource] says when they are all in
	// (the profiler's GPU contexts are sources, and then a frame settles
	// when every open source has settled it, however late, within
	// MaxSettleFrames): the GPU time of frame F is sampled when
	// frame F+SettleFrames ends (zones of F that come later stay on the
	// timeline but are counted in Drops.Untimed), and a submission key
	// waits that long for its other end (default 4).
	SettleFrames int
	// SettleTimeout bounds that wait in time, for programs with few or no
	// frames (default 2s).
	SettleTimeout time.Duration

	// MaxSpans caps the spans held in memory, and on its own each of the
	// frames, counter samples, calibrations and flows: once that many are
	// held, the oldest goes as each new one comes, counted in
	// Drops.Evicted (spans) or Stats.Evicted (the others) when no sink or
	// Dump had it (default DefaultMaxSpans).
	MaxSpans int
	// MaxPendingSpans caps, per CPU track, the spans written but not yet
	// collected by EndFrame, Flush or Dump; more are dropped and counted in
	// Drops.Spans (default 16384).
	MaxPendingSpans int
	// MaxLanes caps the tracks one GPU queue may spread over; a zone that
	// fits none is dropped and counted in Drops.GPUSpans (default 32).
	MaxLanes int
	// MaxPendingKeys caps the submission keys waiting for their other end;
	// the oldest expire first (default 65536).
	MaxPendingKeys int
}

func (o *Options) setDefaults() {
	if o.SettleFrames <= 0 {
		o.SettleFrames = 4
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 2 * time.Second
	}
	if o.MaxSpans <= 0 {
		o.MaxSpans = DefaultMaxSpans
	}
	if o.MaxPendingSpans <= 0 {
		o.MaxPendingSpans = 16384
	}
	if o.MaxLanes <= 0 {
		o.MaxLanes = 32
	}
	if o.MaxPendingKeys <= 0 {
		o.MaxPendingKeys = 65536
	}
	if o.BudgetEvery <= 0 {
		o.BudgetEvery = o.WindowFrames
		if o.BudgetEvery <= 0 {
			o.BudgetEvery = defaultBudgetEvery
		}
	}
}

// DefaultMaxSpans is Options.MaxSpans when not set: at most 1Mi each of
// spans, frames, samples, calibrations and flows, about 180 MiB at most
// (64, 24, 24, 40 and 24 bytes each), whatever the run's length; and, for
// GPU zones that count pipeline statistics, their timeline.Work (104
// bytes each, allocated a readback at a time).
const DefaultMaxSpans = 1 << 20

// Stats are the recorder's counts of dropped data and of misuse.
type Stats struct {
	Drops  timeline.Drops  // what every Trace from the recorder reports
	Ledger timeline.Ledger // likewise: the books, which balance against Drops
	// DuplicateKeys counts submission keys claimed by a second CPU span.
	DuplicateKeys uint64
	// SubmitsUnmatched counts CPU submissions whose key no GPU span used.
	SubmitsUnmatched uint64
	// ZonesUnlinked counts GPU spans whose key no CPU span submitted.
	ZonesUnlinked uint64
	// FlowsSplit counts flows not streamed because their ends went to
	// the sink in different batches.
	FlowsSplit uint64
	// SinkErrors counts batches the sink returned an error for, and
	// SinkLost what those batches held.
	SinkErrors uint64
	SinkLost   ItemCounts
	// Evicted counts, by kind, what left memory (out of the window, or
	// over Options.MaxSpans) without having been in a Dump or a sink
	// batch; its Spans are Drops.Evicted.
	Evicted ItemCounts
	// OverBudget counts frames found over a budget (a frame over both
	// counts twice); BudgetSkipped those of them not passed to OnBudget,
	// for Options.BudgetEvery.
	OverBudget    uint64
	BudgetSkipped uint64
}

// Recorder builds one timeline from CPU spans, GPU spans, frames, flows,
// counters and calibration records, as the plain Trace every exporter
// reads. All methods are safe for concurrent use, except that one CPUTrack
// is used by one goroutine at a time.
//
// It holds at most Options.MaxSpans spans, and as many of each of frames,
// samples, calibrations and flows, letting the oldest go as new ones come;
// no call but Dump does work in proportion to what it holds. With a window
// it is a flight recorder, with a sink it streams. What it drops is
// counted in Drops (Spans, GPUSpans, Untimed, Evicted; the other causes
// are the profiler's, passed in with AddDrops). How it collects, bounds
// and counts, and its counter tracks, are in docs/design.md of the
// repository.
type Recorder struct {
	frame atomic.Uint64 // the open frame's ID; 0 between frames
	last  atomic.Uint64 // the ID of the frame begun last
	// frameStart is when the frame begun last began, for EndFrame's
	// answer with Options.FramesNoWait.
	frameStart atomic.Int64
	maxChunks  int

	sinkMu sync.Mutex // orders batches to the sink; guards sinkState
	sinkState
	mu  sync.Mutex
	opt Options
	inboxState

	names    []string
	nameIDs  map[string]timeline.NameID
	tracks   []timeline.Track // tracks[i].ID == i+1
	cpu      []*CPUTrack
	queues   map[timeline.Queue]*queueState
	queueOf  map[timeline.TrackID]*queueState
	counters map[string]timeline.TrackID
	sourced  bool // a GPUSource was opened: sources say when frames settle

	store
	flowTable
	frameState
	budgetState

	ledgerState
	drops     timeline.Drops // recorder-level drops, and those the profiler reports
	sentDrops timeline.Drops // the Drops of the last batch to the sink
	sentBatch bool           // a batch went to the sink
	// sentLedger is that batch's Ledger.
	sentLedger timeline.Ledger
	stats      Stats
	misuse     uint64 // the recorder's own misuse (End twice or out of order, EndFrame with no frame, ...), in Drops.Misuse

	gpuScratch   []GPUSpan
	seqScratch   []uint64
	firstScratch batchCount // the batch being written's first deliveries; under sinkMu
	takeFn       func(t *CPUTrack, r *cpuRec)
}

// NewRecorder returns a Recorder configured by o.
func NewRecorder(o Options) *Recorder {
	o.setDefaults()
	r := &Recorder{
		opt:      o,
		names:    []string{""},
		nameIDs:  map[string]timeline.NameID{"": 0},
		queues:   map[timeline.Queue]*queueState{},
		queueOf:  map[timeline.TrackID]*queueState{},
		counters: map[string]timeline.TrackID{},
	}
	r.maxChunks = (o.MaxPendingSpans + chunkSize - 1) / chunkSize
	if r.maxChunks < 2 {
		r.maxChunks = 2
	}
	r.keys = map[uint64]*keyState{}
	r.gpuFrames = map[uint64]*gpuFrame{}
	r.takeFn = r.takeCPU
	r.mergeFn = r.merge
	r.mergeWake = make(chan struct{}, 1)
	return r
}

// MaxNames caps the name table. Names are meant to be registered once, not
// made per frame: past the cap Name returns 0, the empty name, and counts
// misuse.
const MaxNames = 1 << 20

// Options returns the options the recorder runs with, defaults filled in.
func (r *Recorder) Options() Options { return r.opt }

// Name registers s once and returns its handle; registering it again
// returns the same handle.
func (r *Recorder) Name(s string) timeline.NameID {
	r.lock()
	defer r.mu.Unlock()
	return r.nameLocked(s)
}

func (r *Recorder) nameLocked(s string) timeline.NameID {
	if id, ok := r.nameIDs[s]; ok {
		return id
	}
	if len(r.names) >= MaxNames {
		r.misuse++
		return 0
	}
	id := timeline.NameID(len(r.names))
	r.names = append(r.names, s)
	r.nameIDs[s] = id
	return id
}

// addTrack defines a track and returns its ID. The caller holds mu.
func (r *Recorder) addTrack(t timeline.Track) timeline.TrackID {
	t.ID = timeline.TrackID(len(r.tracks) + 1)
	r.tracks = append(r.tracks, t)
	return t.ID
}

// CPUTrack defines a new CPU track named name (the render loop, a worker)
// and returns its handle. Each call makes a new track.
func (r *Recorder) CPUTrack(name string) *CPUTrack {
	r.lock()
	defer r.mu.Unlock()
	c := new(chunk)
	t := &CPUTrack{rec: r, cur: c, read: c, nchunks: 1}
	t.id = r.addTrack(timeline.Track{Kind: timeline.TrackCPU, Name: name, Order: int32(len(r.cpu))})
	r.cpu = append(r.cpu, t)
	return t
}

// Frame returns the ID of the frame in progress, or 0 between frames.
func (r *Recorder) Frame() uint64 { return r.frame.Load() }

// LastFrame returns the ID of the frame begun last, in progress or ended
// (0 before the first).
func (r *Recorder) LastFrame() uint64 { return r.last.Load() }

// AddDrops adds counts of data lost elsewhere (the profiler's full query
// pools, uncalibrated zones) to the Drops every Trace reports.
func (r *Recorder) AddDrops(d timeline.Drops) {
	r.lock()
	r.drops = books.Add(r.drops, d)
	r.mu.Unlock()
}

// Stats returns the recorder's counts so far.
func (r *Recorder) Stats() Stats {
	r.lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Drops = r.totalDrops()
	s.Ledger = r.ledger(s.Drops)
	s.Evicted = r.evicted
	s.Evicted.Spans = s.Drops.Evicted
	return s
}

// upstreamDrops is totalDrops without what left memory undelivered
// (Evicted, Frames, Samples, Sink, and the flows evicted or split between
// sink batches): what a reader that copies in time still lacks. The
// caller holds mu.
func (r *Recorder) upstreamDrops() timeline.Drops {
	d := r.totalDrops()
	e, l := r.evicted, r.stats.SinkLost
	d.Evicted -= e.Spans
	d.Frames -= e.Frames
	d.Samples -= e.Samples + e.Calibrations
	d.Flows -= r.stats.FlowsSplit + e.Flows
	d.Sink -= l.Spans + l.Flows + l.Frames + l.Samples + l.Calibrations
	return d
}

// totalDrops is the running total of everything dropped. The caller
// holds mu.
func (r *Recorder) totalDrops() timeline.Drops {
	d := r.drops
	for _, t := range r.cpu {
		d.Spans += t.dropped.Load()
		d.Misuse += t.misuse.Load()
	}
	d.Evicted += r.evicted.Spans
	d.Flows += r.stats.ZonesUnlinked + r.stats.FlowsSplit + r.evicted.Flows
	d.Frames += r.evicted.Frames
	d.Samples += r.evicted.Samples + r.evicted.Calibrations
	l := r.stats.SinkLost
	d.Sink += l.Spans + l.Flows + l.Frames + l.Samples + l.Calibrations
	d.Misuse += r.misuse
	return d
}

// collectCPU moves every span the CPU tracks have published into the
// store. The caller holds mu.
func (r *Recorder) collectCPU() {
	for _, t := range r.cpu {
		t.collect(r.takeFn)
	}
}

// takeCPU stores one record of track t. The caller holds mu.
func (r *Recorder) takeCPU(t *CPUTrack, c *cpuRec) {
	if c.kind == recSubmit {
		if len(t.marks) >= MaxCPUDepth*64 {
			r.misuse++
			return
		}
		t.marks = append(t.marks, submitMark{key: c.frame, depth: c.depth})
		return
	}
	r.cpuTaken++
	var seq uint64
	if int(c.name) < len(r.names) {
		seq = r.appendSpan(timeline.Span{
			Track: t.id, Name: c.name, Start: c.start, End: c.end,
			Frame: c.frame, Depth: c.depth,
		})
	} else {
		r.drops.Spans++ // a NameID this recorder never gave out
	}
	if len(t.marks) == 0 {
		return
	}
	kept := t.marks[:0]
	for _, m := range t.marks {
		switch {
		case m.depth == c.depth:
			if seq != 0 {
				r.linkCPU(m.key, seq, c.frame)
			}
		case m.depth > c.depth:
			r.misuse++ // its span was dropped
		default:
			kept = append(kept, m)
		}
	}
	t.marks = kept
}

// Close settles everything still waiting (submission keys, GPU frame
// times, checked against Options.GPUBudget) and flushes to the sink,
// returning the sink's errors not yet returned, as Flush does; a sink
// that has had no batch gets one, empty if nothing happened. The
// recorder stays usable.
func (r *Recorder) Close() error {
	r.lock()
	r.collectCPU()
	r.expireKeys(true)
	r.settleGPUFrames(true)
	overs := r.dumpForBudgets(timeline.Now())
	r.mu.Unlock()
	r.stopMerge()
	r.runMarksDue()
	err := r.flush(true)
	r.callBudgets(overs)
	return err
}
