package perfetto

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of Perfetto's trace format (internal/perfettopb/framescope_trace.proto has them with their messages).
const (
	fTracePacket = 1

	// TracePacket
	fPktTimestamp        = 8
	fPktTimestampClockID = 58
	fPktSequenceID       = 10
	fPktSequenceFlags    = 13
	fPktInternedData     = 12
	fPktDefaults         = 59
	fPktFirstOnSequence  = 87
	fPktClockSnapshot    = 6
	fPktTrackEvent       = 11
	fPktTrackDescriptor  = 60
	fPktGpuCounterEvent  = 52
	fPktGpuRenderStage   = 53

	// TracePacketDefaults
	fDefTimestampClockID   = 58
	fDefTrackEventDefaults = 11

	// ClockSnapshot and its Clock
	fSnapClocks       = 1
	fSnapPrimaryClock = 2
	fClockID          = 1
	fClockTimestamp   = 2
	fClockIncremental = 3

	// InternedData and its entries ({iid 1, name 2})
	fInternCategories      = 1
	fInternEventNames      = 2
	fInternAnnotationNames = 3
	fInternGraphicsContext = 23 // InternedGraphicsContext {iid 1, pid 2, api 3}
	fInternGpuSpecs        = 24 // InternedGpuRenderStageSpecification {iid 1, name 2, description 3}
	fInternIID             = 1
	fInternName            = 2
	fInternDescription     = 3
	fCtxPid                = 2
	fCtxAPI                = 3

	// TrackDescriptor
	fTDUuid          = 1
	fTDParentUuid    = 5
	fTDName          = 2
	fTDDescription   = 14
	fTDProcess       = 3
	fTDCounter       = 8
	fTDChildOrdering = 11
	fTDSiblingRank   = 12
	fTDSiblingMerge  = 15

	// ProcessDescriptor
	fProcPid  = 1
	fProcName = 6

	// CounterDescriptor
	fCounterUnit     = 3
	fCounterUnitName = 6

	// TrackEvent
	fTECategoryIIDs  = 3
	fTENameIID       = 10
	fTEName          = 23
	fTEType          = 9
	fTETrackUuid     = 11
	fTEDoubleCounter = 44
	fTEIntCounter    = 30
	fTEFlowIDs       = 47
	fTETermFlowIDs   = 48
	fTEAnnotations   = 4

	// DebugAnnotation
	fDANameIID = 1
	fDAName    = 10
	fDABool    = 2
	fDAUint    = 3
	fDAInt     = 4
	fDADouble  = 5
	fDAString  = 6

	// GpuRenderStageEvent (protos/perfetto/trace/gpu/gpu_render_stage_event.proto)
	fRSEventID      = 1
	fRSDuration     = 2
	fRSContext      = 5
	fRSSubmissionID = 10
	fRSGpuID        = 11
	fRSHwQueueIID   = 13
	fRSStageIID     = 14

	// GpuCounterEvent (protos/perfetto/trace/gpu/gpu_counter_event.proto)
	// and GpuCounterDescriptor (protos/perfetto/common/gpu_counter_descriptor.proto)
	fGCDescriptor   = 1
	fGCCounters     = 2
	fGCGpuID        = 3
	fGCCounterID    = 1 // GpuCounter
	fGCIntValue     = 2
	fGCDoubleValue  = 3
	fGCDSpecs       = 1 // GpuCounterDescriptor
	fGCSCounterID   = 1 // GpuCounterSpec
	fGCSName        = 2
	fGCSDescription = 3
	fGCSGroups      = 10
)

// Values of Perfetto's enums.
const (
	seqIncrementalStateCleared = 1

	clockMonotonic   = 3
	clockBoottime    = 6
	clockIncremental = 64 // a sequence-scoped clock: deltas of MONOTONIC

	typeSliceBegin = 1
	typeSliceEnd   = 2
	typeInstant    = 3
	typeCounter    = 4

	orderingExplicit = 3
	mergeNone        = 2

	unitTimeNs    = 1
	unitCount     = 2
	unitSizeBytes = 3

	apiVulkan = 2 // InternedGraphicsContext.Api

	// GpuCounterDescriptor.GpuCounterGroup
	groupUnclassified = 0
	groupVertices     = 2
	groupFragments    = 3
	groupPrimitives   = 4
	groupCompute      = 6
)

// enc appends protobuf fields to a byte slice. Nested messages reserve one
// length byte and widen it on close when the body passes 127 bytes, so no
// size is computed twice and nothing is allocated once buf has grown.
type enc struct {
	buf []byte
}

// uvarint appends v as a varint: a loop small enough to inline, where
// protowire.AppendVarint's unrolled switch is a call.
func uvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func (e *enc) varint(field protowire.Number, v uint64) {
	e.buf = uvarint(e.buf, uint64(field)<<3|uint64(protowire.VarintType))
	e.buf = uvarint(e.buf, v)
}

func (e *enc) fixed64(field protowire.Number, v uint64) {
	e.buf = protowire.AppendTag(e.buf, field, protowire.Fixed64Type)
	e.buf = protowire.AppendFixed64(e.buf, v)
}

func (e *enc) double(field protowire.Number, v float64) {
	e.fixed64(field, math.Float64bits(v))
}

func (e *enc) str(field protowire.Number, s string) {
	e.buf = protowire.AppendTag(e.buf, field, protowire.BytesType)
	e.buf = protowire.AppendVarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// open starts a nested message and returns where its length byte is.
func (e *enc) open(field protowire.Number) int {
	e.buf = protowire.AppendTag(e.buf, field, protowire.BytesType)
	e.buf = append(e.buf, 0)
	return len(e.buf) - 1
}

// close ends the nested message opened at at.
func (e *enc) close(at int) {
	n := len(e.buf) - at - 1
	if n < 0x80 {
		e.buf[at] = byte(n)
		return
	}
	k := protowire.SizeVarint(uint64(n))
	for i := 1; i < k; i++ {
		e.buf = append(e.buf, 0)
	}
	copy(e.buf[at+k:], e.buf[at+1:at+1+n])
	protowire.AppendVarint(e.buf[:at], uint64(n))
}
