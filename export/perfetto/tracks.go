package perfetto

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// Track UUIDs. Timeline tracks get uuidBase+ID; the writer's own tracks
// take the small numbers below it, and calibration counters a range of
// their own.
const (
	uuidProcess = 1
	uuidGPU     = 2
	uuidFrames  = 3 // frames of a trace that defines no frames track
	uuidDropped = 4 // the "framescope dropped" marker track
	uuidBatches = 5 // the "framescope batches" counter: its value at each batch's end
	uuidBase    = 16
	uuidDrops   = 1 << 39         // + index in dropFields: one counter per drop count
	uuidLedger  = uuidDrops + 256 // the "framescope ledger" group; + 1 + index in ledgerFields: its counters
	uuidCalib   = 1 << 40         // | ID<<2 | calibration field
	uuidWork    = 1 << 41         // | ID<<4 | statistic: a GPU queue's work counters
)

func trackUUID(id timeline.TrackID) uint64 { return uint64(id) + uuidBase }

func calibUUID(id timeline.TrackID, field int) uint64 {
	return uuidCalib | uint64(id)<<2 | uint64(field)
}

func workUUID(id timeline.TrackID, stat int) uint64 {
	return uuidWork | uint64(id)<<4 | uint64(stat)
}

// Categories, interned on every sequence with these iids.
const (
	catCPU = iota + 1
	catGPU
	catFrames
	catOther
)

var categoryNames = [...]string{catCPU: "cpu", catGPU: "gpu", catFrames: "frame", catOther: "framescope"}

// Debug annotation names, interned on every sequence with these iids.
const (
	annFrame = iota + 1
	annErrNs
	annQueue
)

var annotationNames = [...]string{annFrame: "frame", annErrNs: "err_ns", annQueue: "queue"}

// The debug annotation names of a GPU zone's work, interned on a sequence
// with these iids by the first slice with work written on it, so that a
// trace without work holds none of them: annWork+i is statistic i
// (timeline.StatKey), an unsigned count; annWorkMissing and annWorkStats
// are strings, the reason a zone has no counts and the set it would have
// counted.
const (
	annWork        = len(annotationNames)
	annWorkMissing = annWork + timeline.NumPipelineStats
	annWorkStats   = annWorkMissing + 1
	annWorkEnd     = annWorkStats + 1
)

// Keys of the work annotations other than the statistics' own.
const (
	keyWorkMissing = "work_missing"
	keyWorkStats   = "work_stats"
)

var workAnnotationNames = func() (n [annWorkEnd]string) {
	for i := range timeline.NumPipelineStats {
		n[annWork+i] = timeline.StatKey(i)
	}
	n[annWorkMissing], n[annWorkStats] = keyWorkMissing, keyWorkStats
	return n
}()

// statGroup is the GpuCounterDescriptor group of statistic i.
func statGroup(i int) uint64 {
	switch timeline.PipelineStats(1) << i {
	case timeline.InputAssemblyVertices, timeline.VertexShaderInvocations, timeline.TessellationEvaluationShaderInvocations:
		return groupVertices
	case timeline.InputAssemblyPrimitives, timeline.GeometryShaderPrimitives, timeline.ClippingInvocations,
		timeline.ClippingPrimitives, timeline.TessellationControlShaderPatches:
		return groupPrimitives
	case timeline.FragmentShaderInvocations:
		return groupFragments
	case timeline.ComputeShaderInvocations:
		return groupCompute
	}
	return groupUnclassified
}

// queueString is the queue annotation of a GPU track's slices, as the
// Chrome JSON writer writes it.
func queueString(q timeline.Queue) string {
	s := q.Device + " queue " + strconv.FormatUint(uint64(q.Family), 10) + "." + strconv.FormatUint(uint64(q.Index), 10)
	if q.Flags != "" {
		s += " (" + q.Flags + ")"
	}
	return s
}

// dropFields name the counts of timeline.Drops, and the writer's own count
// of invalid input, in the order of their counter tracks.
var dropFields = func() (f [books.NumCauses + 1]string) {
	for c := range books.NumCauses {
		f[c] = c.String()
	}
	f[books.NumCauses] = "invalid"
	return f
}()

func dropValues(d timeline.Drops, invalid uint64) (v [len(dropFields)]uint64) {
	for c := range books.NumCauses {
		v[c] = *books.Count(&d, c)
	}
	v[books.NumCauses] = invalid
	return v
}

// ledgerValues are the counts of a timeline.Ledger, in the order of
// books.LedgerKey, each the value of a counter track.
func ledgerValues(l timeline.Ledger) (v [books.NumLedgerCounts]uint64) {
	for i := range v {
		v[i] = *books.LedgerCount(&l, i)
	}
	return v
}

// calibFields name the counters each GPU queue's calibrations become.
var calibFields = [...]string{"clock error bound", "clock drift", "clock samples"}

// Ranks among the process's children: frames first, then the GPU, then
// CPU tracks, then counters, each band in the timeline's Order.
const band = 1 << 24

func clampOrder(o int32) int32 {
	return max(-band/2, min(band/2, o))
}

// trackState is what the writer keeps per timeline track.
type trackState struct {
	timeline.Track
	uuid      uint64
	cat       uint8
	described bool
	calib     bool   // its calibration counters are described
	count     int    // slices in the batch being written
	queue     string // a GPU track's queue annotation; "" for others
	// The args of the slice begun last on the track (last*), and of the
	// one latest in time (time*: the latest by begin time, then depth,
	// at timeTs and timeDepth), which differ only when a batch reaches
	// back in time on the track. See writeArgs.
	lastFrame, timeFrame uint64
	lastErr, timeErr     uint32
	queueDone            bool
	timeTs               int64
	timeDepth            uint16

	// On a GPU queue track: the statistics whose work counters are
	// described, and the state of its native GPU counters (render
	// stages only).
	workDescribed timeline.PipelineStats
	gpu           *gpuQueue
}

// gpuQueue is what the writer keeps of a GPU queue track's native GPU
// counters (Options.RenderStages): per statistic, its counter id (0: not
// described yet) and the time of the last event written for it.
type gpuQueue struct {
	id   [timeline.NumPipelineStats]uint32
	last [timeline.NumPipelineStats]int64
}

// description is the track's description field: the timeline attributes
// that Read needs, after a "framescope" marker. Values that could hold
// spaces or quotes are quoted with strconv.Quote.
func description(t *timeline.Track) string {
	var b strings.Builder
	fmt.Fprintf(&b, "framescope kind=%s id=%d order=%d", t.Kind, t.ID, t.Order)
	if t.Parent != 0 {
		fmt.Fprintf(&b, " parent=%d", t.Parent)
	}
	switch t.Kind {
	case timeline.TrackGPUQueue, timeline.TrackGPULane:
		fmt.Fprintf(&b, " lane=%d family=%d index=%d flags=%s device=%s",
			t.Lane, t.Queue.Family, t.Queue.Index, strconv.Quote(t.Queue.Flags), strconv.Quote(t.Queue.Device))
		if t.Across {
			b.WriteString(" across=1")
		}
	case timeline.TrackCounter:
		fmt.Fprintf(&b, " unit=%d", t.Unit)
	}
	return b.String()
}

// parseDescription splits a description written by description (or by
// the writer for its own tracks) into its kind and attributes. ok is false
// for descriptions of other writers.
func parseDescription(s string) (attrs map[string]string, ok bool) {
	rest, found := strings.CutPrefix(s, "framescope ")
	if !found {
		return nil, false
	}
	attrs = map[string]string{}
	for len(rest) > 0 && len(attrs) < 32 {
		rest = strings.TrimLeft(rest, " ")
		key, after, found := strings.Cut(rest, "=")
		if !found || key == "" || strings.ContainsAny(key, " \"") {
			return nil, false
		}
		var val string
		if strings.HasPrefix(after, `"`) {
			q, err := strconv.QuotedPrefix(after)
			if err != nil {
				return nil, false
			}
			val, _ = strconv.Unquote(q)
			rest = after[len(q):]
		} else {
			val, rest, _ = strings.Cut(after, " ")
		}
		attrs[key] = val
	}
	return attrs, true
}

// describe writes a track descriptor packet for a timeline track.
func (w *Writer) describe(t *trackState) {
	if t.described {
		return
	}
	t.described = true
	parent := uint64(uuidProcess)
	rank := int32(0)
	switch t.Kind {
	case timeline.TrackGPUQueue, timeline.TrackGPULane:
		w.describeGPU()
		parent = uuidGPU
		rank = clampOrder(t.Order)
		if t.Kind == timeline.TrackGPULane {
			rank = t.Lane
		}
	case timeline.TrackFrames:
		rank = -band*3 + clampOrder(t.Order)
	case timeline.TrackCounter:
		rank = band + clampOrder(t.Order)
	default:
		rank = clampOrder(t.Order)
	}
	if t.Parent != 0 && t.Parent != t.ID {
		if p, ok := w.trackIndex[t.Parent]; ok && w.depthOK(t) {
			w.describe(&w.tracks[p])
			parent = w.tracks[p].uuid
		}
	}
	e := w.packet()
	at := e.open(fPktTrackDescriptor)
	e.varint(fTDUuid, t.uuid)
	e.varint(fTDParentUuid, parent)
	e.str(fTDName, t.Name)
	e.str(fTDDescription, description(&t.Track))
	if t.Kind == timeline.TrackCounter {
		c := e.open(fTDCounter)
		switch t.Unit {
		case timeline.UnitNs:
			e.varint(fCounterUnit, unitTimeNs)
		case timeline.UnitCount:
			e.varint(fCounterUnit, unitCount)
		case timeline.UnitBytes:
			e.varint(fCounterUnit, unitSizeBytes)
		}
		e.close(c)
	}
	if t.Kind == timeline.TrackGPUQueue {
		e.varint(fTDChildOrdering, orderingExplicit)
	}
	e.varint(fTDSiblingRank, uint64(int64(rank)))
	e.varint(fTDSiblingMerge, mergeNone)
	e.close(at)
	w.endPacket()
}

// depthOK reports whether t's chain of parents ends within 64 steps and
// without a cycle; a track with a bad chain is put under the process.
func (w *Writer) depthOK(t *trackState) bool {
	seen := t.ID
	p := t.Parent
	for i := 0; i < 64; i++ {
		if p == 0 {
			return true
		}
		if p == seen {
			return false
		}
		j, ok := w.trackIndex[p]
		if !ok {
			return true
		}
		p = w.tracks[j].Parent
	}
	return false
}

// describeProcess writes the process track, once.
func (w *Writer) describeProcess(p timeline.Process) {
	if w.processDone {
		return
	}
	w.processDone = true
	e := w.packet()
	at := e.open(fPktTrackDescriptor)
	e.varint(fTDUuid, uuidProcess)
	pd := e.open(fTDProcess)
	e.varint(fProcPid, uint64(int64(p.PID)))
	if p.Name != "" {
		e.str(fProcName, p.Name)
	}
	e.close(pd)
	e.varint(fTDChildOrdering, orderingExplicit)
	e.close(at)
	w.endPacket()
}

// describeGPU writes the "GPU" parent of the queue tracks, once.
func (w *Writer) describeGPU() {
	if w.gpuDone {
		return
	}
	w.gpuDone = true
	w.simpleTrack(uuidGPU, uuidProcess, "GPU", "framescope kind=gpu-group", -band*2, false, 0, "")
}

// simpleTrack writes a descriptor for one of the writer's own tracks.
func (w *Writer) simpleTrack(uuid, parent uint64, name, desc string, rank int32, counter bool, unit uint64, unitName string) {
	e := w.packet()
	at := e.open(fPktTrackDescriptor)
	e.varint(fTDUuid, uuid)
	e.varint(fTDParentUuid, parent)
	e.str(fTDName, name)
	e.str(fTDDescription, desc)
	if counter {
		c := e.open(fTDCounter)
		if unit != 0 {
			e.varint(fCounterUnit, unit)
		}
		if unitName != "" {
			e.str(fCounterUnitName, unitName)
		}
		e.close(c)
	}
	if uuid == uuidGPU {
		e.varint(fTDChildOrdering, orderingExplicit)
	}
	e.varint(fTDSiblingRank, uint64(int64(rank)))
	e.varint(fTDSiblingMerge, mergeNone)
	e.close(at)
	w.endPacket()
}

// describeCalib writes the calibration counters of a GPU queue track.
func (w *Writer) describeCalib(t *trackState) {
	if t.calib {
		return
	}
	t.calib = true
	w.describe(t)
	units := [...]uint64{unitTimeNs, 0, unitCount}
	unitNames := [...]string{"", "ppm", ""}
	for f, name := range calibFields {
		desc := fmt.Sprintf("framescope kind=calibration of=%d field=%d", t.ID, f)
		w.simpleTrack(calibUUID(t.ID, f), t.uuid, name, desc, band+int32(f), true, units[f], unitNames[f])
	}
}

// describeWork writes the work counters of a GPU queue track for the
// statistics of stats not described yet: "<queue name> <StatKey>", under
// the queue, after its calibration counters.
func (w *Writer) describeWork(t *trackState, stats timeline.PipelineStats) {
	stats &^= t.workDescribed
	if stats == 0 {
		return
	}
	t.workDescribed |= stats
	w.describe(t)
	stats.Each(func(i int) {
		k := timeline.StatKey(i)
		desc := "framescope kind=work of=" + strconv.FormatUint(uint64(t.ID), 10) + " stat=" + k
		w.simpleTrack(workUUID(t.ID, i), t.uuid, t.Name+" "+k, desc, band+int32(len(calibFields)+i), true, unitCount, "")
	})
}

// describeDrops writes the drop counters and the marker track, once.
func (w *Writer) describeDrops() {
	if w.dropsDone {
		return
	}
	w.dropsDone = true
	w.simpleTrack(uuidDropped, uuidProcess, "framescope dropped", "framescope kind=dropped", band*2, false, 0, "")
	for i, f := range dropFields {
		w.simpleTrack(uint64(uuidDrops+i), uuidProcess, "framescope dropped: "+f,
			"framescope kind=drops field="+f, band*2+1+int32(i), true, unitCount, "")
	}
}

// describeLedger writes the ledger's group and counter tracks.
func (w *Writer) describeLedger() {
	if w.ledgerDone {
		return
	}
	w.ledgerDone = true
	w.simpleTrack(uuidLedger, uuidProcess, "framescope ledger", "framescope kind=ledger-group", band*2+64, false, 0, "")
	for i := range books.NumLedgerCounts {
		k := books.LedgerKey(i)
		w.simpleTrack(uint64(uuidLedger+1+i), uuidLedger, "framescope ledger: "+k,
			"framescope kind=ledger field="+k, int32(i), true, unitCount, "")
	}
}

// describeBatches writes the batches counter, once, first thing in the
// trace: a reader that has read it knows the trace marks the end of each
// batch (see writeBatchEnd), so that it can read a trace cut short up to
// its last whole batch.
func (w *Writer) describeBatches() {
	if w.batchesDone {
		return
	}
	w.batchesDone = true
	w.simpleTrack(uuidBatches, uuidProcess, "framescope batches", "framescope kind=batches", band*2+65, true, unitCount, "")
}

// describeFrames writes the frames track of a trace that defines none.
func (w *Writer) describeFrames() {
	if w.framesDone {
		return
	}
	w.framesDone = true
	w.simpleTrack(uuidFrames, uuidProcess, "Frames", "framescope kind=frames-list", -band*3, false, 0, "")
}
