package chrome

import (
	"math"
	"strconv"

	"github.com/framescope/framescope/internal/limitslices"
	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// What Write derives from the frames' limits (package timeline/limits):
// threads of slices and counters that viewers show, and Read leaves out.
const (
	limitsThread = "frame limits" // a slice per frame, named by its verdict
	idleThread   = "GPU idle"     // a slice per gap, named by its cause
	gpuBusyName  = "GPU busy"     // counter: the frame's GPU busy share
	cpuBusyName  = "CPU busy"     // counter: the frame's CPU busy share
	// metaDerived marks, on a thread, a thread of derived slices; with
	// args {"series": name}, a derived counter. Read leaves out their
	// events: a counter's must come after its mark.
	metaDerived = "framescope_derived"
)

// Sort indices of the derived threads: right after the frames thread,
// above every track, as the frames they describe are.
const (
	limitsSort = math.MinInt32*1024 + 1
	idleSort   = math.MinInt32*1024 + 2
)

// writeLimits writes what limits each frame of t: the verdicts, the
// GPU's idle gaps by cause, and the busy shares as counters. It writes
// nothing for a trace without analysed frames.
func (w *Writer) writeLimits(t *timeline.Trace) {
	r := limits.Of(t)
	if len(r.Frames) == 0 {
		return
	}
	w.writeVerdicts(t, r)
	w.writeGaps(r)
	w.writeBusy(r.Frames)
}

// derivedThread starts a thread of derived slices: a free tid, its name,
// its place, and the mark Read knows it by. It returns the tid.
func (w *Writer) derivedThread(name string, sort int64) []byte {
	id := w.freeTid()
	w.tids[id] = true
	tid := strconv.AppendUint(nil, uint64(id), 10)
	w.threadMeta(tid, `"thread_name","args":{"name":`)
	w.buf = appendString(w.buf, name)
	w.buf = append(w.buf, "}}"...)
	w.threadMeta(tid, `"thread_sort_index","args":{"sort_index":`)
	w.buf = strconv.AppendInt(w.buf, sort, 10)
	w.buf = append(w.buf, "}}"...)
	w.threadMeta(tid, `"`+metaDerived+`"}`)
	return tid
}

// threadMeta starts an 'M' event of thread tid: `,"tid":T,"name":` and
// then rest.
func (w *Writer) threadMeta(tid []byte, rest string) {
	w.beginEvent('M')
	w.buf = append(w.buf, `,"tid":`...)
	w.buf = append(w.buf, tid...)
	w.buf = append(w.buf, `,"name":`...)
	w.buf = append(w.buf, rest...)
}

// complete writes an 'X' event over [start, end) on thread tid; args is
// a JSON object, or nil for none.
func (w *Writer) complete(tid []byte, start, end int64, name string, args []byte) {
	w.beginEvent('X')
	w.buf = append(w.buf, `,"tid":`...)
	w.buf = append(w.buf, tid...)
	w.buf = append(w.buf, `,"ts":`...)
	w.buf = appendMicros(w.buf, start)
	w.buf = append(w.buf, `,"dur":`...)
	w.buf = appendMicros(w.buf, end-start)
	w.buf = append(w.buf, `,"name":`...)
	w.buf = appendString(w.buf, name)
	if args != nil {
		w.buf = append(w.buf, `,"args":`...)
		w.buf = append(w.buf, args...)
	}
	w.buf = append(w.buf, '}')
	if len(w.buf) > 256<<10 {
		w.flush(0)
	}
}

// writeVerdicts writes a slice per frame on the "frame limits" thread,
// named by its limit's label, its figures in its args, as limitslices
// lays them out (a frame wholly inside the one before has none; its
// figures stay in the counters).
func (w *Writer) writeVerdicts(t *timeline.Trace, r limits.Report) {
	tid := w.derivedThread(limitsThread, limitsSort)
	var args []byte
	for _, v := range limitslices.Verdicts(r) {
		args = appendVerdictArgs(args[:0], t, v.Frame)
		w.complete(tid, v.Start, v.End, v.Frame.Limit.Label(), args)
	}
}

// appendVerdictArgs appends the args of a frame's verdict slice: its
// busy shares, and its figures in ns, each left out where it is unknown
// (-1), as the CPU's are on a frame without a submitting thread.
func appendVerdictArgs(dst []byte, t *timeline.Trace, f *limits.Frame) []byte {
	d := float64(f.Dur())
	dst = append(dst, `{"frame":`...)
	dst = strconv.AppendUint(dst, f.ID, 10)
	dst = append(dst, `,"gpu_busy":`...)
	dst = appendFloat(dst, float64(f.GPUBusy)/d)
	if f.Thread != 0 {
		dst = append(dst, `,"cpu_busy":`...)
		dst = appendFloat(dst, float64(f.CPUBusy)/d)
		if tr := t.Track(f.Thread); tr != nil {
			dst = append(dst, `,"thread":`...)
			dst = appendString(dst, tr.Name)
		}
	}
	for _, a := range [...]struct {
		key string
		v   int64
	}{
		{"gpu_busy_ns", f.GPUBusy}, {"gpu_err_ns", f.GPUErrNs},
		{"cpu_busy_ns", f.CPUBusy}, {"cpu_wait_ns", f.CPUWait}, {"present_wait_ns", f.PresentWait},
		{"latency_ns", f.Latency},
	} {
		if a.v >= 0 {
			dst = append(dst, `,"`...)
			dst = append(dst, a.key...)
			dst = append(dst, `":`...)
			dst = strconv.AppendInt(dst, a.v, 10)
		}
	}
	return append(dst, '}')
}

// writeGaps writes each gap of the GPU in a frame as a slice on the "GPU
// idle" thread, named by its cause, as limitslices lays them out.
func (w *Writer) writeGaps(r limits.Report) {
	gaps := limitslices.Gaps(r)
	if len(gaps) == 0 {
		return
	}
	tid := w.derivedThread(idleThread, idleSort)
	var args []byte
	for _, g := range gaps {
		args = strconv.AppendUint(append(args[:0], `{"frame":`...), g.Frame.ID, 10)
		w.complete(tid, g.Start, g.End, g.Cause.String(), append(args, '}'))
	}
}

// writeBusy writes the "GPU busy" and "CPU busy" counters: each frame's
// busy share at its start (the CPU's only on frames with a submitting
// thread).
func (w *Writer) writeBusy(frames []limits.Frame) {
	gpu := w.derivedSeries(gpuBusyName)
	var cpu []byte
	for _, f := range frames {
		d := float64(f.Dur())
		w.counterEvent(gpu, f.Start, float64(f.GPUBusy)/d)
		if f.Thread == 0 {
			continue
		}
		if cpu == nil {
			cpu = w.derivedSeries(cpuBusyName)
		}
		w.counterEvent(cpu, f.Start, float64(f.CPUBusy)/d)
	}
}

// derivedSeries names a derived counter, made unique among the trace's
// own (a counter of the trace may have the name), and marks it. It
// returns the name, quoted.
func (w *Writer) derivedSeries(name string) []byte {
	for w.series[name] {
		name += " [" + limitsThread + "]"
	}
	w.series[name] = true
	q := appendString(nil, name)
	w.beginEvent('M')
	w.buf = append(w.buf, `,"name":"`+metaDerived+`","args":{"series":`...)
	w.buf = append(w.buf, q...)
	w.buf = append(w.buf, "}}"...)
	return q
}

// counterEvent writes a 'C' event of the series named by quoted.
func (w *Writer) counterEvent(quoted []byte, at int64, v float64) {
	w.beginEvent('C')
	w.buf = append(w.buf, `,"ts":`...)
	w.buf = appendMicros(w.buf, at)
	w.buf = append(w.buf, `,"name":`...)
	w.buf = append(w.buf, quoted...)
	w.buf = append(w.buf, `,"args":{"value":`...)
	w.buf = appendValue(w.buf, v)
	w.buf = append(w.buf, "}}"...)
}
