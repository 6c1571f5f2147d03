package profiler

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// GPUOptions configure a GPU context. Zero fields take defaults.
type GPUOptions struct {
	// BeginStage and EndStage are the pipeline stages of a zone's two
	// timestamps. Defaults: TOP_OF_PIPE and BOTTOM_OF_PIPE. GPU refuses a
	// stage vkCmdWriteTimestamp may not take on the queue: not one bit,
	// HOST, one the queue's family lacks, and, on a device OpenDevice made
	// (which enables no optional feature or extension stage), the
	// geometry and tessellation stages and extension stages. On a device
	// from WrapDevice those last are the application's to know.
	BeginStage, EndStage vkg.PipelineStageFlagBits
	// FramesInFlight: by the time the application begins frame N
	// (Profiler.BeginFrame) it has waited for frame N-FramesInFlight's GPU
	// work (its fences). 1 to 16; 0 means 3. The profiler waits for each frame's zones as long as this
	// makes them late, so nothing else needs raising with it. It must not
	// be less than the frames the application really keeps in flight: a
	// query slot is reset for reuse that many frames after its frame, and
	// the validation layer reports a reset that races GPU work still
	// pending (a readback copy not yet run is read again later, so its
	// zones still arrive).
	FramesInFlight int
	// QueriesPerFrame is the initial query budget of a frame (two per
	// zone); MaxQueriesPerFrame bounds its growth. Defaults 512 and 32768;
	// at most 65536; odd values are rounded up. Each frame
	// in flight holds up to 40 bytes a query (query pool, host copy,
	// results, names). With host query reset, a frame that needs more
	// gets them in the frame: the Zone that finds it full makes a query
	// pool as large as the frame's so far (once per doubling, a driver
	// call on that Zone's goroutine), and later frames start larger.
	// Without it, zones past the frame's budget are refused and counted
	// (Drops.QueryLimit), and later frames start larger.
	QueriesPerFrame, MaxQueriesPerFrame uint32
	// DebugLabels mirrors each zone as a debug-utils label, so RenderDoc
	// and Nsight captures show the same names. It needs VK_EXT_debug_utils
	// on the instance (for WrapDevice, Existing.DebugUtils): without it GPU
	// fails with ErrNoDebugLabels rather than leave the labels out.
	DebugLabels bool

	// PipelineStatistics are the pipeline statistics each zone counts
	// besides its time (ZoneResult.Work, timeline.Span.Work): a set of
	// VkQueryPipelineStatisticFlagBits, such as
	// timeline.FragmentShaderInvocations|timeline.ComputeShaderInvocations,
	// or timeline.AllPipelineStats. GPU refuses them, with an error,
	// on a device without the pipelineStatisticsQuery feature enabled
	// (OpenDevice enables it where offered; for WrapDevice,
	// Existing.PipelineStatisticsQuery), and on a queue whose family
	// lacks graphics operations (every statistic but
	// ComputeShaderInvocations) or compute (ComputeShaderInvocations).
	// Counting adds obligations to the zones: see "Work" in the package
	// doc.
	PipelineStatistics PipelineStats

	// CalibrateEvery is the interval of the background rounds that
	// sample the device clock against the host's to feed the clock model
	// (default 1s, at least 1ms). Negative: no background rounds; the
	// application calls [GPU.Calibrate] itself.
	CalibrateEvery time.Duration
	// FallbackQueue is a queue the profiler may submit to from its own
	// goroutine for submit-and-wait sampling, on a device without
	// calibrated timestamps. vkQueueSubmit needs the queue externally
	// synchronized, so it comes with FallbackLock, the lock the
	// application holds around everything it does to that queue that
	// Vulkan wants synchronized (vkQueueSubmit, vkQueueWaitIdle,
	// vkQueuePresentKHR, vkDeviceWaitIdle...); GPU refuses one without
	// the other. The profiler holds it around each of its own
	// submissions, never while waiting for the GPU, and so does
	// GPU.Calibrate: do not call Calibrate holding it. Profiler.GPU
	// never takes it: the first sample comes from the context's own
	// goroutine, and zones read back before it wait for it, so an
	// application may make the context while it holds the lock. Without
	// FallbackQueue, such a device is calibrated only when the
	// application calls GPU.Calibrate from the goroutine that owns the
	// context's queue.
	FallbackQueue *Queue
	FallbackLock  sync.Locker
	// Clock is the host clock GPU time is placed on (default
	// ClockMonotonic).
	Clock HostClock

	calib calibration // what the above leaves at its defaults, for tests and the clock check
}

// calibration returns the context's calibration settings: o.calib with
// the public fields over it.
func (o GPUOptions) calibration() calibration {
	c := o.calib
	if o.CalibrateEvery != 0 {
		c.Interval = o.CalibrateEvery
	}
	if o.FallbackQueue != nil {
		c.FallbackQueue = o.FallbackQueue
	}
	if o.FallbackLock != nil {
		c.FallbackLock = o.FallbackLock
	}
	if o.Clock != ClockMonotonic {
		c.Clock = o.Clock
	}
	return c
}

// Stats counts what a GPU context did and everything it had to drop.
//
// The book: Issued = Delivered + Open + the zones lost under each cause of
// Drops, which Balanced checks. Open is counted from the query slots, not
// from the other counts, so the book balances only when each zone was
// counted once, where it ended; after Close, Open is 0.
type Stats struct {
	Issued    uint64 // zones begun (GPU.Zone calls), refused ones included; a recording's, once each execution
	Delivered uint64 // zones converted: handed to the timeline (on ClockMonotonicRaw, returned by Collect alone)
	Open      uint64 // zones in flight: not read back or given up yet, or read back and not collected
	// Drops counts the context's losses under the names every trace and
	// framescope stats use: zones refused (QueryLimit, NoFrame, Closed),
	// never ended (Unended), never executed (Unsubmitted), not read back
	// at Close (Pending), read back before any calibration
	// (Uncalibrated); zones that reached the timeline without their
	// submission's arrow, their command buffer named by no Submit of
	// their frame that had some (Flows); and misuse that lost nothing,
	// zones ended twice or after their frame was given up (Misuse).
	Drops    timeline.Drops
	Grown    uint64 // frames' query pools made larger after a frame ran out
	Extended uint64 // query pools made in a frame that outgrew its own (host query reset)
	Behind   uint64 // frames that found no free slot
	// Resubmitted counts the command buffers a Submit named that hold
	// zones of an earlier frame and none of their own: submitted again
	// without being recorded again, which the library refuses unless
	// made a recording (GPU.Record): their later executions are not timed
	// and write queries without a reset (each execution's zones are
	// counted in Drops.RunAgain), and the earlier frame's queries are
	// kept out of use so that no later frame's zones share them. A
	// command buffer recorded again without zones counts here too.
	Resubmitted uint64
	// Calibrations counts the samples of the device and host clocks the
	// context's clock model was fed (in the background and by
	// GPU.Calibrate), and CalibrationErrors the attempts that failed: the
	// model then keeps its last fit. GPU.Calibrate returns its error; the
	// background's are only counted here.
	Calibrations      uint64
	CalibrationErrors uint64
	// LastCalibrationError is the error of the latest attempt that failed
	// ("" when none did): why the background rounds fail, which no call
	// returns ("profiler: calibration submission took over 100ms", ...).
	LastCalibrationError string
	// WorkMissing counts the zones read back without their pipeline
	// statistics, by reason (indexed by timeline.WorkMissing; their sum
	// is Drops.Work). Their time is delivered as any other zone's.
	WorkMissing [timeline.NumWorkMissing]uint64
	// Unread says what the profiler could not read of the device, and
	// why ("" when nothing): with Existing.APIVersion left 0, the
	// device's UUID and driver name, which need the instance's Vulkan
	// 1.1. Nothing is lost for it: two devices of one model in one
	// instance are then told apart by their place in its list.
	Unread string
}

// ErrClosed is returned after GPU.Close.
var ErrClosed = errors.New("profiler: GPU context is closed")

// ErrNoDebugLabels is returned by Profiler.GPU when GPUOptions.DebugLabels
// is asked for on a device without VK_EXT_debug_utils.
var ErrNoDebugLabels = errors.New("profiler: DebugLabels needs VK_EXT_debug_utils, which the device's instance lacks")

// ErrDeviceClosed is returned by a GPU context whose Device was closed
// (which closed the context first), and by Profiler.GPU on a closed
// Device. errors.Is(ErrDeviceClosed, ErrClosed) holds.
var ErrDeviceClosed error = deviceClosedError{}

type deviceClosedError struct{}

func (deviceClosedError) Error() string {
	return "profiler: the device was closed, and the GPU context with it"
}

func (deviceClosedError) Is(target error) bool { return target == ErrClosed }

// GPU is the profiling context of one VkQueue.
type GPU struct {
	p     *Profiler
	dev   *vk.Device
	queue Queue
	track timeline.TrackID
	src   *record.GPUSource // tells the recorder how far results are in
	// others are the family's other queues SubmitOn was given, and
	// their tracks: the pool's queue i+1 is others[i].
	othersMu sync.RWMutex
	others   []otherQueue
	devName  string // the device's name on its tracks
	pool     *querypool.Pool
	begin    vkg.PipelineStageFlagBits
	end      vkg.PipelineStageFlagBits
	labels   bool
	work     bool // counts pipeline statistics
	// extra: labels or work; the zone path tests it alone.
	extra bool
	// czones are the zone paths Recording.C handed to C, by command
	// buffer, until the recording's End (or Freed, or Close).
	czMu   sync.Mutex
	czones map[vkg.CommandBuffer]*querypool.CZones

	clock *clock.Model
	cal   *calibrator
	seat  *seat // its device's place on the profiler (identity.go)

	state    atomic.Uint32 // stateOpen, stateClosed or stateDeviceClosed
	life     sync.Mutex    // Close and the device's close, one at a time
	released bool          // under life: the pools and the calibrator's objects are gone
	unreg    func()        // leaves the device's list of users

	// handMu orders the context's calls on the recorder (collect.go's
	// handOver); it is taken before mu, and held past it.
	handMu    sync.Mutex
	mu        sync.Mutex    // frames, collection
	frame     atomic.Uint64 // the frame of the last BeginFrame, for Submit
	raw       []querypool.Result
	held      []querypool.Result // read before the first calibration, to convert after it (collect.go)
	spans     []record.GPUSpan
	nest      nesting  // convert's, under handMu
	snaps     keySnaps // likewise
	lastCal   int64
	ownClock  bool // zones are on another clock than the timeline's: not added to it
	unconv    atomic.Uint64
	unlinked  atomic.Uint64         // zones whose command buffer no Submit of their frame named
	delivered atomic.Uint64         // zones converted: handed to the timeline, or returned by Collect
	manual    atomic.Bool           // the application collects: Profiler.BeginFrame leaves the context to it
	err       atomic.Pointer[error] // the first lasting fault (Err)
	final     bool                  // under mu: finish made the context's last delivery; refusals since are reported by reportLate
}

// Limits of GPUOptions.
const (
	maxFramesInFlight  = 16
	maxQueriesPerFrame = 1 << 16
)

// check validates o against the limits, naming the option.
func (o GPUOptions) check() error {
	if o.FramesInFlight < 0 || o.FramesInFlight > maxFramesInFlight {
		return fmt.Errorf("profiler: GPUOptions.FramesInFlight %d: must be 1 to %d (0 for the default 3)", o.FramesInFlight, maxFramesInFlight)
	}
	if o.QueriesPerFrame > maxQueriesPerFrame {
		return fmt.Errorf("profiler: GPUOptions.QueriesPerFrame %d: at most %d", o.QueriesPerFrame, maxQueriesPerFrame)
	}
	if o.MaxQueriesPerFrame > maxQueriesPerFrame {
		return fmt.Errorf("profiler: GPUOptions.MaxQueriesPerFrame %d: at most %d", o.MaxQueriesPerFrame, maxQueriesPerFrame)
	}
	if o.MaxQueriesPerFrame != 0 && o.QueriesPerFrame > o.MaxQueriesPerFrame {
		return fmt.Errorf("profiler: GPUOptions.QueriesPerFrame %d exceeds MaxQueriesPerFrame %d", o.QueriesPerFrame, o.MaxQueriesPerFrame)
	}
	if rest := o.PipelineStatistics &^ timeline.AllPipelineStats; rest != 0 {
		return fmt.Errorf("profiler: GPUOptions.PipelineStatistics %#x: bits %#x are not among the %d statistics of Vulkan 1.0 (%#x)",
			uint32(o.PipelineStatistics), uint32(rest), timeline.NumPipelineStats, uint32(timeline.AllPipelineStats))
	}
	return o.calibration().check()
}

// GPU.state values.
const (
	stateOpen uint32 = iota
	stateClosed
	stateDeviceClosed
)

var nextKey atomic.Uint64

// GPU makes the profiling context of queue q on dev.
func (p *Profiler) GPU(dev *Device, q Queue, o GPUOptions) (*GPU, error) {
	if dev == nil || dev.d == nil {
		return nil, errors.New("profiler: GPU needs a Device")
	}
	if dev.d.Closed() {
		return nil, ErrDeviceClosed
	}
	q, err := dev.resolve(q)
	if err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := checkReset("queue", q, dev.d.HostQueryReset); err != nil {
		return nil, err
	}
	cal := o.calibration()
	if cal.FallbackLock != nil && cal.FallbackQueue == nil {
		return nil, errors.New("profiler: GPUOptions.FallbackLock without FallbackQueue: give the queue the profiler may submit to with it, or neither")
	}
	if fq := cal.FallbackQueue; fq != nil {
		if cal.FallbackLock == nil {
			return nil, errors.New("profiler: GPUOptions.FallbackQueue needs FallbackLock, the lock the application holds around its own submissions to that queue")
		}
		rq, err := dev.resolve(*fq)
		if err != nil {
			return nil, fmt.Errorf("GPUOptions.FallbackQueue: %w", err)
		}
		if err := checkReset("GPUOptions.FallbackQueue", rq, dev.d.HostQueryReset); err != nil {
			return nil, err
		}
		cal.FallbackQueue = &rq
	}
	if o.BeginStage == 0 {
		o.BeginStage = vkg.PipelineStageTopOfPipeBit
	}
	if o.EndStage == 0 {
		o.EndStage = vkg.PipelineStageBottomOfPipeBit
	}
	if o.DebugLabels && !dev.d.HasLabels() {
		if dev.d.Borrowed() {
			return nil, fmt.Errorf("%w (for WrapDevice: enable it on the instance and set Existing.DebugUtils), or leave DebugLabels off", ErrNoDebugLabels)
		}
		return nil, fmt.Errorf("%w (the Vulkan loader does not offer it), or leave DebugLabels off", ErrNoDebugLabels)
	}
	if err := checkStats(o.PipelineStatistics, q, dev.d); err != nil {
		return nil, err
	}
	own := !dev.d.Borrowed()
	if err := checkStage("BeginStage", o.BeginStage, q, own); err != nil {
		return nil, err
	}
	if err := checkStage("EndStage", o.EndStage, q, own); err != nil {
		return nil, err
	}
	pool, err := querypool.New(dev.d, querypool.Config{
		ValidBits: q.ValidBits,
		// On an H100, vkCmdCopyQueryPoolResults with its barriers lost the
		// device on two of the transfer-only families (1 and 3); the copy
		// path is kept to graphics and compute queues.
		NoCopy:         !q.Flags.Has(QueueGraphics) && !q.Flags.Has(QueueCompute),
		FramesInFlight: o.FramesInFlight,
		Now:            cal.Clock.now,
		Queries:        o.QueriesPerFrame,
		MaxQueries:     o.MaxQueriesPerFrame,
		Stats:          o.PipelineStatistics,
	})
	if errors.Is(err, vk.ErrDeviceClosed) {
		return nil, ErrDeviceClosed
	}
	if err != nil {
		return nil, err
	}
	// The pool's frame clock starts at the application's frame now, not
	// at 0: a context made mid-run must not take its first executions
	// for ones that frame number old (StaleFrames) before it sees a frame
	// begin.
	pool.Advance(p.rec.LastFrame())
	caps := dev.d.Caps
	clock, err := clock.New(clock.Options{
		PeriodNs:  float64(caps.TimestampPeriod),
		ValidBits: uint(q.ValidBits),
	})
	if err != nil {
		pool.Close()
		return nil, err
	}
	g := &GPU{
		p: p, dev: dev.d, queue: q, pool: pool,
		begin: o.BeginStage, end: o.EndStage,
		labels: o.DebugLabels,
		work:   o.PipelineStatistics != 0,
		extra:  o.DebugLabels || o.PipelineStatistics != 0,
		clock:  clock,
	}
	p.mu.Lock()
	name, st := p.seatFor(dev.d)
	p.mu.Unlock()
	g.seat, g.devName = st, name
	g.track = p.rec.QueueTrack(timeline.Queue{Device: name, Family: q.Family, Index: q.Index, Flags: q.Flags.String()})
	g.src = p.rec.GPUSource(g.track)
	g.ownClock = cal.Clock != ClockMonotonic
	// The resets a Collect leaves: made on the recorder's goroutine
	// after it places the zones, when it is woken for that anyway.
	g.src.AfterPlace(pool.ResetDue)
	// Closing the device closes the context first: the calibrator stops
	// before the device goes idle, its objects go after. The context is
	// on the device's list before its calibrator first calls into the
	// device, and the calibrator is made under the context's life lock,
	// which the device's Close takes: a Close that comes meanwhile waits
	// for it, then stops it.
	g.life.Lock()
	g.unreg, err = dev.d.OnClose(g.deviceStop, g.deviceRelease)
	if err != nil {
		g.life.Unlock()
		g.src.Close()
		pool.Close()
		p.unseat(st)
		return nil, ErrDeviceClosed
	}
	g.cal, err = newCalibrator(g, cal)
	if err != nil {
		g.unreg()
		g.state.Store(stateClosed)
		g.released = true
		g.life.Unlock()
		g.src.Close()
		pool.Close()
		p.unseat(st)
		return nil, err
	}
	g.life.Unlock()
	p.mu.Lock()
	p.gpus = append(p.gpus, g)
	p.mu.Unlock()
	return g, nil
}

// Track returns the timeline track of the queue.
func (g *GPU) Track() timeline.TrackID { return g.track }

// Clock returns the queue's clock model.
func (g *GPU) Clock() *clock.Model { return g.clock }

// BeginFrame starts recording the profiler's current frame on this queue.
// Without host query reset, cmd must be a command buffer in the recording
// state, outside a render pass, that the queue runs before any zone of the
// frame (its first): the library records its query reset there. With host
// query reset cmd may be nil.
//
// When it cannot begin (every query slot still in flight, the context
// closed, or no cmd where one is needed) the frame's zones are refused and
// counted (Drops.NoFrame, Drops.Closed), the next frame tries again, and a
// missing cmd is kept for [GPU.Err].
func (g *GPU) BeginFrame(cmd vkg.CommandBuffer) {
	if g.state.Load() != stateOpen {
		return
	}
	f := g.p.rec.Frame()
	g.handMu.Lock()
	g.mu.Lock()
	err := g.poolErr(g.pool.BeginFrame(f, cmd))
	g.frame.Store(f) // after the pool has the frame's slot: Submit names it there
	// Refusals reach the trace even if the application never collects.
	h := g.handoffLocked(nil)
	g.mu.Unlock()
	g.handOver(h)
	g.handMu.Unlock()
	if errors.Is(err, querypool.ErrNeedResetCmd) {
		g.keep(err)
	}
}

// refusal is the error of a closed context.
func (g *GPU) refusal() error {
	if g.state.Load() == stateDeviceClosed {
		return ErrDeviceClosed
	}
	return ErrClosed
}

// poolErr turns the pool's ErrClosed (the context closed meanwhile) into
// the context's own.
func (g *GPU) poolErr(err error) error {
	if errors.Is(err, querypool.ErrClosed) {
		return g.refusal()
	}
	return err
}

// EndFrame closes the frame on this queue: zones begun later belong to no
// frame until the next BeginFrame, and are refused and counted. With no
// frame begun on the queue it does nothing.
//
// cmd should be the last command buffer the queue runs in this frame,
// still recording and outside a render pass: the copy of the frame's
// timestamps into host memory is recorded there, and Collect reads them
// from that memory, with no driver call, once the application has waited
// for the frame (FramesInFlight later). With a nil cmd, and on a
// transfer-only queue (which may not record vkCmdCopyQueryPoolResults),
// the results are read through vkGetQueryPoolResults on a goroutine of the
// context's own, which is fine on most drivers but waits for the whole
// device to go idle on lavapipe.
func (g *GPU) EndFrame(cmd vkg.CommandBuffer) {
	if g.state.Load() != stateOpen {
		return
	}
	g.pool.EndFrame(cmd)
}

// Submit notes that the CPU span s submits cmds in the current frame: the
// trace draws an arrow from s to every zone the command buffers carry.
// Call it while s is open, before the next BeginFrame; a frame may have
// several submissions. Name every command buffer the submission carries,
// secondaries included: a zone recorded in a secondary command buffer
// belongs to the submission of the primary that executes it, and only
// Submit can tell which that is.
//
// A zone whose command buffer no Submit of its frame named gets no arrow,
// and, when its frame had submissions on this context, is counted as a
// lost arrow ([timeline.Drops].Flows, in [Stats].Drops too). A frame with
// no Submit at all asks for no arrows: its zones lose none.
func (g *GPU) Submit(s Span, cmds ...vkg.CommandBuffer) {
	s.s.Submitted(g.submitted(cmds))
}

// submitted notes cmds as one submission of the current frame and returns
// its key.
func (g *GPU) submitted(cmds []vkg.CommandBuffer) uint64 { return g.submittedOn(0, cmds) }

// submittedOn is submitted for a submission to the pool's queue queue.
func (g *GPU) submittedOn(queue uint32, cmds []vkg.CommandBuffer) uint64 {
	key := nextKey.Add(1)
	if g.state.Load() != stateOpen {
		return key
	}
	// No lock of the context's: a collection may hold g.mu, and the
	// application's thread waiting for it (and for the wake after it)
	// made 1 frame in 100 several times slower under the layer. The pool
	// takes both notes under its own lock, and a collection takes its
	// books with its read (Pool.Took).
	g.pool.SubmitOn(g.p.rec.LastFrame(), g.frame.Load(), key, queue, cmds)
	return key
}

// SubmitOn is Submit for a submission to q, another queue of the
// context's family (from Device.Queue): the recordings (Record) it names
// ran on q, and their zones go on q's track, as do the zones carried
// across command buffers (Recording.EndKeepingOpen), which pair on the
// queue they ran on. It is for code that records command buffers before
// it knows which queue of a family will run them (Framescope's layer
// does); code that knows makes a context for each queue. A frame's zones
// (BeginFrame) stay on the context's track. For q the context's own
// queue, or one the device lacks or of another family, it is Submit.
func (g *GPU) SubmitOn(q Queue, s Span, cmds ...vkg.CommandBuffer) {
	s.s.Submitted(g.submittedOn(g.queueCode(q), cmds))
}

// otherQueue is a queue of the context's family other than its own, with
// its track.
type otherQueue struct {
	index uint32
	track timeline.TrackID
}

// queueCode returns the pool's number of q (SubmitOn): 0 for the
// context's own, or one it does not take; i+1 for others[i], which it
// adds on first use, with its track.
func (g *GPU) queueCode(q Queue) uint32 {
	if q.Family != g.queue.Family || q.Index == g.queue.Index {
		return 0
	}
	g.othersMu.RLock()
	for i, o := range g.others {
		if o.index == q.Index {
			g.othersMu.RUnlock()
			return uint32(i) + 1
		}
	}
	g.othersMu.RUnlock()
	if g.state.Load() != stateOpen {
		return 0
	}
	k, err := (&Device{d: g.dev}).resolve(Queue{Family: q.Family, Index: q.Index})
	if err != nil {
		return 0
	}
	g.othersMu.Lock()
	defer g.othersMu.Unlock()
	for i, o := range g.others {
		if o.index == q.Index {
			return uint32(i) + 1
		}
	}
	t := g.p.rec.QueueTrack(timeline.Queue{Device: g.devName, Family: k.Family, Index: k.Index, Flags: k.Flags.String()})
	g.others = append(g.others, otherQueue{index: k.Index, track: t})
	return uint32(len(g.others))
}

// trackOf returns the track of the pool's queue code (0: the context's
// own, given as 0 to the recorder) and the queue's index.
func (g *GPU) trackOf(code uint32) (timeline.TrackID, uint32) {
	if code == 0 {
		return 0, g.queue.Index
	}
	g.othersMu.RLock()
	defer g.othersMu.RUnlock()
	if int(code) > len(g.others) {
		return 0, g.queue.Index
	}
	o := g.others[code-1]
	return o.track, o.index
}

// Stats returns the context's counters. It waits for a collection under
// way on another goroutine, so that no zone is counted between the pool
// and the timeline.
func (g *GPU) Stats() Stats {
	g.handMu.Lock()
	g.mu.Lock()
	b := g.book()
	g.mu.Unlock()
	g.handMu.Unlock()
	q := g.pool.Stats()
	s := Stats{Issued: b.Issued, Delivered: b.Delivered, Open: b.Open, Drops: b.Lost,
		Grown: q.Grown, Extended: q.Extended, Behind: q.Behind, Resubmitted: q.Resubmitted}
	s.Drops.Flows = g.unlinked.Load()
	s.WorkMissing = g.pool.WorkMissing()
	for _, n := range s.WorkMissing {
		s.Drops.Work += n
	}
	s.Calibrations, s.CalibrationErrors, s.LastCalibrationError = g.cal.counts()
	s.Unread = g.dev.Unread
	return s
}

// Balanced reports whether the context's books add up: every zone begun
// was delivered, is open, or was lost under one cause.
func (s Stats) Balanced() bool {
	t, ok := timeline.Sum(s.Delivered, s.Open, books.GPUZones(s.Drops))
	return ok && s.Issued == t
}

// Close stops calibration, collects into the timeline every zone the GPU
// has finished (reading the query pools through the driver), counts what
// it cannot collect (Stats.Pending, Unended), and destroys the query
// pools. Call it once the GPU is done with the command buffers that
// recorded zones (after vkDeviceWaitIdle), and before the application
// destroys a device it made itself (see WrapDevice); closing a Device
// closes its contexts itself. Zone, Zone.End and the rest may run on other
// goroutines meanwhile: Close waits for the calls in progress before it
// destroys anything, and every later call on the context is refused and
// counted, in [GPU.Stats] and in the timeline's books alike; none panics,
// none calls Vulkan.
func (g *GPU) Close() { g.close(false) }

// close is Close; atExit leaves every Vulkan object as it is (see
// Profiler.CloseAtExit).
func (g *GPU) close(atExit bool) {
	g.life.Lock()
	defer g.life.Unlock()
	if !g.state.CompareAndSwap(stateOpen, stateClosed) {
		return
	}
	g.cal.stop()
	g.pool.Stop()
	g.finish()
	g.freeCZones(nil)
	if atExit {
		g.unreg()
		g.p.forget(g)
		return
	}
	g.cal.release()
	g.pool.Close()
	g.released = true
	// Last: until now a Close of the device waits for this one (its
	// deviceStop takes g.life), rather than go on without the context
	// and let the device go while the calibrator still runs.
	g.unreg()
	g.p.forget(g)
}

// finish collects what the GPU finished, counts the rest, and tells the
// recorder the context has nothing more to come: the queue's later frames
// wait for the contexts open on it, if any. The pool is stopped.
func (g *GPU) finish() {
	g.handMu.Lock()
	defer g.handMu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pool.Advance(g.p.rec.LastFrame())
	g.collectLocked(nil, false, g.pool.Finish)
	g.src.Close()
	g.final = true
}

// reportLate hands the recorder the context's books once more, after its
// last delivery: a zone refused (or ended) after the context closed is
// counted in the trace as in [GPU.Stats] (Drops.Closed, Drops.Misuse).
// Only zones of a closed context call it, so the hot path never does.
func (g *GPU) reportLate() {
	g.handMu.Lock()
	defer g.handMu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.final { // before, finish's own delivery counts the refusal
		_ = g.deliverLocked()
	}
}

// deviceStop and deviceRelease close the context for the device's Close
// (see vk.Device.OnClose); the pool, registered before the context, stops
// after it and is released after it.
func (g *GPU) deviceStop() {
	g.life.Lock()
	defer g.life.Unlock()
	if g.state.CompareAndSwap(stateOpen, stateDeviceClosed) {
		g.cal.stop()
	}
}

func (g *GPU) deviceRelease() {
	g.life.Lock()
	defer g.life.Unlock()
	if g.released {
		return // GPU.Close did it all
	}
	g.released = true
	g.finish()
	g.freeCZones(nil) // kept, as at Close: dropped with g, their pins would panic in the collector
	g.cal.release()
	g.p.forget(g)
}
