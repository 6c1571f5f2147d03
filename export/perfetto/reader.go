package perfetto

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
	"google.golang.org/protobuf/encoding/protowire"
)

// Limits on what Read accepts besides [Limits]. A packet is held whole
// while it is read: MaxPacket bounds it (Framescope's own are a few
// hundred bytes).
const (
	maxSequences = 1 << 16
	maxTracks    = 1 << 20
	MaxPacket    = 64 << 20
)

// Limits bound what ReadLimited accepts, so that hostile or broken input
// fails with an error naming the limit instead of exhausting memory or
// time. A zero field takes its default; a field past its bound, the
// bound.
type Limits struct {
	// MaxBytes bounds the input, counted as it is read (default and
	// bound 4 GiB). Read holds at most one packet of it at a time.
	MaxBytes int64
	// MaxSpans bounds the slice begins (spans, ended or not, and
	// instants; default 64 Mi, bound 1 Gi).
	MaxSpans int
	// MaxDepth bounds how deep slices nest on one track (default and
	// bound 65535, as Span.Depth is 16 bits).
	MaxDepth int
}

// Defaults and bounds of Limits.
const (
	defaultMaxBytes = 4 << 30
	defaultMaxSpans = 64 << 20
	maxMaxSpans     = 1 << 30
	defaultMaxDepth = math.MaxUint16
)

func (l Limits) clamp() Limits {
	if l.MaxBytes <= 0 || l.MaxBytes > defaultMaxBytes {
		l.MaxBytes = defaultMaxBytes
	}
	if l.MaxSpans <= 0 {
		l.MaxSpans = defaultMaxSpans
	}
	l.MaxSpans = min(l.MaxSpans, maxMaxSpans)
	if l.MaxDepth <= 0 || l.MaxDepth > defaultMaxDepth {
		l.MaxDepth = defaultMaxDepth
	}
	return l
}

// ErrTooLarge is returned (wrapped) when the input exceeds its Limits.
var ErrTooLarge = errors.New("perfetto: input exceeds limits")

// errCorrupt wraps every error about malformed input.
var errCorrupt = errors.New("perfetto: corrupt trace")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// Read reads a Perfetto trace into a timeline, with the default Limits.
// It reads back everything Writer writes: the names, the tracks with
// their kinds, queues, lanes, units and order, the spans with their
// frames, error bounds and GPU work, flows, frames, counter samples,
// calibrations and drops; what the Writer derives from them (work
// counters, render stages and GPU counters) it leaves out. Tracks and
// slices of other writers come through as CPU and counter tracks, as far
// as this package's subset of the format allows.
//
// A trace cut short (a writer killed mid-write, a full disk) reads back
// up to its last whole batch, or, for a trace that does not mark its
// batches (an older Framescope's, another program's), its last whole
// packet: Read returns it along with a *CutError (which wraps
// io.ErrUnexpectedEOF) saying where the trace was cut and how much of it
// is not read. Spans that began but never ended in what is read back are
// left out and counted in Drops.Unended. On malformed input, Read
// returns an error saying what and where.
// A trace that would break the timeline's model (see
// [timeline.Trace.Validate]: a track its own parent, a lane without a
// queue, a frame 0, a calibration of no queue) is refused with an error
// saying why.
//
// Read streams: it holds one packet of the input at a time, and what it
// builds, in time and memory linear in the input: at most 200 bytes
// allocated a slice (its begin and end events, then its Span and its
// checks), 200 more for a slice with GPU work (its timeline.Work), and
// 200 a distinct name, whatever the depth.
func Read(r io.Reader) (*timeline.Trace, error) { return ReadLimited(r, Limits{}) }

// ReadLimited is Read with explicit limits.
func ReadLimited(r io.Reader, lim Limits) (*timeline.Trace, error) {
	rd := newReader()
	rd.lim = lim.clamp()
	err := rd.parse(bufio.NewReaderSize(r, 64<<10))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	cut := rd.cutShort(err)
	if cut != nil && cut.Marked {
		rd.rollback()
	}
	t, err := rd.finish()
	if err != nil {
		return nil, err
	}
	if cut != nil {
		cut.Frame = lastFrame(t)
		return t, cut
	}
	return t, nil
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
	events    revs // its slice begins and ends, in file order
	lastFrame uint64
	lastErr   uint32
	epoch     uint64 // the reader's epoch when events were last added
	kept      int    // the events it had at the start of that epoch
}

// rev is a slice begin or end, kept until the end of the input: slices
// are matched up in time order per track, as the trace processor does,
// because a later batch may hold the outer slice of an earlier one.
type rev struct {
	ts    int64
	begin bool
	flow  bool  // a flow ends on it (a key of flowFrom or flowTo)
	args  uint8 // which of frame, err_ns, queue (1<<ann-1) it carried
	name  timeline.NameID
	frame uint64
	errNs uint32
	work  uint32 // 1 + its index in reader.works; 0: none
}

// revs is a list of rev in chunks of revChunk: it grows without copying,
// so it costs 32 bytes a rev, where a slice grown by append costs several
// times that in copies along the way.
type revs struct {
	chunks [][]rev
	n      int
}

const revChunk = 4096

func (l *revs) add(r rev) {
	if len(l.chunks) == 0 || len(l.chunks[len(l.chunks)-1]) == revChunk {
		c := []rev(nil)
		if len(l.chunks) > 0 {
			c = make([]rev, 0, revChunk)
		}
		l.chunks = append(l.chunks, c)
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, r) // the first chunk grows as needed up to revChunk
	l.n++
}

func (l *revs) at(i int32) *rev { return &l.chunks[i/revChunk][i%revChunk] }

// works is a list of timeline.Work in chunks, as revs: it grows without
// copying, and what it holds stays where it is, so that spans can point
// into it.
type works struct {
	chunks [][]timeline.Work
	n      int
}

const workChunk = 1024

func (l *works) add(w timeline.Work) uint32 {
	if len(l.chunks) == 0 || len(l.chunks[len(l.chunks)-1]) == workChunk {
		c := []timeline.Work(nil)
		if len(l.chunks) > 0 {
			c = make([]timeline.Work, 0, workChunk)
		}
		l.chunks = append(l.chunks, c)
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, w) // the first chunk grows as needed; pointers into it are taken once all is read
	l.n++
	return uint32(l.n)
}

func (l *works) at(i uint32) *timeline.Work { return &l.chunks[i/workChunk][i%workChunk] }

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
	nbegins   int
	lim       Limits
	calib     map[[2]int64]int // (track, time) -> index in Calibrations
	bootMinus int64            // BOOTTIME - MONOTONIC from the last snapshot
	unended   uint64
	works     works // the GPU work of slices, which their revs index

	// What a cut trace reads back (see CutError).
	size    int64  // bytes read
	pktEnd  int64  // where the packet being read ends
	whole   int64  // where the last whole record ends
	marked  bool   // the trace marks its batches' ends
	batches uint64 // batch ends read
	epoch   uint64 // == batches: a track's events of another epoch are whole
	mark    mark   // the state at the last batch end
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
		mark:     mark{names: 1},
	}
}

// parse reads the packets of a Trace message, one at a time.
func (rd *reader) parse(br *bufio.Reader) error {
	var buf []byte
	for {
		rd.whole = rd.size
		start := rd.size
		tag, n, err := readVarint(br)
		rd.size += int64(n)
		if err == io.EOF && n == 0 {
			return nil
		}
		if err != nil {
			return rd.readErr(err, start, "packet tag")
		}
		num, typ := protowire.DecodeTag(tag)
		if num < protowire.MinValidNumber || num > protowire.MaxValidNumber {
			return corrupt("bad tag at byte %d", start)
		}
		var size uint64
		switch typ {
		case protowire.BytesType:
			size, n, err = readVarint(br)
			rd.size += int64(n)
			if err != nil {
				return rd.readErr(err, start, "packet length")
			}
		case protowire.VarintType:
			_, n, err = readVarint(br)
			rd.size += int64(n)
			if err != nil {
				return rd.readErr(err, start, "field %d", num)
			}
			continue
		case protowire.Fixed32Type:
			size = 4
		case protowire.Fixed64Type:
			size = 8
		default:
			return corrupt("field %d at byte %d has wire type %d", num, start, typ)
		}
		if rd.size > rd.lim.MaxBytes || size > uint64(rd.lim.MaxBytes-rd.size) {
			return fmt.Errorf("%w: the field at byte %d ends past %d bytes (Limits.MaxBytes)", ErrTooLarge, start, rd.lim.MaxBytes)
		}
		if num == fTracePacket && size > MaxPacket {
			return fmt.Errorf("%w: a packet of %d bytes at byte %d, more than %d (MaxPacket)", ErrTooLarge, size, start, MaxPacket)
		}
		if num != fTracePacket || typ != protowire.BytesType {
			m, err := br.Discard(int(size))
			rd.size += int64(m)
			if err != nil {
				return rd.readErr(err, start, "field %d", num)
			}
			continue
		}
		buf, err = readBody(br, buf[:0], int(size))
		rd.size += int64(len(buf))
		if err != nil {
			return rd.readErr(err, start, "packet")
		}
		rd.pktEnd = rd.size
		if err := rd.packet(buf); err != nil {
			return fmt.Errorf("%w (packet at byte %d)", err, start)
		}
	}
}

// readErr says what a read that failed at byte off means: a trace cut
// short when the input ended, else the reader's error.
func (rd *reader) readErr(err error, off int64, format string, args ...any) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("perfetto: trace cut short at byte %d (in the %s): %w", off, fmt.Sprintf(format, args...), io.ErrUnexpectedEOF)
	}
	if err == errVarint {
		return corrupt("bad varint in the %s at byte %d", fmt.Sprintf(format, args...), off)
	}
	return err
}

var errVarint = errors.New("varint too long")

// readVarint reads a protobuf varint, returning the bytes it took.
func readVarint(br *bufio.Reader) (uint64, int, error) {
	var v uint64
	for i := 0; i < binary.MaxVarintLen64; i++ {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF && i > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, i, err
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, binary.MaxVarintLen64, errVarint
}

// readBody reads n bytes into buf, growing it only as bytes come: a
// length that claims more than the input holds costs no more than the
// input.
func readBody(br *bufio.Reader, buf []byte, n int) ([]byte, error) {
	const chunk = 1 << 20
	for len(buf) < n {
		k := min(n-len(buf), chunk)
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(br, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
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
		if p.hasTS {
			rd.advance(seq, p)
		}
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

// advance takes the timestamp of a packet that holds no track event
// (another data source's, or the Writer's render stages, which are on
// the MONOTONIC clock itself): on the sequence's incremental clock, it
// moves that clock on, as it does for the trace processor.
func (rd *reader) advance(s *rseq, p pkt) {
	clock := p.clock
	if clock == 0 {
		clock = s.defaultClock
	}
	if clock != 0 && clock == s.incClock {
		s.incLast += int64(p.ts)
	}
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
		if c, ok := books.CauseOf(attrs["field"]); ok && rt.field < 0 {
			rt.field = int(c) // a key of an older trace
		}
	case "ledger":
		rt.field = -1
		if i, ok := books.LedgerKeyOf(attrs["field"]); ok {
			rt.field = i
		}
	case "calibration":
		of, err1 := strconv.ParseUint(attrs["of"], 10, 32)
		f, err2 := strconv.Atoi(attrs["field"])
		if err1 != nil || err2 != nil || f < 0 || f >= len(calibFields) {
			return corrupt("bad calibration track %q", desc)
		}
		rt.of, rt.field = timeline.TrackID(of), f
	case "batches":
		rd.marked = true
	case "frames-list", "dropped", "gpu-group", "ledger-group", "work", "limits":
		// The Writer's own, or derived from the spans (work counters,
		// the frames' limits).
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
		t.Across = t.Kind == timeline.TrackGPULane && a["across"] == "1"
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
	count          uint64 // an integer counter value, or keyExact's
	hasCount       bool
	frame          uint64
	errNs          uint32
	hasFrame       bool
	hasErr         bool
	args           uint8 // as rev.args
	flows, termFlo []uint64
	// A GPU zone's work as its annotations gave it, held to the rules
	// every reader shares (timeline.WorkArgs) at the slice's begin.
	work    timeline.WorkArgs
	hasWork bool
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
			if int64(v) >= 0 {
				e.count, e.hasCount = v, true
			}
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
		rd.unended++ // an event on a track never described
		return nil
	}
	switch e.typ {
	case typeSliceBegin, typeInstant:
		if rt.role == "dropped" || rt.role == "limits" {
			return nil
		}
		if err := rd.begin(s, rt, ts, &e); err != nil {
			return err
		}
		if e.typ == typeInstant {
			return rd.end(rt, ts)
		}
	case typeSliceEnd:
		if rt.role == "limits" {
			return nil
		}
		return rd.end(rt, ts)
	case typeCounter:
		return rd.counter(rt, ts, &e)
	}
	return nil
}

func (rd *reader) annotation(s *rseq, e *tevent, b []byte) error {
	var name string
	var v uint64
	var str []byte
	var isInt, isString, negative bool
	other := "" // a value of another type, as text, for an error
	err := fields(b, func(num protowire.Number, _ protowire.Type, x uint64, c []byte) error {
		switch num {
		case fDANameIID:
			name = s.anns[x]
		case fDAName:
			name = string(c)
		case fDAUint:
			v, isInt = x, true
		case fDAInt:
			v, isInt, negative = x, true, int64(x) < 0
		case fDAString:
			str, isString = c, true
		case fDADouble:
			other = strconv.FormatFloat(math.Float64frombits(x), 'g', -1, 64)
		case fDABool:
			other = strconv.FormatBool(x != 0)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if handled, err := workAnnotation(e, name, v, str, isInt, isString, negative, other); handled {
		return err
	}
	switch {
	case isInt && name == keyExact:
		e.count, e.hasCount = v, true
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

// workAnnotation reads annotation name into e's work if it is one of a
// zone's work keys (reporting handled), refusing what no reader takes:
// a count that is negative, fractional or no number, a reason or a list
// of statistics that is no string or names none.
func workAnnotation(e *tevent, name string, v uint64, str []byte, isInt, isString, negative bool, other string) (bool, error) {
	text := func() string { // the value as written, for an error alone
		switch {
		case isString:
			return strconv.Quote(string(str))
		case negative:
			return strconv.FormatInt(int64(v), 10)
		case isInt:
			return strconv.FormatUint(v, 10)
		}
		return other
	}
	wa := &e.work
	switch name {
	case keyWorkMissing:
		m, ok := timeline.WorkMissingOf(string(str))
		if !isString || !ok || m == timeline.WorkCounted {
			return true, corrupt("a slice's work: %v", timeline.NotAReason(text()))
		}
		wa.Missing, wa.HasMissing, e.hasWork = m, true, true
		return true, nil
	case keyWorkStats:
		if !isString {
			return true, corrupt("a slice's work: %v", timeline.NotAStatsList(text()))
		}
		st, err := timeline.ParsePipelineStats(string(str))
		if err != nil {
			return true, corrupt("a slice's work: %q: %v", keyWorkStats, err)
		}
		wa.Stats, wa.HasStats, e.hasWork = st, true, true
		return true, nil
	}
	i, ok := timeline.StatOf(name)
	if !ok {
		return false, nil
	}
	if !isInt || negative {
		return true, corrupt("a slice's work: %v", timeline.NotACount(i, text()))
	}
	wa.Counted |= 1 << i
	wa.Count[i] = v
	e.hasWork = true
	return true, nil
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
	if rd.nbegins++; rd.nbegins > rd.lim.MaxSpans {
		return fmt.Errorf("%w: more than %d slices (Limits.MaxSpans)", ErrTooLarge, rd.lim.MaxSpans)
	}
	ref := evRef{rt, int32(rt.events.n)}
	flow := len(e.flows)+len(e.termFlo) > 0
	var work uint32
	if e.hasWork {
		wk, err := e.work.Work()
		if err != nil {
			return corrupt("a slice's work: %v", err)
		}
		work = rd.works.add(wk)
	}
	rd.addEvent(rt, rev{ts: ts, begin: true, flow: flow, args: e.args, name: rd.name(name), frame: rt.lastFrame, errNs: rt.lastErr, work: work})
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
	rd.addEvent(rt, rev{ts: ts})
	return nil
}

func (rd *reader) counter(rt *rtrack, ts int64, e *tevent) error {
	v := e.value
	switch rt.role {
	case "batches":
		rd.commit()
	case "drops":
		if rt.field < 0 {
			return nil
		}
		n, err := countOf(e, "framescope dropped: "+dropFields[rt.field])
		if err != nil {
			return err
		}
		if c, ok := books.CauseOf(dropFields[rt.field]); ok {
			*books.Count(&rd.t.Drops, c) = n
		}
	case "ledger":
		if rt.field < 0 {
			return nil
		}
		n, err := countOf(e, "framescope ledger: "+books.LedgerKey(rt.field))
		if err != nil {
			return err
		}
		*books.LedgerCount(&rd.t.Ledger, rt.field) = n
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
	return nil
}

// countOf is a count counter's value, exactly: its integer counter value
// or its keyExact annotation; a double (as writers before issue 38 wrote
// counts from 2^53 on) only when it is a whole number below 2^64. A
// negative or fractional count is refused, as the Chrome reader refuses
// one, naming the counter.
func countOf(e *tevent, what string) (uint64, error) {
	v := e.value
	switch {
	case e.hasCount:
		return e.count, nil
	case v >= 0 && v < 0x1p64 && v == math.Trunc(v):
		return uint64(v), nil
	}
	return 0, corrupt("counter %q is %v, not a count", what, v)
}

// finish matches slice begins and ends in time order per track, drops
// spans that never ended, resolves flows and checks the trace against the
// model. It takes time and memory linear in the events, whatever their
// depth.
func (rd *reader) finish() (*timeline.Trace, error) {
	t := rd.t
	spanOf := map[evRef]int{} // only the events flows end on
	var stack []int
	var idx []int32
	t.Spans = make([]timeline.Span, 0, rd.nbegins)
	for _, rt := range rd.order {
		if rt.events.n == 0 {
			continue
		}
		// Stable: events at one time keep their file order, which the
		// writer chose to nest them right.
		idx = slices.Grow(idx[:0], rt.events.n)
		for i := range rt.events.n {
			idx = append(idx, int32(i))
		}
		slices.SortStableFunc(idx, func(a, b int32) int {
			return cmp.Compare(rt.events.at(a).ts, rt.events.at(b).ts)
		})
		stack = stack[:0]
		for _, i := range idx {
			ev := rt.events.at(i)
			if ev.begin {
				if len(stack) >= rd.lim.MaxDepth {
					return nil, fmt.Errorf("%w: slices nested deeper than %d (Limits.MaxDepth)", ErrTooLarge, rd.lim.MaxDepth)
				}
				if ev.flow {
					spanOf[evRef{rt, i}] = len(t.Spans)
				}
				t.Spans = append(t.Spans, timeline.Span{Track: rt.id, Name: ev.name, Start: ev.ts, End: -1,
					Frame: ev.frame, ErrNs: ev.errNs, Depth: uint16(len(stack))})
				if ev.work != 0 {
					t.Spans[len(t.Spans)-1].Work = rd.works.at(ev.work - 1)
				}
				stack = append(stack, len(t.Spans)-1)
				continue
			}
			if len(stack) == 0 {
				rd.unended++
				continue
			}
			sp := &t.Spans[stack[len(stack)-1]]
			stack = stack[:len(stack)-1]
			sp.End = ev.ts
			if rt.kind == timeline.TrackFrames || rt.role == "frames-list" {
				t.Frames = append(t.Frames, timeline.Frame{ID: sp.Frame, Start: sp.Start, End: sp.End})
			}
		}
		rt.events = revs{}
		// A trace cut short leaves slices that never ended: what is left
		// on the stack, as nothing below an open slice can end. They are
		// dropped, so each later span of the track is one less deep for
		// each of them that began before it.
		if len(stack) > 0 {
			k := 0
			for i := stack[0]; i < len(t.Spans); i++ {
				if k < len(stack) && stack[k] == i {
					k++
					continue
				}
				t.Spans[i].Depth -= uint16(k)
			}
		}
	}
	// Keep the spans that ended and are not the writer's own frames.
	remap := make([]int32, len(t.Spans))
	kept := t.Spans[:0]
	for i, s := range t.Spans {
		remap[i] = -1
		if s.End < 0 {
			rd.unended++
			continue
		}
		if s.Track == 0 {
			continue
		}
		remap[i] = int32(len(kept))
		kept = append(kept, s)
	}
	t.Spans = slices.Clip(kept)
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
		if ok1 && ok2 && remap[from] >= 0 && remap[into] >= 0 && remap[from] != remap[into] {
			t.Flows = append(t.Flows, timeline.Flow{From: int(remap[from]), To: int(remap[into])})
		}
	}
	t.Drops.Unended += rd.unended
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("perfetto: the trace breaks Framescope's model: %w", err)
	}
	return t, nil
}
