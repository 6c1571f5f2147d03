package timeline

// Sink receives a recorder's data as it is finished, in batches.
//
// A batch is a *Trace in which Names is the recorder's whole append-only
// name table so far (index = NameID) and Tracks every track defined so
// far (a writer emits a descriptor the first time it sees a track ID);
// Spans, Frames, Samples and Calibrations hold only the items new since
// the last batch; Flows index Spans of the same batch; Drops is the
// running total so far, not a delta. Spans of one track are properly
// nested across the whole stream, and a span's Depth is its depth in the
// whole stream; within a batch spans come in any order.
// A whole Trace is the one-batch case.
//
// The recorder calls WriteBatch from one goroutine at a time, in order,
// never holding its lock, and does not touch the batch afterwards: the
// sink may keep it. Data handed over is not kept for another try: when
// WriteBatch returns an error, Flush or Close returns it, the batch is
// counted in Stats.SinkErrors and what it held in Stats.SinkLost.
type Sink interface {
	WriteBatch(batch *Trace) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(batch *Trace) error

// WriteBatch calls f(batch).
func (f SinkFunc) WriteBatch(batch *Trace) error { return f(batch) }
