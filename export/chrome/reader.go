package chrome

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/framescope/framescope/timeline"
)

// Limits bound what Read accepts, so that hostile or broken input fails
// with an error instead of exhausting memory.
type Limits struct {
	MaxBytes  int64 // input bytes; 0: 4 GiB
	MaxEvents int   // trace events; 0: 64 Mi
	MaxDepth  int   // open B slices on one thread; 0: 4096
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = 4 << 30
	}
	if l.MaxEvents <= 0 {
		l.MaxEvents = 64 << 20
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = 4096
	}
	return l
}

// errCut ends an array-form trace cut off inside an event.
var errCut = errors.New("cut")

// ErrTooLarge is returned (wrapped) when input exceeds the Limits.
var ErrTooLarge = errors.New("chrome: input exceeds limits")

// Read decodes a Chrome JSON trace (the object form with "traceEvents" or
// the bare array form, whose closing bracket may be missing) into a
// timeline.Trace, with the default Limits.
func Read(r io.Reader) (*timeline.Trace, error) { return ReadLimited(r, Limits{}) }

// ReadLimited is Read with explicit limits. It decodes one event at a time.
//
// An array-form trace cut off inside an event, as a crash leaves one,
// gives the trace of the whole events before the cut along with an error
// wrapping io.ErrUnexpectedEOF. Any other error comes with a nil trace.
//
// Traces written by this package come back as they were written. Other
// Chrome JSON becomes CPU tracks, one per (pid, tid): B/E and X events
// become spans, 'C' events counter samples, 's'/'f' pairs flows; other
// phases are skipped. Slices left open at the end, and E events with no
// open slice, are counted in Drops.Unmatched.
func ReadLimited(r io.Reader, lim Limits) (*timeline.Trace, error) {
	lim = lim.withDefaults()
	lr := &limitReader{r: r, left: lim.MaxBytes}
	dec := json.NewDecoder(lr)
	rd := newReader(lim)
	tok, err := dec.Token()
	if err != nil {
		return nil, rd.fail(err, lr, "reading the start of the trace")
	}
	switch tok {
	case json.Delim('['):
		if err := rd.events(dec, lr, true); err == errCut {
			// What a crash leaves: keep every whole event, and say so.
			t, err := rd.build()
			if err != nil {
				return nil, err
			}
			return t, fmt.Errorf("chrome: trace cut short inside event %d: %w", rd.n, io.ErrUnexpectedEOF)
		} else if err != nil {
			return nil, err
		}
	case json.Delim('{'):
		found := false
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, rd.fail(err, lr, "reading a top-level key")
			}
			if k == "traceEvents" {
				t, err := dec.Token()
				if err != nil {
					return nil, rd.fail(err, lr, "reading traceEvents")
				}
				if t != json.Delim('[') {
					return nil, fmt.Errorf("chrome: traceEvents is not an array")
				}
				if err := rd.events(dec, lr, false); err != nil {
					return nil, err
				}
				found = true
				continue
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, rd.fail(err, lr, fmt.Sprintf("reading top-level %q", k))
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, rd.fail(err, lr, "reading the end of the trace")
		}
		if !found {
			return nil, errors.New("chrome: no traceEvents array: not a Chrome JSON trace")
		}
	default:
		return nil, fmt.Errorf("chrome: a trace starts with '{' or '[', not %v", tok)
	}
	return rd.build()
}

type limitReader struct {
	r        io.Reader
	left     int64
	exceeded bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		l.exceeded = true
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// rawEvent is one trace event as decoded; args stay raw until needed.
type rawEvent struct {
	Ph   string          `json:"ph"`
	Name text            `json:"name"`
	Pid  scalar          `json:"pid"`
	Tid  scalar          `json:"tid"`
	Ts   scalar          `json:"ts"`
	Dur  scalar          `json:"dur"`
	ID   scalar          `json:"id"`
	ID2  scalar          `json:"id2"`
	Bp   string          `json:"bp"`
	Args json.RawMessage `json:"args"`
}

type threadKey struct{ pid, tid int64 }

// rec is one B, E, X, s or f event kept for the per-thread replay.
type rec struct {
	ts   int64
	ph   byte
	name timeline.NameID
	dur  int64
	arg  uint64 // flow id, or frame
	err  uint32
}

type thread struct {
	track timeline.TrackID
	name  string // from thread_name, for threads without framescope_track
	recs  []rec
}

type reader struct {
	lim      Limits
	t        timeline.Trace
	names    map[string]timeline.NameID
	threads  map[threadKey]*thread
	keys     []threadKey // threads in first-seen order
	counters map[string]timeline.TrackID
	strIDs   map[string]int64
	nextID   timeline.TrackID
	ours     map[timeline.TrackID]bool // tracks described by framescope_track
	trackAt  map[timeline.TrackID]int  // index in t.Tracks
	n        int
	dropsOK  bool
}

func newReader(lim Limits) *reader {
	return &reader{
		lim:      lim,
		t:        timeline.Trace{Names: []string{""}},
		names:    map[string]timeline.NameID{"": 0},
		threads:  map[threadKey]*thread{},
		counters: map[string]timeline.TrackID{},
		strIDs:   map[string]int64{},
		ours:     map[timeline.TrackID]bool{},
		trackAt:  map[timeline.TrackID]int{},
	}
}

func (rd *reader) fail(err error, lr *limitReader, what string) error {
	if lr.exceeded || errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("chrome: %s: %w (more than %d bytes)", what, ErrTooLarge, rd.lim.MaxBytes)
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("chrome: %s: %w", what, err)
}

func (rd *reader) events(dec *json.Decoder, lr *limitReader, bare bool) error {
	ev := new(rawEvent) // reused: decoding one event allocates little
	for {
		if !dec.More() {
			break
		}
		*ev = rawEvent{}
		if err := dec.Decode(ev); err != nil {
			if bare && err == io.EOF {
				return nil // the array form may stop without its ']'
			}
			if bare && errors.Is(err, io.ErrUnexpectedEOF) && !lr.exceeded {
				return errCut
			}
			return rd.fail(err, lr, fmt.Sprintf("event %d", rd.n))
		}
		rd.n++
		if rd.n > rd.lim.MaxEvents {
			return fmt.Errorf("chrome: %w: more than %d events", ErrTooLarge, rd.lim.MaxEvents)
		}
		if err := rd.event(ev); err != nil {
			return fmt.Errorf("chrome: event %d (ph %q): %w", rd.n-1, ev.Ph, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		if bare && (err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)) && !lr.exceeded {
			return nil
		}
		return rd.fail(err, lr, "reading the end of traceEvents")
	}
	return nil
}

// scalar is a JSON number or string (pid, tid, id, ts, dur) kept as its
// text, in place when short, so that decoding an event does not allocate
// for each of them.
type scalar struct {
	n    int
	in   [40]byte
	long []byte
}

// UnmarshalJSON keeps the raw text; the decoder has checked it is JSON.
func (v *scalar) UnmarshalJSON(b []byte) error {
	v.long = nil
	v.n = len(b)
	if len(b) <= len(v.in) {
		copy(v.in[:], b)
	} else {
		v.long = append([]byte(nil), b...)
	}
	return nil
}

func (v *scalar) raw() []byte {
	if v.long != nil {
		return v.long
	}
	return v.in[:v.n]
}

func (v *scalar) empty() bool {
	r := v.raw()
	return len(r) == 0 || string(r) == "null"
}

// numberText returns the text of a JSON number, or of the number in a
// JSON string (some writers quote times).
func (v *scalar) numberText() []byte {
	r := v.raw()
	if len(r) >= 2 && r[0] == '"' && r[len(r)-1] == '"' {
		return r[1 : len(r)-1]
	}
	return r
}

func (v *scalar) String() string { return string(v.raw()) }

// micros reads a time in microseconds as nanoseconds.
func (v *scalar) micros() (int64, error) { return parseMicros(string(v.numberText())) }

// intValue reads a pid, tid or id: a JSON integer, or a string, which is
// given a stable number of its own.
func (rd *reader) intValue(v *scalar) (int64, error) {
	if v.empty() {
		return 0, nil
	}
	raw := v.raw()
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		if v, err := strconv.ParseInt(s, 0, 64); err == nil {
			return v, nil
		}
		id, ok := rd.strIDs[s]
		if !ok {
			id = int64(1<<40) + int64(len(rd.strIDs))
			rd.strIDs[s] = id
		}
		return id, nil
	}
	if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("bad integer %s", raw)
	}
	return int64(f), nil
}

// internBytes is intern for a name still in bytes: a name seen before
// costs no allocation.
func (rd *reader) internBytes(b []byte) timeline.NameID {
	if id, ok := rd.names[string(b)]; ok {
		return id
	}
	return rd.intern(string(b))
}

// text is a JSON string decoded without allocating when it is short and
// plain (ASCII without escapes); others go through encoding/json, which
// also turns invalid UTF-8 into U+FFFD.
type text struct {
	n    int
	in   [64]byte
	long []byte
}

func (v *text) UnmarshalJSON(b []byte) error {
	v.n, v.long = 0, nil
	if string(b) == "null" {
		return nil
	}
	if len(b) < 2 || b[0] != '"' {
		return fmt.Errorf("name %s is not a string", b)
	}
	body := b[1 : len(b)-1]
	plain := len(body) <= len(v.in)
	for _, c := range body {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		v.n = copy(v.in[:], body)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v.long = []byte(s)
	return nil
}

func (v *text) bytes() []byte {
	if v.long != nil {
		return v.long
	}
	return v.in[:v.n]
}

func (rd *reader) intern(s string) timeline.NameID {
	if id, ok := rd.names[s]; ok {
		return id
	}
	id := timeline.NameID(len(rd.t.Names))
	rd.t.Names = append(rd.t.Names, s)
	rd.names[s] = id
	return id
}

func (rd *reader) thread(pid, tid int64) *thread {
	k := threadKey{pid, tid}
	th := rd.threads[k]
	if th == nil {
		th = &thread{}
		rd.threads[k] = th
		rd.keys = append(rd.keys, k)
	}
	return th
}

// trackArgs is the args of a framescope_track event.
type trackArgs struct {
	ID     uint32 `json:"id"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Parent uint32 `json:"parent"`
	Order  int32  `json:"order"`
	Lane   int32  `json:"lane"`
	Unit   uint8  `json:"unit"`
	Device string `json:"device"`
	Family uint32 `json:"family"`
	Index  uint32 `json:"index"`
	Flags  string `json:"flags"`
	Series string `json:"series"`
}

var kinds = map[string]timeline.TrackKind{}

func init() {
	for k := timeline.TrackCPU; k <= timeline.TrackCounter; k++ {
		kinds[k.String()] = k
	}
}

func (rd *reader) event(ev *rawEvent) error {
	if len(ev.Ph) != 1 {
		return nil // not a phase we know; other tools' events pass through
	}
	pid, err := rd.intValue(&ev.Pid)
	if err != nil {
		return fmt.Errorf("pid: %w", err)
	}
	tid, err := rd.intValue(&ev.Tid)
	if err != nil {
		return fmt.Errorf("tid: %w", err)
	}
	ph := ev.Ph[0]
	switch ph {
	case 'M':
		return rd.meta(ev, pid, tid)
	case 'B', 'E', 'X', 's', 'f':
	case 'C':
		return rd.counter(ev, pid)
	default:
		return nil
	}
	r := rec{ph: ph}
	if r.ts, err = ev.Ts.micros(); err != nil {
		return fmt.Errorf("ts %s: %w", &ev.Ts, err)
	}
	switch ph {
	case 'X':
		if r.dur, err = ev.Dur.micros(); err != nil || r.dur < 0 {
			return fmt.Errorf("dur %s: %w", &ev.Dur, errTime)
		}
		if r.ts > math.MaxInt64-r.dur {
			return fmt.Errorf("ts + dur overflows")
		}
		fallthrough
	case 'B':
		r.name = rd.internBytes(ev.Name.bytes())
		if len(ev.Args) > 0 {
			var a struct {
				Frame uint64 `json:"frame"`
				ErrNs uint32 `json:"err_ns"`
			}
			if json.Unmarshal(ev.Args, &a) == nil {
				r.arg, r.err = a.Frame, a.ErrNs
			}
		}
	case 's', 'f':
		raw := &ev.ID
		if raw.empty() {
			raw = &ev.ID2
		}
		id, err := rd.intValue(raw)
		if err != nil {
			return fmt.Errorf("id: %w", err)
		}
		r.arg = uint64(id)
	}
	th := rd.thread(pid, tid)
	th.recs = append(th.recs, r)
	return nil
}

func (rd *reader) meta(ev *rawEvent, pid, tid int64) error {
	switch string(ev.Name.bytes()) {
	case "process_name":
		var a struct{ Name string }
		if json.Unmarshal(ev.Args, &a) == nil && rd.t.Process.Name == "" {
			rd.t.Process = timeline.Process{PID: int32(pid), Name: a.Name}
		}
	case "thread_name":
		var a struct{ Name string }
		if json.Unmarshal(ev.Args, &a) == nil {
			rd.thread(pid, tid).name = a.Name
		}
	case metaTrack:
		var a trackArgs
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("%s args: %w", metaTrack, err)
		}
		kind, ok := kinds[a.Kind]
		if !ok || a.ID == 0 {
			return fmt.Errorf("%s: bad track id %d or kind %q", metaTrack, a.ID, a.Kind)
		}
		if _, dup := rd.trackAt[timeline.TrackID(a.ID)]; dup {
			return fmt.Errorf("%s: track %d described twice", metaTrack, a.ID)
		}
		tr := timeline.Track{
			ID: timeline.TrackID(a.ID), Kind: kind, Name: a.Name, Parent: timeline.TrackID(a.Parent),
			Order: a.Order, Lane: a.Lane, Unit: timeline.Unit(a.Unit),
			Queue: timeline.Queue{Device: a.Device, Family: a.Family, Index: a.Index, Flags: a.Flags},
		}
		rd.trackAt[tr.ID] = len(rd.t.Tracks)
		rd.t.Tracks = append(rd.t.Tracks, tr)
		rd.ours[tr.ID] = true
		rd.nextID = max(rd.nextID, tr.ID)
		if kind == timeline.TrackCounter {
			series := a.Series
			if series == "" {
				series = a.Name
			}
			if _, dup := rd.counters[counterKey(pid, series)]; !dup {
				rd.counters[counterKey(pid, series)] = tr.ID
			}
		} else {
			th := rd.thread(pid, tid)
			if th.track != 0 && th.track != tr.ID {
				return fmt.Errorf("%s: thread %d has two tracks", metaTrack, tid)
			}
			th.track = tr.ID
		}
	case metaFrame:
		var a struct {
			ID         uint64
			Start, End int64
		}
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("%s args: %w", metaFrame, err)
		}
		rd.t.Frames = append(rd.t.Frames, timeline.Frame{ID: a.ID, Start: a.Start, End: a.End})
	case metaCalibration:
		var a struct {
			Track    uint32
			Time     int64
			ErrNs    *float64 `json:"err_ns"`
			DriftPPM *float64 `json:"drift_ppm"`
			Samples  int
		}
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("%s args: %w", metaCalibration, err)
		}
		c := timeline.Calibration{Track: timeline.TrackID(a.Track), Time: a.Time, Samples: a.Samples}
		if a.ErrNs != nil {
			c.ErrNs = *a.ErrNs
		}
		if a.DriftPPM != nil {
			c.DriftPPM = *a.DriftPPM
		}
		rd.t.Calibrations = append(rd.t.Calibrations, c)
	case metaDrops:
		var a struct {
			Zones, Unmatched, Spans, Unconverted, Evicted uint64
		}
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("%s args: %w", metaDrops, err)
		}
		rd.t.Drops = timeline.Drops{Zones: a.Zones, Unmatched: a.Unmatched, Spans: a.Spans, Unconverted: a.Unconverted, Evicted: a.Evicted}
		rd.dropsOK = true
	}
	return nil
}

// counterKey names a counter: per process, by name, as viewers see it.
func counterKey(pid int64, name string) string {
	return strconv.FormatInt(pid, 10) + "/" + name
}

func (rd *reader) counter(ev *rawEvent, pid int64) error {
	if string(ev.Name.bytes()) == dropsCounter {
		return nil // restored from framescope_drops
	}
	ts, err := ev.Ts.micros()
	if err != nil {
		return fmt.Errorf("ts %s: %w", &ev.Ts, err)
	}
	var args map[string]json.RawMessage
	if len(ev.Args) > 0 {
		if err := json.Unmarshal(ev.Args, &args); err != nil {
			return fmt.Errorf("args: %w", err)
		}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var v float64
		if json.Unmarshal(args[k], &v) != nil {
			continue // not a number: not a counter value
		}
		name := string(ev.Name.bytes())
		if k != "value" || len(args) > 1 {
			name += " " + k
		}
		ck := counterKey(pid, name)
		id, ok := rd.counters[ck]
		if !ok {
			rd.nextID++
			id = rd.nextID
			rd.trackAt[id] = len(rd.t.Tracks)
			rd.t.Tracks = append(rd.t.Tracks, timeline.Track{ID: id, Kind: timeline.TrackCounter, Name: name})
			rd.counters[ck] = id
		}
		rd.t.Samples = append(rd.t.Samples, timeline.Sample{Track: id, Time: ts, Value: v})
	}
	return nil
}

// build replays each thread's events in time order, as Perfetto does, to
// pair B with E, place X events, and bind flow ends to the innermost open
// slice.
func (rd *reader) build() (*timeline.Trace, error) {
	t := &rd.t
	type end struct {
		from, to int
	}
	flows := map[uint64]*end{}
	var flowOrder []uint64
	for _, k := range rd.keys {
		th := rd.threads[k]
		if len(th.recs) == 0 {
			continue
		}
		if th.track == 0 {
			rd.nextID++
			th.track = rd.nextID
			name := th.name
			if name == "" {
				name = "thread " + strconv.FormatInt(k.tid, 10)
			}
			t.Tracks = append(t.Tracks, timeline.Track{ID: th.track, Kind: timeline.TrackCPU, Name: name})
		}
		// Replay in time order, file order breaking ties, as Perfetto
		// sorts. An X slice ends before anything at or after its end
		// time happens; one that would overlap the X slice it starts in
		// without nesting is dropped, as Perfetto drops it.
		recs := th.recs
		slices.SortStableFunc(recs, func(a, b rec) int { return cmp64(a.ts, b.ts) })
		type open struct {
			span int
			xEnd int64 // end of an X slice; MaxInt64 for a B slice
		}
		var stack []open
		popX := func(ts int64) {
			for len(stack) > 0 && stack[len(stack)-1].xEnd <= ts {
				stack = stack[:len(stack)-1]
			}
		}
		for _, r := range recs {
			popX(r.ts)
			switch r.ph {
			case 'B', 'X':
				if len(stack) >= rd.lim.MaxDepth {
					return nil, fmt.Errorf("chrome: %w: slices nested deeper than %d", ErrTooLarge, rd.lim.MaxDepth)
				}
				o := open{span: len(t.Spans), xEnd: math.MaxInt64}
				end := r.ts
				if r.ph == 'X' {
					end = r.ts + r.dur
					if len(stack) > 0 && stack[len(stack)-1].xEnd < end {
						t.Drops.Spans++
						continue
					}
					o.xEnd = end
					if r.dur == 0 {
						// Zero-length: it ends at once, on its own.
						o.xEnd = math.MinInt64
					}
				}
				t.Spans = append(t.Spans, timeline.Span{
					Track: th.track, Name: r.name, Start: r.ts, End: end,
					Frame: r.arg, ErrNs: r.err, Depth: uint16(min(len(stack), math.MaxUint16)),
				})
				if o.xEnd != math.MinInt64 {
					stack = append(stack, o)
				}
			case 'E':
				if len(stack) == 0 || stack[len(stack)-1].xEnd != math.MaxInt64 {
					// No B open, or an X slice open inside it.
					t.Drops.Unmatched++
					continue
				}
				t.Spans[stack[len(stack)-1].span].End = r.ts
				stack = stack[:len(stack)-1]
			case 's', 'f':
				if len(stack) == 0 {
					continue
				}
				e := flows[r.arg]
				if e == nil {
					e = &end{-1, -1}
					flows[r.arg] = e
					flowOrder = append(flowOrder, r.arg)
				}
				if r.ph == 's' {
					e.from = stack[len(stack)-1].span
				} else {
					e.to = stack[len(stack)-1].span
				}
			}
		}
		// B slices never ended: lost, and counted. Every later span of
		// the thread began inside them, so is that much less deep.
		var lost []int
		for _, o := range stack {
			if o.xEnd == math.MaxInt64 {
				t.Spans[o.span].End = t.Spans[o.span].Start - 1
				t.Drops.Unmatched++
				lost = append(lost, o.span)
			}
		}
		for k, i := range lost {
			for j := i + 1; j < len(t.Spans); j++ {
				if k+1 < len(lost) && j == lost[k+1] {
					break
				}
				t.Spans[j].Depth -= uint16(k + 1)
			}
		}
		th.recs = nil
	}
	// Remove the unended spans, renumbering flow ends.
	remap := make([]int, len(t.Spans))
	kept := t.Spans[:0]
	for i, s := range t.Spans {
		if s.End < s.Start {
			remap[i] = -1
			continue
		}
		remap[i] = len(kept)
		kept = append(kept, s)
	}
	t.Spans = kept
	for _, id := range flowOrder {
		e := flows[id]
		if e.from < 0 || e.to < 0 || e.from == e.to || remap[e.from] < 0 || remap[e.to] < 0 {
			continue
		}
		t.Flows = append(t.Flows, timeline.Flow{From: remap[e.from], To: remap[e.to]})
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("chrome: the trace breaks Framescope's model: %w", err)
	}
	return t, nil
}
