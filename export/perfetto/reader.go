package perfetto

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/framescope/framescope/timeline"
	"google.golang.org/protobuf/encoding/protowire"
)

// Limits on what Read accepts, so that hostile input cannot make it use
// more than a small multiple of its own size.
const (
	maxSequences = 1 << 16
	maxTracks    = 1 << 20
	maxDepth     = math.MaxUint16
)

// errCorrupt wraps every error about malformed input.
var errCorrupt = errors.New("perfetto: corrupt trace")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// Read reads a Perfetto trace into a timeline. It reads back everything
// Writer writes: the names, the tracks with their kinds, queues, lanes,
// units and order, the spans with their frames and error bounds, flows,
// frames, counter samples, calibrations and drops. Tracks and slices of
// other writers come through as CPU and counter tracks, as far as this
// package's subset of the format allows.
//
// Spans that began but never ended (a trace cut short) are left out and
// counted in Drops.Unmatched. On input that ends inside a packet, Read
// returns what came before along with an error wrapping
// io.ErrUnexpectedEOF; on malformed input, an error saying what and where.
func Read(r io.Reader) (*timeline.Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	rd := newReader()
	err = rd.parse(data)
	t, ferr := rd.finish()
	if err == nil {
		err = ferr
	}
	return t, err
}

// rseq is the state of one packet sequence.
type rseq struct {
	names, cats, anns map[uint64]string
	defaultClock      uint32
	defaultTrack      uint64
	incClock          uint32 // the sequence's incremental clock, 0 = none
	incLast           int64
}

// rtrack is what the reader knows of one track UUID.
type rtrack struct {
	role      string // a framescope kind, or "" for a plain track
	id        timeline.TrackID
	kind      timeline.TrackKind
	field     int // drops and calibration counters: which one
	of        timeline.TrackID
	events    []rev // its slice begins and ends, in file order
	lastFrame uint64
	lastErr   uint32
}

// rev is a slice begin or end, kept until the end of the input: slices
// are matched up in time order per track, as the trace processor does,
// because a later batch may hold the outer slice of an earlier one.
type rev struct {
	ts    int64
	begin bool
	args  uint8 // which of frame, err_ns, queue (1<<ann-1) it carried
	name  timeline.NameID
	frame uint64
	errNs uint32
}

// evRef names one rev.
type evRef struct {
	track *rtrack
	i     int32
}

type reader struct {
	t         *timeline.Trace
	nameIDs   map[string]timeline.NameID
	seqs      map[uint32]*rseq
	tracks    map[uint64]*rtrack
	nextID    timeline.TrackID
	order     []*rtrack // tracks in the order described
	ids       map[timeline.TrackID]bool
	flowFrom  map[uint64]evRef
	flowTo    map[uint64]evRef
	nevents   int
	calib     map[[2]int64]int // (track, time) -> index in Calibrations
	bootMinus int64            // BOOTTIME - MONOTONIC from the last snapshot
	unmatched uint64
}

func newReader() *reader {
	return &reader{
		t:        &timeline.Trace{Names: []string{""}},
		nameIDs:  map[string]timeline.NameID{"": 0},
		seqs:     map[uint32]*rseq{},
		tracks:   map[uint64]*rtrack{},
		nextID:   1 << 31,
		flowFrom: map[uint64]evRef{},
		flowTo:   map[uint64]evRef{},
		calib:    map[[2]int64]int{},
		ids:      map[timeline.TrackID]bool{},
	}
}

// parse reads the packets of a Trace message.
func (rd *reader) parse(data []byte) error {
	off := 0
	for off < len(data) {
		num, typ, n := protowire.ConsumeTag(data[off:])
		if n < 0 {
			return rd.cut(off, data, "packet tag")
		}
		if num != fTracePacket || typ != protowire.BytesType {
			m, err := skip(typ, data[off+n:])
			if err != nil {
				return rd.cut(off, data, "field %d at byte %d", num, off)
			}
			off += n + m
			continue
		}
		body, m := protowire.ConsumeBytes(data[off+n:])
		if m < 0 {
			return rd.cut(off, data, "packet at byte %d", off)
		}
		if err := rd.packet(body); err != nil {
			return fmt.Errorf("%w (packet at byte %d)", err, off)
		}
		off += n + m
	}
	return nil
}

// cut reports a packet that does not fit in the input: a truncated trace
// when the input ends inside it, else corruption.
func (rd *reader) cut(off int, data []byte, format string, args ...any) error {
	if len(data)-off < 16 || truncatedAt(data[off:]) {
		return fmt.Errorf("perfetto: trace cut short at byte %d: %w", off, io.ErrUnexpectedEOF)
	}
	return corrupt(format, args...)
}

// truncatedAt reports whether b starts with a well-formed packet header
// whose body runs past the end of b.
func truncatedAt(b []byte) bool {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != fTracePacket || typ != protowire.BytesType {
		return false
	}
	l, m := protowire.ConsumeVarint(b[n:])
	return m < 0 || l > uint64(len(b)-n-m)
}

// skip returns the length of a field value of type typ at the start of b.
// Groups, which Perfetto does not use, are refused.
func skip(typ protowire.Type, b []byte) (int, error) {
	if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
		return 0, corrupt("group field")
	}
	n := protowire.ConsumeFieldValue(0, typ, b)
	if n < 0 {
		return 0, corrupt("bad field: %v", protowire.ParseError(n))
	}
	return n, nil
}

// fields calls fn for each field of a message, with the varint or fixed
// value in v and the bytes of a length-delimited field in b.
func fields(msg []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return corrupt("bad tag: %v", protowire.ParseError(n))
		}
		msg = msg[n:]
		var v uint64
		var b []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(msg)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(msg)
		case protowire.Fixed32Type:
			var v32 uint32
			v32, n = protowire.ConsumeFixed32(msg)
			v = uint64(v32)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(msg)
		default:
			return corrupt("field %d has unsupported wire type %d", num, typ)
		}
		if n < 0 {
			return corrupt("field %d: %v", num, protowire.ParseError(n))
		}
		msg = msg[n:]
		if err := fn(num, typ, v, b); err != nil {
			return err
		}
	}
	return nil
}

// pkt is the fields of one TracePacket that the reader uses.
type pkt struct {
	ts                           uint64
	hasTS                        bool
	clock                        uint32
	seq                          uint32
	flags                        uint64
	interned, defaults, snapshot []byte
	event, descriptor            []byte
}

func (rd *reader) packet(body []byte) error {
	var p pkt
	err := fields(body, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch num {
		case fPktTimestamp:
			p.ts, p.hasTS = v, true
		case fPktTimestampClockID:
			p.clock = uint32(v)
		case fPktSequenceID:
			p.seq = uint32(v)
		case fPktSequenceFlags:
			p.flags = v
		case fPktInternedData:
			p.interned = b
		case fPktDefaults:
			p.defaults = b
		case fPktClockSnapshot:
			p.snapshot = b
		case fPktTrackEvent:
			p.event = b
		case fPktTrackDescriptor:
			p.descriptor = b
		}
		return nil
	})
	if err != nil {
		return err
	}
	seq, err := rd.sequence(p.seq, p.flags&seqIncrementalStateCleared != 0)
	if err != nil {
		return err
	}
	if p.snapshot != nil {
		if err := rd.snapshot(seq, p.snapshot); err != nil {
			return err
		}
	}
	if p.defaults != nil {
		if err := rd.defaults(seq, p.defaults); err != nil {
			return err
		}
	}
	if p.interned != nil {
		if err := rd.intern(seq, p.interned); err != nil {
			return err
		}
	}
	if p.descriptor != nil {
		if err := rd.descriptor(p.descriptor); err != nil {
			return err
		}
	}
	if p.event == nil || !p.hasTS {
		return nil
	}
	ts, err := rd.time(seq, p)
	if err != nil {
		return err
	}
	return rd.event(seq, ts, p.event)
}

// sequence returns the state of sequence id, cleared when asked.
func (rd *reader) sequence(id uint32, clear bool) (*rseq, error) {
	s := rd.seqs[id]
	if s == nil {
		if len(rd.seqs) >= maxSequences {
			return nil, corrupt("more than %d packet sequences", maxSequences)
		}
		s = &rseq{}
		rd.seqs[id] = s
		clear = true
	}
	if clear {
		s.names, s.cats, s.anns = map[uint64]string{}, map[uint64]string{}, map[uint64]string{}
		s.defaultClock, s.defaultTrack = 0, 0
	}
	return s, nil
}

// time resolves a packet's timestamp to MONOTONIC ns.
func (rd *reader) time(s *rseq, p pkt) (int64, error) {
	clock := p.clock
	if clock == 0 {
		clock = s.defaultClock
	}
	if clock == 0 {
		clock = clockBoottime
	}
	var ts int64
	switch {
	case clock == s.incClock && clock != 0:
		ts = s.incLast + int64(p.ts)
		s.incLast = ts
	case clock == clockMonotonic:
		ts = int64(p.ts)
	case clock == clockBoottime:
		ts = int64(p.ts) - rd.bootMinus
	default:
		return 0, corrupt("timestamp on clock %d, which this reader cannot convert", clock)
	}
	if ts < 0 {
		return 0, corrupt("negative timestamp %d", ts)
	}
	return ts, nil
}

func (rd *reader) snapshot(s *rseq, b []byte) error {
	var mono, boot int64
	var haveMono, haveBoot bool
	return errors.Join(fields(b, func(num protowire.Number, typ protowire.Type, v uint64, c []byte) error {
		if num != fSnapClocks || typ != protowire.BytesType {
			return nil
		}
		var id uint32
		var ts uint64
		var inc bool
		if err := fields(c, func(num protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
			switch num {
			case fClockID:
				id = uint32(v)
			case fClockTimestamp:
				ts = v
			case fClockIncremental:
				inc = v != 0
			}
			return nil
		}); err != nil {
			return err
		}
		if ts > math.MaxInt64 {
			return corrupt("clock %d timestamp out of range", id)
		}
		switch {
		case inc:
			s.incClock, s.incLast = id, int64(ts)
		case id == clockMonotonic:
			mono, haveMono = int64(ts), true
		case id == clockBoottime:
			boot, haveBoot = int64(ts), true
		}
		if haveMono && haveBoot {
			rd.bootMinus = boot - mono
		}
		return nil
	}))
}

// defaults takes a sequence's TracePacketDefaults; each one replaces the
// last whole.
func (rd *reader) defaults(s *rseq, b []byte) error {
	s.defaultClock, s.defaultTrack = 0, 0
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, c []byte) error {
		switch num {
		case fDefTimestampClockID:
			s.defaultClock = uint32(v)
		case fDefTrackEventDefaults:
			return fields(c, func(num protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				if num == fTETrackUuid {
					s.defaultTrack = v
				}
				return nil
			})
		}
		return nil
	})
}

func (rd *reader) intern(s *rseq, b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, _ uint64, c []byte) error {
		var m map[uint64]string
		switch num {
		case fInternCategories:
			m = s.cats
		case fInternEventNames:
			m = s.names
		case fInternAnnotationNames:
			m = s.anns
		default:
			return nil
		}
		var iid uint64
		var name string
		if err := fields(c, func(num protowire.Number, _ protowire.Type, v uint64, d []byte) error {
			switch num {
			case fInternIID:
				iid = v
			case fInternName:
				name = string(d)
			}
			return nil
		}); err != nil {
			return err
		}
		m[iid] = name
		return nil
	})
}

// name returns the NameID of a name, adding it to the table.
func (rd *reader) name(s string) timeline.NameID {
	if id, ok := rd.nameIDs[s]; ok {
		return id
	}
	id := timeline.NameID(len(rd.t.Names))
	rd.t.Names = append(rd.t.Names, s)
	rd.nameIDs[s] = id
	return id
}

func (rd *reader) descriptor(b []byte) error {
	var uuid, parent uint64
	var name, desc string
	var process, counter []byte
	var isCounter bool
	if err := fields(b, func(num protowire.Number, _ protowire.Type, v uint64, c []byte) error {
		switch num {
		case fTDUuid:
			uuid = v
		case fTDParentUuid:
			parent = v
		case fTDName:
			name = string(c)
		case fTDDescription:
			desc = string(c)
		case fTDProcess:
			process = c
		case fTDCounter:
			counter, isCounter = c, true
		}
		return nil
	}); err != nil {
		return err
	}
	if process != nil {
		return fields(process, func(num protowire.Number, _ protowire.Type, v uint64, c []byte) error {
			switch num {
			case fProcPid:
				rd.t.Process.PID = int32(v)
			case fProcName:
				rd.t.Process.Name = string(c)
			}
			return nil
		})
	}
	if _, dup := rd.tracks[uuid]; dup || uuid == 0 {
		return nil // described before: the first description holds
	}
	if len(rd.tracks) >= maxTracks {
		return corrupt("more than %d tracks", maxTracks)
	}
	rt := &rtrack{}
	attrs, ours := parseDescription(desc)
	if ours {
		rt.role = attrs["kind"]
	}
	switch rt.role {
	case "cpu", "gpu-queue", "gpu-lane", "frames", "counter":
		tr, err := trackFromAttrs(rt.role, name, attrs)
		if err != nil {
			return err
		}
		if rd.ids[tr.ID] {
			return corrupt("track id %d described twice", tr.ID)
		}
		rd.ids[tr.ID] = true
		rd.t.Tracks = append(rd.t.Tracks, tr)
		rt.id, rt.kind = tr.ID, tr.Kind
	case "drops":
		rt.field = slices.Index(dropFields[:], attrs["field"])
	case "calibration":
		of, err1 := strconv.ParseUint(attrs["of"], 10, 32)
		f, err2 := strconv.Atoi(attrs["field"])
		if err1 != nil || err2 != nil || f < 0 || f >= len(calibFields) {
			return corrupt("bad calibration track %q", desc)
		}
		rt.of, rt.field = timeline.TrackID(of), f
	case "frames-list", "dropped", "gpu-group":
	default:
		// Another writer's track: a CPU or counter track of its own.
		rt.role = ""
		kind := timeline.TrackCPU
		if isCounter {
			kind = timeline.TrackCounter
		}
		for rd.ids[rd.nextID] {
			rd.nextID++
		}
		tr := timeline.Track{ID: rd.nextID, Kind: kind, Name: name}
		rd.ids[tr.ID] = true
		if isCounter {
			tr.Unit = unitFromCounter(counter)
		}
		rd.t.Tracks = append(rd.t.Tracks, tr)
		rt.id, rt.kind = tr.ID, tr.Kind
	}
	_ = parent
	rd.tracks[uuid] = rt
	rd.order = append(rd.order, rt)
	return nil
}

func unitFromCounter(c []byte) timeline.Unit {
	var u timeline.Unit
	fields(c, func(num protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
		if num == fCounterUnit {
			switch v {
			case unitTimeNs:
				u = timeline.UnitNs
			case unitCount:
				u = timeline.UnitCount
			case unitSizeBytes:
				u = timeline.UnitBytes
			}
		}
		return nil
	})
	return u
}

// trackFromAttrs rebuilds a timeline track from its description.
func trackFromAttrs(kind, name string, a map[string]string) (timeline.Track, error) {
	t := timeline.Track{Name: name}
	switch kind {
	case "cpu":
		t.Kind = timeline.TrackCPU
	case "gpu-queue":
		t.Kind = timeline.TrackGPUQueue
	case "gpu-lane":
		t.Kind = timeline.TrackGPULane
	case "frames":
		t.Kind = timeline.TrackFrames
	case "counter":
		t.Kind = timeline.TrackCounter
	}
	num := func(key string, bits int) (int64, error) {
		s, ok := a[key]
		if !ok {
			return 0, nil
		}
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return 0, corrupt("track %q: bad %s: %v", name, key, err)
		}
		return v, nil
	}
	unum := func(key string) (uint32, error) {
		s, ok := a[key]
		if !ok {
			return 0, nil
		}
		v, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return 0, corrupt("track %q: bad %s: %v", name, key, err)
		}
		return uint32(v), nil
	}
	id, err1 := unum("id")
	parent, err2 := unum("parent")
	order, err3 := num("order", 32)
	lane, err4 := num("lane", 32)
	family, err5 := unum("family")
	index, err6 := unum("index")
	unit, err7 := num("unit", 8)
	if err := errors.Join(err1, err2, err3, err4, err5, err6, err7); err != nil {
		return t, err
	}
	if id == 0 {
		return t, corrupt("track %q has no id", name)
	}
	t.ID, t.Parent, t.Order, t.Lane = timeline.TrackID(id), timeline.TrackID(parent), int32(order), int32(lane)
	t.Unit = timeline.Unit(unit)
	if t.Kind == timeline.TrackGPUQueue || t.Kind == timeline.TrackGPULane {
		t.Queue = timeline.Queue{Device: a["device"], Family: family, Index: index, Flags: a["flags"]}
	}
	return t, nil
}

// tevent is the fields of one TrackEvent that the reader uses.
type tevent struct {
	typ            uint64
	track          uint64
	hasTrack       bool
	nameIID        uint64
	name           string
	hasName        bool
	value          float64
	frame          uint64
	errNs          uint32
	hasFrame       bool
	hasErr         bool
	args           uint8 // as rev.args
	flows, termFlo []uint64
}

func (rd *reader) event(s *rseq, ts int64, b []byte) error {
	var e tevent
	if err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, c []byte) error {
		switch num {
		case fTEType:
			e.typ = v
		case fTETrackUuid:
			e.track, e.hasTrack = v, true
		case fTENameIID:
			e.nameIID = v
		case fTEName:
			e.name, e.hasName = string(c), true
		case fTEDoubleCounter:
			e.value = math.Float64frombits(v)
		case fTEIntCounter:
			e.value = float64(int64(v))
		case fTEFlowIDs:
			e.flows = append(e.flows, v)
		case fTETermFlowIDs:
			e.termFlo = append(e.termFlo, v)
		case fTEAnnotations:
			return rd.annotation(s, &e, c)
		}
		return nil
	}); err != nil {
		return err
	}
	if !e.hasTrack {
		e.track = s.defaultTrack
	}
	rt := rd.tracks[e.track]
	if rt == nil {
		rd.unmatched++ // an event on a track never described
		return nil
	}
	switch e.typ {
	case typeSliceBegin, typeInstant:
		if rt.role == "dropped" {
			return nil
		}
		if err := rd.begin(s, rt, ts, &e); err != nil {
			return err
		}
		if e.typ == typeInstant {
			return rd.end(rt, ts)
		}
	case typeSliceEnd:
		return rd.end(rt, ts)
	case typeCounter:
		rd.counter(rt, ts, e.value)
	}
	return nil
}

func (rd *reader) annotation(s *rseq, e *tevent, b []byte) error {
	var name string
	var v uint64
	var isInt, isString bool
	err := fields(b, func(num protowire.Number, _ protowire.Type, x uint64, c []byte) error {
		switch num {
		case fDANameIID:
			name = s.anns[x]
		case fDAName:
			name = string(c)
		case fDAUint, fDAInt:
			v, isInt = x, true
		case fDAString:
			isString = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case isInt && name == annotationNames[annFrame]:
		e.frame, e.hasFrame = v, true
		e.args |= 1 << (annFrame - 1)
	case isInt && name == annotationNames[annErrNs]:
		e.errNs, e.hasErr = uint32(min(v, math.MaxUint32)), true
		e.args |= 1 << (annErrNs - 1)
	case isString && name == annotationNames[annQueue]:
		// The track's description holds the queue.
		e.args |= 1 << (annQueue - 1)
	}
	return nil
}

func (rd *reader) begin(s *rseq, rt *rtrack, ts int64, e *tevent) error {
	if e.hasFrame {
		rt.lastFrame = e.frame
	}
	if e.hasErr {
		rt.lastErr = e.errNs
	}
	name := e.name
	if !e.hasName {
		name = s.names[e.nameIID]
	}
	ref := evRef{rt, int32(len(rt.events))}
	rt.events = append(rt.events, rev{ts: ts, begin: true, args: e.args, name: rd.name(name), frame: rt.lastFrame, errNs: rt.lastErr})
	rd.nevents++
	for _, f := range e.flows {
		if f&reversedFlow != 0 {
			rd.flowTo[f] = ref
		} else {
			rd.flowFrom[f] = ref
		}
	}
	for _, f := range e.termFlo {
		if f&reversedFlow != 0 {
			rd.flowFrom[f] = ref
		} else {
			rd.flowTo[f] = ref
		}
	}
	return nil
}

func (rd *reader) end(rt *rtrack, ts int64) error {
	rt.events = append(rt.events, rev{ts: ts})
	rd.nevents++
	return nil
}

func (rd *reader) counter(rt *rtrack, ts int64, v float64) {
	switch rt.role {
	case "drops":
		if rt.field < 0 {
			return
		}
		n := uint64(0)
		if v > 0 && v < math.MaxUint64 {
			n = uint64(v)
		}
		if c, ok := timeline.DropCauseOf(dropFields[rt.field]); ok {
			*rd.t.Drops.Count(c) = n
		}
	case "calibration":
		key := [2]int64{int64(rt.of), ts}
		i, ok := rd.calib[key]
		if !ok {
			i = len(rd.t.Calibrations)
			rd.calib[key] = i
			rd.t.Calibrations = append(rd.t.Calibrations, timeline.Calibration{Track: rt.of, Time: ts})
		}
		c := &rd.t.Calibrations[i]
		switch rt.field {
		case 0:
			c.ErrNs = v
		case 1:
			c.DriftPPM = v
		case 2:
			c.Samples = int(v)
		}
	default:
		if rt.kind == timeline.TrackCounter {
			rd.t.Samples = append(rd.t.Samples, timeline.Sample{Track: rt.id, Time: ts, Value: v})
		}
	}
}

// finish matches slice begins and ends in time order per track, drops
// spans that never ended, and resolves flows.
func (rd *reader) finish() (*timeline.Trace, error) {
	t := rd.t
	spanOf := map[evRef]int{}
	var stack []int
	var parent []int // each span's enclosing span, -1 for none
	for _, rt := range rd.order {
		if len(rt.events) == 0 {
			continue
		}
		// Stable: events at one time keep their file order, which the
		// writer chose to nest them right.
		idx := make([]int32, len(rt.events))
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortStableFunc(idx, func(a, b int32) int {
			return cmp.Compare(rt.events[a].ts, rt.events[b].ts)
		})
		stack = stack[:0]
		for _, i := range idx {
			ev := rt.events[i]
			if ev.begin {
				if len(stack) >= maxDepth {
					return t, corrupt("slices nested deeper than %d", maxDepth)
				}
				spanOf[evRef{rt, i}] = len(t.Spans)
				if len(stack) > 0 {
					parent = append(parent, stack[len(stack)-1])
				} else {
					parent = append(parent, -1)
				}
				t.Spans = append(t.Spans, timeline.Span{Track: rt.id, Name: ev.name, Start: ev.ts, End: -1,
					Frame: ev.frame, ErrNs: ev.errNs, Depth: uint16(len(stack))})
				stack = append(stack, len(t.Spans)-1)
				continue
			}
			if len(stack) == 0 {
				rd.unmatched++
				continue
			}
			sp := &t.Spans[stack[len(stack)-1]]
			stack = stack[:len(stack)-1]
			sp.End = ev.ts
			if rt.kind == timeline.TrackFrames || rt.role == "frames-list" {
				t.Frames = append(t.Frames, timeline.Frame{ID: sp.Frame, Start: sp.Start, End: sp.End})
			}
		}
		rt.events = nil
	}
	// A trace cut short leaves parents that never ended: they are dropped,
	// so their children's depth counts only the ancestors that remain.
	for i := range t.Spans {
		if t.Spans[i].End < 0 {
			continue
		}
		d := 0
		for p := parent[i]; p >= 0; p = parent[p] {
			if t.Spans[p].End >= 0 {
				d++
			}
		}
		t.Spans[i].Depth = uint16(min(d, maxDepth))
	}
	// Keep the spans that ended and are not the writer's own frames.
	remap := make([]int, len(t.Spans))
	kept := t.Spans[:0]
	for i, s := range t.Spans {
		remap[i] = -1
		if s.End < 0 {
			rd.unmatched++
			continue
		}
		if s.Track == 0 {
			continue
		}
		remap[i] = len(kept)
		kept = append(kept, s)
	}
	t.Spans = kept
	ids := make([]uint64, 0, len(rd.flowFrom))
	for id := range rd.flowFrom {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		to, ok := rd.flowTo[id]
		if !ok {
			continue
		}
		from, ok1 := spanOf[rd.flowFrom[id]]
		into, ok2 := spanOf[to]
		if ok1 && ok2 && remap[from] >= 0 && remap[into] >= 0 {
			t.Flows = append(t.Flows, timeline.Flow{From: remap[from], To: remap[into]})
		}
	}
	t.Drops.Unmatched += rd.unmatched
	return t, nil
}
