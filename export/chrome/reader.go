package chrome

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"

	"github.com/framescope/framescope/timeline"
)

// Limits bound what Read accepts, so that hostile or broken input fails
// with an error instead of exhausting memory. A zero or negative field
// takes its default; one past its bound, the bound.
type Limits struct {
	MaxBytes  int64 // input bytes; 0: 4 GiB, the bound
	MaxEvents int   // trace events; 0: 64 Mi; at most 1 Gi
	MaxDepth  int   // open B slices on one thread; 0: 4096; at most 65535 (Span.Depth is 16 bits)
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 || l.MaxBytes > 4<<30 {
		l.MaxBytes = 4 << 30
	}
	if l.MaxEvents <= 0 {
		l.MaxEvents = 64 << 20
	}
	l.MaxEvents = min(l.MaxEvents, 1<<30)
	if l.MaxDepth <= 0 {
		l.MaxDepth = 4096
	}
	l.MaxDepth = min(l.MaxDepth, math.MaxUint16)
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
// open slice, are counted in Drops.Unended.
//
// The threads and counters that Write derives from the frames' limits
// are left out: they are not the trace's, and Write makes them again.
//
// Drops come from the framescope_drops record Writer.Close writes. A trace
// whose writer never closed has only the running "framescope dropped"
// counter; what it counts beyond the record is added to Drops.Spans.
func ReadLimited(r io.Reader, lim Limits) (*timeline.Trace, error) {
	lim = lim.withDefaults()
	lr := &limitReader{r: r, left: lim.MaxBytes}
	dec := json.NewDecoder(&squeezer{r: lr})
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

type threadKey struct{ pid, tid int64 }

// rec is one B, E, X, s or f event kept for the per-thread replay.
type rec struct {
	ts   int64
	dur  int64
	arg  uint64 // flow id, or frame
	name timeline.NameID
	err  uint32
	work uint32 // the slice's work: reader.works[work-1]; 0: none
	ph   byte
	rev  bool // a flow end of a reversedFlow
}

// recList is a list of rec in chunks of recChunk: it grows without
// copying, so it costs 40 bytes a rec, where a slice grown by append
// costs several times that in copies along the way.
type recList struct {
	chunks [][]rec
	n      int
}

const recChunk = 4096

func (l *recList) add(r rec) {
	if len(l.chunks) == 0 || len(l.chunks[len(l.chunks)-1]) == recChunk {
		c := []rec(nil)
		if len(l.chunks) > 0 {
			c = make([]rec, 0, recChunk)
		}
		l.chunks = append(l.chunks, c)
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, r) // the first chunk grows as needed up to recChunk
	l.n++
}

func (l *recList) at(i int32) *rec { return &l.chunks[i/recChunk][i%recChunk] }

type thread struct {
	track timeline.TrackID
	name  string // from thread_name, for threads without framescope_track
	recs  recList
	// framesList: the writer's frames thread, whose slices are frames,
	// which the framescope_frame events hold.
	framesList bool
	// derived: a thread of what Write derives from the frames' limits.
	derived bool
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
	nspans   int // B and X events: the most spans the trace can have
	dropsOK  bool
	// dropsCounter is the largest value of the "framescope dropped"
	// counter; dropsRecorded what the last framescope_drops record
	// counts, flows, samples and work the writer refused included.
	dropsCounter, dropsRecorded uint64
	// works are the work of the slices that have it (rec.work).
	works []*timeline.Work
	// derived are the counters Write derives from the frames' limits,
	// by counterKey.
	derived map[string]bool
	args    sliceArgs // scratch for the args of B and X events
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
	if lr.exceeded {
		return fmt.Errorf("chrome: %s: %w (more than %d bytes)", what, ErrTooLarge, rd.lim.MaxBytes)
	}
	if errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("chrome: %s: %w", what, err)
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("chrome: %s: %w", what, plainJSON(err))
}

// plainJSON says what encoding/json's type errors mean in the terms of
// the input, not of the Go types it was decoded into: "a JSON number, not
// an object" rather than "cannot unmarshal number into Go value of type
// chrome.rawEvent".
func plainJSON(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	want := "something else"
	if te.Type != nil {
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			want = "an integer in range"
		case reflect.Float32, reflect.Float64:
			want = "a number"
		case reflect.Bool:
			want = "true or false"
		case reflect.Struct, reflect.Map:
			want = "an object"
		case reflect.Slice, reflect.Array:
			want = "an array"
		}
	}
	if te.Field != "" {
		return fmt.Errorf("%q is a JSON %s, not %s", te.Field, te.Value, want)
	}
	return fmt.Errorf("a JSON %s, not %s", te.Value, want)
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
			return fmt.Errorf("%w: more than %d events (Limits.MaxEvents)", ErrTooLarge, rd.lim.MaxEvents)
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
			a := &rd.args
			// Args of the wrong type leave the frame and error bound
			// unread, as other tools' args may; work args are checked
			// on their own.
			if a.decode(ev.Args) == nil {
				r.arg, r.err = a.Frame, a.ErrNs
			}
			if a.hasWork() {
				wk, err := a.work()
				if err != nil {
					return fmt.Errorf("args: %w", err)
				}
				rd.works = append(rd.works, wk)
				r.work = uint32(len(rd.works))
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
		r.rev = string(ev.Name.bytes()) == reversedFlow
	}
	th := rd.thread(pid, tid)
	th.recs.add(r)
	if ph == 'B' || ph == 'X' {
		rd.nspans++
	}
	return nil
}
