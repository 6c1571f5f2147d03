package timeline

// NameID refers to an entry of Trace.Names. Names are registered once and
// referenced by handle; ID 0 is the empty name.
type NameID uint32

// TrackID refers to an entry of Trace.Tracks by its ID field. ID 0 means
// "no track".
type TrackID uint32

// TrackKind tells what a track holds.
type TrackKind uint8

const (
	// TrackCPU holds CPU spans of one logical thread (render loop, worker).
	TrackCPU TrackKind = iota + 1
	// TrackGPUQueue holds GPU zones of one VkQueue. Zones that overlap
	// without nesting are laid on extra lanes: tracks of kind TrackGPULane
	// whose Parent is the queue track.
	TrackGPUQueue
	// TrackGPULane is an overflow lane of a GPU queue track.
	TrackGPULane
	// TrackFrames holds one span per frame.
	TrackFrames
	// TrackCounter holds counter samples.
	TrackCounter
)

func (k TrackKind) String() string {
	switch k {
	case TrackCPU:
		return "cpu"
	case TrackGPUQueue:
		return "gpu-queue"
	case TrackGPULane:
		return "gpu-lane"
	case TrackFrames:
		return "frames"
	case TrackCounter:
		return "counter"
	}
	return "unknown"
}

// Unit is the unit of a counter track.
type Unit uint8

const (
	UnitNone  Unit = iota
	UnitNs         // a duration in nanoseconds
	UnitCount      // a count of things
	UnitBytes      // a size in bytes
)

// Queue identifies a VkQueue on a device.
type Queue struct {
	Device string // physical device name
	Family uint32 // queue family index
	Index  uint32 // queue index within the family
	Flags  string // "graphics", "compute", "transfer", or a combination joined by "+"
}

// Track is one row of the timeline.
type Track struct {
	ID     TrackID
	Kind   TrackKind
	Name   string
	Parent TrackID // 0: a top-level track of the process
	Order  int32   // explicit order among siblings; lower first
	Queue  Queue   // set on TrackGPUQueue and TrackGPULane
	Lane   int32   // 0 on the queue track itself, 1.. on its lanes
	Unit   Unit    // set on TrackCounter
	// Across marks a lane (TrackGPULane) of zones that span command
	// buffers: each from its begin in one to its end in a later one of
	// the queue, the gaps between them included. They are annotations of
	// the queue's time, not work: no part of its busy time.
	Across bool
}

// Span is a closed interval of work on one track. Spans on one track are
// properly nested: two spans either do not overlap or one contains the
// other.
type Span struct {
	Track TrackID
	Name  NameID
	Start int64  // host CLOCK_MONOTONIC, ns
	End   int64  // host CLOCK_MONOTONIC, ns; End >= Start
	Frame uint64 // the frame that recorded this work; 0 = none
	Depth uint16 // nesting depth on its track, 0 = outermost
	// ErrNs is the clock model's error bound for Start and End, in ns.
	// 0 on CPU spans, whose times are read on the host clock itself.
	ErrNs uint32
	// Work is what a GPU zone of a context that counts pipeline
	// statistics did (or why it has no counts); nil on every other span.
	// Spans share it: it is not changed once made.
	Work *Work
}

// Dur returns End-Start.
func (s Span) Dur() int64 { return s.End - s.Start }

// Flow is an arrow from one span to another, for example from the CPU span
// that submitted a command buffer to a GPU zone that command buffer carried.
// From and To index Trace.Spans.
type Flow struct {
	From, To int
}

// Frame is one frame of the application.
type Frame struct {
	ID    uint64
	Start int64
	End   int64 // 0 while the frame is open
}

// Sample is one value of a counter track at a time.
type Sample struct {
	Track TrackID // a TrackCounter track
	Time  int64
	Value float64
}

// Calibration is the quality of the clock model at a time, for one GPU
// queue's device clock.
type Calibration struct {
	Track    TrackID // the GPU queue track it applies to
	Time     int64   // host ns when the model was refitted
	ErrNs    float64 // error bound of a conversion at that time
	DriftPPM float64 // device clock rate against host, minus 1, in ppm
	Samples  int     // samples in the model's window
}

// Process describes the traced process.
type Process struct {
	PID  int32
	Name string
}

// Trace is a whole timeline, or a batch of one when streaming. It is plain
// data: exporters read it, readers build it.
type Trace struct {
	Process      Process
	Names        []string // NameID indexes it; Names[0] == ""
	Tracks       []Track
	Spans        []Span
	Flows        []Flow
	Frames       []Frame
	Samples      []Sample
	Calibrations []Calibration
	Drops        Drops
	// Ledger is the books of the recorder that made the trace, when one
	// did: what it was handed, delivered, lost and holds still.
	Ledger Ledger
}

// Name returns the name of id, or "" when it is out of range.
func (t *Trace) Name(id NameID) string {
	if int(id) < len(t.Names) {
		return t.Names[id]
	}
	return ""
}

// Track returns the track with the given ID, or nil.
func (t *Trace) Track(id TrackID) *Track {
	for i := range t.Tracks {
		if t.Tracks[i].ID == id {
			return &t.Tracks[i]
		}
	}
	return nil
}
