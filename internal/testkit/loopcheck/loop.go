package loopcheck

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Loop is one render loop, drawn from a seed: what the application
// enables, how it uses the profiler, and, frame by frame (plan), what it
// records and submits. Every choice comes from the seed and the frame's
// number alone, never from what the library answered, so that a seed
// replays exactly.
type Loop struct {
	Seed   uint64
	Frames int
	// Declared is GPUOptions.FramesInFlight; Ring the frames the
	// application really keeps in flight (its fences). LateWait: Ring is
	// more than Declared, the application waits later than it says.
	Declared, Ring int
	LateWait       bool
	HostReset      bool // Existing.HostQueryReset, the feature enabled
	Calibrated     bool // Existing.CalibratedTimestamps, the extension enabled
	// Without calibrated timestamps: Calibrate > 0 calls GPU.Calibrate
	// every Calibrate frames on the loop's goroutine; 0 gives
	// CalibrationOptions.FallbackQueue and the application's queue lock.
	Calibrate  int
	Queues     int // how many of the device's queues it profiles, each with a context
	Goroutines int // recording goroutines, each with a command pool per frame and family
	Labels     bool
	Queries    uint32 // GPUOptions.QueriesPerFrame (0: the default)
	MaxQueries uint32 // GPUOptions.MaxQueriesPerFrame
	// The recorder: a flight recorder's window, a small MaxSpans, a
	// streaming sink flushed every FlushEvery frames, the live view.
	Window, MaxSpans int
	Sink             bool
	FlushEvery       int
	FramesNoWait     bool // profiler.Options.FramesNoWait
	Live             bool
	Recreate         map[int]Recreate // by frame
	NoCollectFrom    int              // a stretch of frames without Collect: [NoCollectFrom, NoCollectTo)
	NoCollectTo      int
	BigFrame         int // a frame whose zones outgrow the query pool; 0: none
	SparseEvery      int // only every this many frames have GPU work (a queue used now and then); 0: most
	// Boundary: the README's loop, with Profiler.BeginFrame as the only
	// frame call (it ends the last frame and collects every context): no
	// Profiler.EndFrame, no Collect or Drain.
	Boundary           bool
	NoSubmittedEvery   int // every this many frames, no GPU.Submit at all (the frame asks for no arrows); 0: never
	MisuseEvery        int // every this many zones, a misuse; 0: none
	UnsubmittedCBEvery int // every this many command buffers, one is recorded and never submitted; 0: none
	// Stats: every context counts the pipeline statistics its queue can
	// (GPUOptions.PipelineStatistics), and command buffers of queues with
	// compute dispatch work of known size (64 invocations a workgroup).
	// Such a loop keeps to what counting asks of an application: no zone
	// across command buffers, none left open, secondaries executed
	// outside every zone.
	Stats bool
	// API10: the application's instance is of Vulkan 1.0, as Gio's is: it
	// enables neither host query reset nor calibrated timestamps, and the
	// validation layer reports any Vulkan 1.1 call the profiler makes.
	API10 bool
	// Recordings: each frame slot has, on each queue that can time one, a
	// command buffer recorded once (GPU.Record) and submitted in the
	// slot's frames, recorded again every RecordEvery frames (0: only
	// when its context is made again).
	Recordings  bool
	RecordEvery int
	// With MisuseEvery, a recording recorded in frame f of slot s leaves
	// its Recording.End out where (f+s)%MisuseEvery is 0.
	//
	// CachedSecondaries: with Recordings, each frame slot also has, on
	// each such queue, a secondary recorded once and executed by the
	// first primary of its queue in the slot's frames.
	CachedSecondaries bool
	// Timeline: the application waits for its frames on a timeline
	// semaphore a queue, not on fences, and chains its queues by them;
	// WaitBeforeSignal: it submits a frame's queues last first, each
	// waiting for a value the next submission signals, so that they
	// complete out of the order the CPU submitted them in.
	Timeline, WaitBeforeSignal bool
	// Submit2: submissions and barriers go through synchronization2
	// (vkQueueSubmit2KHR, vkCmdPipelineBarrier2KHR).
	Submit2 bool
	// Rendering: on graphics queues, every other primary records its
	// zones inside dynamic rendering instances (vkCmdBeginRenderingKHR),
	// ended for GPU work that may not run in one.
	Rendering bool
	// Twin: a second device on the same physical device, alive for the
	// whole run, wrapped on the same profiler, with zones every frame.
	Twin bool
	// Simultaneous: with Recordings, every frame slot shares one
	// primary recording a queue, begun with the
	// simultaneous-use flag and submitted in every frame, so that it is
	// pending up to Ring times at once; recorded again (RecordEvery, or
	// contexts made again) once the application has waited for every
	// frame.
	Simultaneous bool
	// Resubmit, with misuse: each frame slot has a command buffer
	// recorded once, with zones and without GPU.Record, and submitted
	// again in the slot's later frames (the pattern the library refuses;
	// the validation layer reports its queries).
	Resubmit bool
}

// Recreate is what the application makes again at a frame.
type Recreate int

const (
	RecreateContexts Recreate = iota + 1 // GPU.Close and Profiler.GPU on the same queues
	RecreateWrapper                      // Device.Close and WrapDevice again on the same VkDevice
	RecreateDevice                       // vkDestroyDevice and vkCreateDevice, then WrapDevice
)

func (r Recreate) String() string {
	return [...]string{"", "contexts", "wrapper", "device"}[r]
}

// device is what the generator needs to know of the device.
type device struct {
	queues               int // queues with timestamps the application made
	hostReset, calibrate bool
	pipelineStats        bool // pipelineStatisticsQuery
	timeline, sync2      bool // timeline semaphores, synchronization2
	rendering            bool // dynamic rendering
}

// Gen draws the loop of seed for d.
func Gen(seed uint64, d device) Loop {
	rng := rand.New(rand.NewPCG(seed, 0x100bc7ec))
	pick := func(p float64) bool { return rng.Float64() < p }
	l := Loop{Seed: seed, Frames: 12 + rng.IntN(60)}
	l.Declared = 1 + rng.IntN(16)
	l.Ring = 1 + rng.IntN(l.Declared)
	if pick(0.3) {
		l.Ring = l.Declared // as many as it declares
	}
	if pick(0.05) {
		l.LateWait = true
		l.Ring = l.Declared + 1 + rng.IntN(2)
	}
	l.HostReset = d.hostReset && pick(0.75)
	l.Calibrated = d.calibrate && pick(0.8)
	if !l.Calibrated && pick(0.7) {
		l.Calibrate = 1 + rng.IntN(8)
	}
	l.Queues = 1 + rng.IntN(max(1, min(d.queues, 5)))
	l.Goroutines = 1 + rng.IntN(3)
	l.Labels = pick(0.2)
	if pick(0.3) {
		l.Queries = 2 * uint32(1+rng.IntN(64))
		l.MaxQueries = l.Queries * uint32(1+rng.IntN(8))
	}
	if pick(0.25) {
		l.Window = 1 + rng.IntN(30)
	}
	if pick(0.1) {
		l.MaxSpans = 50 + rng.IntN(500)
	}
	if pick(0.35) {
		l.Sink = true
		l.FlushEvery = rng.IntN(8)
	}
	l.Live = pick(0.2)
	l.Recreate = map[int]Recreate{}
	for range rng.IntN(3) {
		l.Recreate[1+rng.IntN(l.Frames-1)] = Recreate(1 + rng.IntN(3))
	}
	if pick(0.3) {
		l.NoCollectFrom = rng.IntN(l.Frames)
		l.NoCollectTo = l.NoCollectFrom + 1 + rng.IntN(40)
	}
	if pick(0.1) {
		l.BigFrame = 1 + rng.IntN(l.Frames)
	}
	if pick(0.2) {
		l.NoSubmittedEvery = 2 + rng.IntN(10)
	}
	if pick(0.4) {
		l.MisuseEvery = 5 + rng.IntN(60)
	}
	if pick(0.3) {
		l.UnsubmittedCBEvery = 3 + rng.IntN(20)
	}
	// Draws added later go last, so that older seeds keep their loops.
	if pick(0.1) {
		l.SparseEvery = 5 + rng.IntN(40)
		l.Frames += 2 * l.SparseEvery
	}
	l.Boundary = pick(0.3)
	l.Stats = d.pipelineStats && pick(0.3)
	if pick(0.3) {
		l.Recordings = true
		if pick(0.5) {
			l.RecordEvery = 2 + rng.IntN(20)
		}
		l.CachedSecondaries = pick(0.5)
	}
	if pick(0.15) {
		// Neither host query reset nor calibrated timestamps without
		// Vulkan 1.1: the application calibrates, or gives a queue.
		l.API10, l.HostReset = true, false
		if l.Calibrated {
			l.Calibrated = false
			if pick(0.7) {
				l.Calibrate = 1 + rng.IntN(8)
			}
		}
	}
	if pick(0.25) && d.timeline && !l.API10 {
		l.Timeline, l.WaitBeforeSignal = true, pick(0.5)
	}
	l.Submit2 = pick(0.25) && d.sync2 && !l.API10
	l.Rendering = pick(0.25) && d.rendering && !l.API10 && !l.Stats
	l.Twin = pick(0.15)
	// Not with late waits: a command buffer that comes back after its
	// frame's slot went to a later frame has overwritten that frame's
	// zones before the library could know (docs/design.md).
	l.Resubmit = pick(0.3) && l.MisuseEvery > 0 && !l.Stats && !l.LateWait
	l.Simultaneous = pick(0.6) && l.Recordings && !l.LateWait
	// Frame boundaries that leave their work to the recorder's goroutine
	// (Options.FramesNoWait), as the layer's do.
	l.FramesNoWait = pick(0.3)
	return l
}

// String describes the loop on one line, for a failing seed's message.
func (l Loop) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d frames, %d declared in flight, ring %d", l.Seed, l.Frames, l.Declared, l.Ring)
	flag := func(on bool, s string) {
		if on {
			b.WriteString(", " + s)
		}
	}
	flag(l.LateWait, "waits late")
	flag(l.API10, "Vulkan 1.0 instance")
	flag(l.Recordings, fmt.Sprintf("recordings (again every %d)", l.RecordEvery))
	flag(l.CachedSecondaries, "cached secondaries")
	flag(l.Simultaneous, "recordings shared by every slot, simultaneous use")
	flag(!l.HostReset, "no host query reset")
	flag(!l.Calibrated, fmt.Sprintf("no calibrated timestamps (calibrate every %d, 0: fallback queue)", l.Calibrate))
	fmt.Fprintf(&b, ", %d queues, %d goroutines", l.Queues, l.Goroutines)
	flag(l.Labels, "labels")
	flag(l.Queries != 0, fmt.Sprintf("queries %d..%d", l.Queries, l.MaxQueries))
	flag(l.Window != 0, fmt.Sprintf("window %d", l.Window))
	flag(l.MaxSpans != 0, fmt.Sprintf("MaxSpans %d", l.MaxSpans))
	flag(l.Sink, fmt.Sprintf("sink every %d", l.FlushEvery))
	flag(l.FramesNoWait, "frame boundaries that do not wait")
	flag(l.Live, "live view")
	for f := range l.Frames {
		if r := l.Recreate[f]; r != 0 {
			fmt.Fprintf(&b, ", %s again at %d", r, f)
		}
	}
	flag(l.NoCollectTo > 0, fmt.Sprintf("no Collect in %d..%d", l.NoCollectFrom, l.NoCollectTo))
	flag(l.BigFrame != 0, fmt.Sprintf("big frame %d", l.BigFrame))
	flag(l.Boundary, "frame boundary only")
	flag(l.SparseEvery != 0, fmt.Sprintf("GPU work every %d frames", l.SparseEvery))
	flag(l.NoSubmittedEvery != 0, fmt.Sprintf("no Submitted every %d", l.NoSubmittedEvery))
	flag(l.MisuseEvery != 0, fmt.Sprintf("misuse every %d zones", l.MisuseEvery))
	flag(l.UnsubmittedCBEvery != 0, fmt.Sprintf("unsubmitted every %d command buffers", l.UnsubmittedCBEvery))
	flag(l.Stats, "pipeline statistics")
	flag(l.Timeline, "timeline semaphores")
	flag(l.WaitBeforeSignal, "queues submitted last first (wait before signal)")
	flag(l.Submit2, "vkQueueSubmit2")
	flag(l.Rendering, "dynamic rendering")
	flag(l.Twin, "a second device alive")
	flag(l.Resubmit, "command buffers submitted again without Record")
	return b.String()
}

// plan is one frame: for each profiled queue, its command buffers (nil:
// the queue has no work this frame), and how they are submitted.
type plan struct {
	queues    [][]cbPlan
	submits   [][][]int // per queue: groups of command buffer indices, one vkQueueSubmit each, in order
	endNil    []bool    // per queue: GPU.EndFrame(nil)
	collect   int       // 0 Collect, 1 Drain, 2 neither
	submitted bool      // GPU.Submit is called
}

// cbPlan is one primary command buffer: the goroutine that records it,
// its script, its secondaries' scripts, and whether they are named to
// Submitted with it.
type cbPlan struct {
	goroutine   int
	script      []op
	secondaries [][]op
	nameSecs    bool
	unsubmitted bool
	// crossTo: the innermost zone left open at the end of this command
	// buffer is ended (EndIn) at the start of command buffer crossTo,
	// recorded later by the same goroutine; -1: none.
	crossTo int
}

// op is one step of a command buffer's script.
type op uint8

const (
	opBegin     op = iota // GPU.Zone, named by its place in the script
	opEnd                 // End the innermost open zone
	opFill                // a little GPU work
	opEndTwice            // End the innermost open zone, then End it again (misuse)
	opLeaveOpen           // the innermost open zone is never ended (misuse)
	opZeroEnd             // End the zero Zone (misuse)
	opExecute             // execute the secondaries here
	opDispatch            // a dispatch of known size (Loop.Stats)
)

// frame draws frame f's plan. Frames of the same seed and number are the
// same, whatever happened before.
func (l Loop) frame(f int) plan {
	rng := rand.New(rand.NewPCG(l.Seed, uint64(f)+1))
	var p plan
	if f >= l.NoCollectFrom && f < l.NoCollectTo {
		p.collect = 2
	} else if rng.IntN(20) == 0 {
		p.collect = 1
	}
	p.submitted = l.NoSubmittedEvery == 0 || f%l.NoSubmittedEvery != 0
	empty := rng.IntN(10) == 0 || (l.SparseEvery > 0 && f%l.SparseEvery != 0)
	p.queues = make([][]cbPlan, l.Queues)
	p.submits = make([][][]int, l.Queues)
	p.endNil = make([]bool, l.Queues)
	cbSerial := f * 16
	for q := range l.Queues {
		if empty || (q > 0 && rng.IntN(3) == 0) {
			continue
		}
		n := 1 + rng.IntN(4)
		cbs := make([]cbPlan, n)
		for i := range cbs {
			cbSerial++
			c := cbPlan{goroutine: i % l.Goroutines, crossTo: -1, nameSecs: rng.IntN(10) != 0}
			zones := rng.IntN(14)
			if l.BigFrame > 0 && f == l.BigFrame {
				zones = 2200 / n
			}
			c.script = l.script(rng, zones, len(c.secondaries) > 0)
			for range rng.IntN(3) {
				c.secondaries = append(c.secondaries, l.script(rng, rng.IntN(6), false))
			}
			if len(c.secondaries) > 0 {
				at := rng.IntN(len(c.script) + 1)
				if l.Stats {
					at = 0 // outside every zone: no query active at vkCmdExecuteCommands
				}
				c.script = append(c.script[:at], append([]op{opExecute}, c.script[at:]...)...)
			}
			c.unsubmitted = i > 0 && l.UnsubmittedCBEvery > 0 && cbSerial%l.UnsubmittedCBEvery == 0
			cbs[i] = c
		}
		// A zone across command buffers: begun at the end of one, ended
		// at the start of a later one of the same goroutine.
		for i := range cbs {
			for j := i + 1; j < len(cbs); j++ {
				if cbs[j].goroutine == cbs[i].goroutine && !cbs[i].unsubmitted && !cbs[j].unsubmitted && rng.IntN(4) == 0 && !l.Stats {
					cbs[i].script = append(cbs[i].script, opBegin)
					cbs[i].crossTo = j
					break
				}
			}
		}
		p.queues[q] = cbs
		p.submits[q] = groups(rng, len(cbs))
		p.endNil[q] = rng.IntN(5) == 0
	}
	return p
}

// groups splits n command buffers, in order, into submissions: all in
// one, each alone, or some of each.
func groups(rng *rand.Rand, n int) [][]int {
	var out [][]int
	cur := []int{0}
	for i := 1; i < n; i++ {
		if rng.IntN(2) == 0 {
			out = append(out, cur)
			cur = nil
		}
		cur = append(cur, i)
	}
	return append(out, cur)
}

// script draws a command buffer's zones: a walk that opens and closes
// zones up to 8 deep, with GPU work between, and misuse now and then.
func (l Loop) script(rng *rand.Rand, zones int, _ bool) []op {
	var s []op
	depth := 0
	for z := 0; z < zones || depth > 0; {
		switch {
		case z < zones && depth < 8 && (depth == 0 || rng.IntN(2) == 0):
			s = append(s, opBegin)
			depth++
			z++
		case depth > 0:
			end := opEnd
			if l.MisuseEvery > 0 && rng.IntN(l.MisuseEvery) == 0 {
				end = []op{opEndTwice, opLeaveOpen, opZeroEnd}[rng.IntN(3)]
				if end == opLeaveOpen && l.Stats {
					end = opEndTwice // a zone left open would leave its query active
				}
			}
			if end == opZeroEnd {
				s = append(s, opZeroEnd)
				end = opEnd
			}
			s = append(s, end)
			depth--
		}
		if rng.IntN(3) == 0 {
			s = append(s, opFill)
		}
		if l.Stats && rng.IntN(3) == 0 {
			s = append(s, opDispatch)
		}
	}
	return s
}
