package profiler

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/stats"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// ClockCheckOptions configure ClockCheck. Zero fields take defaults.
type ClockCheckOptions struct {
	Duration time.Duration // how long to watch the clocks; default 10s
	// SampleEvery is the interval of held-out samples, which the model
	// never sees and is judged on. Default 10ms.
	SampleEvery time.Duration
	// FitEvery is the interval of calibration rounds fed to the model, as
	// a GPU context does in the background (denser during the first
	// interval, as there). Default 1s.
	FitEvery time.Duration
	// CausalityEvery is the interval of causality tries. Default 100ms.
	CausalityEvery time.Duration
	// CausalityTries, when > 0, stops causality tries after that many.
	CausalityTries int
	// Fallback samples by submit-and-wait instead of calibrated timestamps.
	Fallback bool
	// Clock is the host clock to check against. Default ClockMonotonic.
	Clock HostClock
	// Progress, when set, receives a line every few seconds.
	Progress io.Writer
}

// Summary describes a sample of values in ns: count, sum (saturated),
// mean, extremes and percentiles interpolated between order statistics.
type Summary struct {
	Count         int
	Total         int64
	Mean          float64
	Min           int64
	P50, P95, P99 float64
	Max           int64
}

func summarize(xs []int64) Summary {
	s := stats.Summarize(xs)
	return Summary{Count: s.Count, Total: s.Total, Mean: s.Mean, Min: s.Min, P50: s.P50, P95: s.P95, P99: s.P99, Max: s.Max}
}

// ClockCheckReport is what ClockCheck measured.
type ClockCheckReport struct {
	Device, Driver  string
	Method          string  // calibrated timestamps extension, or "submit-and-wait"
	Clock           string  // the host clock
	Seconds         float64 // measured span
	PeriodNs        float64 // timestampPeriod as reported
	ValidBits       uint32
	EffectivePeriod float64 // measured ns per tick, first to last sample
	PeriodErrPPM    float64 // timestampPeriod against the measured period

	Samples      int     // held-out samples
	MaxDeviation Summary // per calibration call, ns
	CallCost     Summary // one calibration call, ns
	Fits         int     // calibration rounds fed to the model

	// Residual: |model prediction - actual host time| on held-out samples, ns.
	Residual Summary
	// OutsideBound counts held-out samples whose residual exceeded the
	// model's stated bound plus the sample's own deviation.
	OutsideBound int
	Model        clock.Quality

	CausalityTries      int
	CausalityViolations int
	CausalityLag        Summary // converted GPU time minus host set time, ns

	// NaiveErrNs is what one start-up sample with the nominal period would
	// have got wrong at the end, ns; ModelErrNs is the model's residual
	// there.
	NaiveErrNs, ModelErrNs int64
}

// ClockCheck watches a device clock against CLOCK_MONOTONIC on queue q for
// o.Duration: it fits the model as a GPU context would and judges it on
// held-out samples, checks causality with events, and reports what a
// one-time calibration would have got wrong. It submits to q: nothing else
// may use q meanwhile.
func ClockCheck(dev *Device, q Queue, o ClockCheckOptions) (*ClockCheckReport, error) {
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.SampleEvery <= 0 {
		o.SampleEvery = 10 * time.Millisecond
	}
	if o.FitEvery <= 0 {
		o.FitEvery = time.Second
	}
	if o.CausalityEvery <= 0 {
		o.CausalityEvery = 100 * time.Millisecond
	}
	p := New(Options{})
	g, err := p.GPU(dev, q, GPUOptions{Calibration: CalibrationOptions{Interval: -1, NoCalibrated: o.Fallback, Clock: o.Clock}})
	if err != nil {
		return nil, err
	}
	defer g.Close()
	c := g.cal
	caps := dev.d.Caps
	rep := &ClockCheckReport{
		Device: caps.Name, Driver: caps.DriverName + " " + caps.DriverInfo,
		PeriodNs: float64(caps.TimestampPeriod), ValidBits: q.ValidBits,
		Method: dev.d.Calibrated, Clock: o.Clock.String(),
	}
	if !c.useExt {
		rep.Method = "submit-and-wait"
	}
	cz, err := newCausalityRig(dev.d, q)
	if err != nil {
		return nil, err
	}
	defer cz.destroy()

	sample := func() (clock.Sample, int64, error) {
		t0 := timeline.Now()
		var s clock.Sample
		var err error
		c.mu.Lock()
		if c.useExt {
			var dv uint64
			dv, err = dev.d.CalibratedTimestamps(c.doms[:], c.ts[:])
			s = clock.Sample{Device: c.ts[0], Host: int64(c.ts[1]), Deviation: max(int64(dv), 1)}
		} else {
			s, err = c.sampleFallback(&g.queue)
		}
		c.mu.Unlock()
		return s, timeline.Now() - t0, err
	}
	var devs, costs, resid, lags []int64
	var first, last clock.Sample
	start := timeline.Now()
	end := start + int64(o.Duration)
	nextFit, nextCause, nextProgress := start, start, start+int64(5*time.Second)
	for now := start; now < end; now = timeline.Now() {
		if now >= nextFit {
			if err := g.Calibrate(); err != nil {
				return nil, fmt.Errorf("calibration round: %w", err)
			}
			rep.Fits++
			nextFit = timeline.Now() + int64(nextCalibration(time.Duration(now-start), o.FitEvery))
		}
		s, cost, err := sample()
		if err != nil {
			return nil, err
		}
		if first.Host == 0 {
			first = s
		}
		last = s
		devs = append(devs, s.Deviation)
		costs = append(costs, cost)
		if h, e, ok := g.clock.Convert(s.Device, s.Host); ok {
			r := h - s.Host
			resid = append(resid, absI(r))
			if absI(r) > e+s.Deviation {
				rep.OutsideBound++
			}
			rep.ModelErrNs = r
		}
		if now >= nextCause && (o.CausalityTries == 0 || rep.CausalityTries < o.CausalityTries) {
			lag, err := cz.try(g)
			if err != nil {
				return nil, fmt.Errorf("causality: %w", err)
			}
			rep.CausalityTries++
			lags = append(lags, lag)
			if lag < 0 {
				rep.CausalityViolations++
			}
			nextCause += int64(o.CausalityEvery)
			if o.CausalityTries > 0 && rep.CausalityTries >= o.CausalityTries {
				nextCause = end
			}
		}
		if o.Progress != nil && now >= nextProgress {
			q := g.clock.Quality()
			fmt.Fprintf(o.Progress, "  %5.0f s: %d samples, drift %+.3f ppm, bound %.0f ns, causality violations %d\n",
				float64(now-start)/1e9, len(devs), q.DriftPPM, q.ErrNs, rep.CausalityViolations)
			nextProgress += int64(5 * time.Second)
		}
		if sleep := time.Duration(min(nextFit, nextCause, now+int64(o.SampleEvery)) - timeline.Now()); sleep > 0 {
			time.Sleep(sleep)
		}
	}
	if len(devs) < 2 {
		return nil, errors.New("clockcheck: fewer than two samples")
	}
	rep.Samples = len(devs)
	rep.periodFigures(first, last)
	rep.MaxDeviation = summarize(devs)
	rep.CallCost = summarize(costs)
	rep.Residual = summarize(resid)
	rep.CausalityLag = summarize(lags)
	rep.Model = g.clock.Quality()
	return rep, nil
}

// periodFigures sets Seconds, EffectivePeriod, PeriodErrPPM and NaiveErrNs
// from the first and last samples, whose ticks count r.ValidBits bits.
func (r *ClockCheckReport) periodFigures(first, last clock.Sample) {
	elapsed := last.Host - first.Host
	r.Seconds = float64(elapsed) / 1e9
	ticks := tickSpan(first.Device, last.Device, uint(r.ValidBits), elapsed, r.PeriodNs)
	if ticks > 0 {
		r.EffectivePeriod = float64(elapsed) / float64(ticks)
		r.PeriodErrPPM = (r.PeriodNs/r.EffectivePeriod - 1) * 1e6
	}
	naive := first.Host + int64(math.Round(float64(ticks)*r.PeriodNs))
	r.NaiveErrNs = naive - last.Host
}

// tickSpan returns how many ticks a counter of validBits bits advanced from
// raw value first to raw value last over elapsed host ns: their difference
// in the low bits, plus the whole wraps that elapsed implies at periodNs.
// Submit-and-wait samples come from a query pool and wrap (every 4.3 s with
// 32 bits at 1 ns); the count is right while periodNs is off by less than
// half a wrap over elapsed (500 ppm over 10 s is 5 ms, a wrap 4.3 s).
func tickSpan(first, last uint64, validBits uint, elapsed int64, periodNs float64) uint64 {
	if validBits == 0 || validBits >= 64 {
		return last - first
	}
	mask := uint64(1)<<validBits - 1
	d := (last - first) & mask
	wraps := math.Round((float64(elapsed)/periodNs - float64(d)) / float64(mask+1))
	if !(wraps > 0) || wraps > float64(uint64(1)<<(64-validBits)-1) {
		return d
	}
	return d + uint64(wraps)<<validBits
}

func absI(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// causalityRig: a command buffer that waits on an event, then writes a
// timestamp. The host reads its clock, sets the event, and the timestamp,
// converted, must not be earlier than that reading.
type causalityRig struct {
	dev   *vk.Device
	q     Queue
	pool  vkg.CommandPool
	cmd   vkg.CommandBuffer
	qp    vkg.QueryPool
	ev    vkg.Event
	fence vkg.Fence
}

func newCausalityRig(d *vk.Device, q Queue) (*causalityRig, error) {
	r := &causalityRig{dev: d, q: q}
	h := d.Handle
	var cp vkg.CommandPool
	if res := vkg.CreateCommandPool(h, &vkg.CommandPoolCreateInfo{SType: vkg.StructureTypeCommandPoolCreateInfo,
		Flags: vkg.CommandPoolCreateFlags(vkg.CommandPoolCreateResetCommandBufferBit), QueueFamilyIndex: q.Family}, nil, &cp); res != vkg.Success {
		return nil, vkg.Error(res)
	}
	r.pool = cp
	cmds := make([]vkg.CommandBuffer, 1)
	if res := vkg.AllocateCommandBuffers(h, &vkg.CommandBufferAllocateInfo{SType: vkg.StructureTypeCommandBufferAllocateInfo,
		CommandPool: cp, Level: vkg.CommandBufferLevelPrimary, CommandBufferCount: 1}, cmds); res != vkg.Success {
		r.destroy()
		return nil, vkg.Error(res)
	}
	r.cmd = cmds[0]
	var qp vkg.QueryPool
	if res := vkg.CreateQueryPool(h, &vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo,
		QueryType: vkg.QueryTypeTimestamp, QueryCount: 1}, nil, &qp); res != vkg.Success {
		r.destroy()
		return nil, vkg.Error(res)
	}
	r.qp = qp
	var ev vkg.Event
	if res := vkg.CreateEvent(h, &vkg.EventCreateInfo{SType: vkg.StructureTypeEventCreateInfo}, nil, &ev); res != vkg.Success {
		r.destroy()
		return nil, vkg.Error(res)
	}
	r.ev = ev
	var f vkg.Fence
	if res := vkg.CreateFence(h, &vkg.FenceCreateInfo{SType: vkg.StructureTypeFenceCreateInfo}, nil, &f); res != vkg.Success {
		r.destroy()
		return nil, vkg.Error(res)
	}
	r.fence = f
	return r, nil
}

// try runs one causality try and returns converted GPU time minus the host
// time read just before vkSetEvent (negative: a violation).
func (r *causalityRig) try(g *GPU) (int64, error) {
	h := r.dev.Handle
	vkg.ResetCommandBuffer(r.cmd, 0)
	vkg.BeginCommandBuffer(r.cmd, &vkg.CommandBufferBeginInfo{SType: vkg.StructureTypeCommandBufferBeginInfo,
		Flags: vkg.CommandBufferUsageFlags(vkg.CommandBufferUsageOneTimeSubmitBit)})
	vkg.CmdResetQueryPool(r.cmd, r.qp, 0, 1)
	r.dev.CmdWaitEvent(r.cmd, r.ev)
	// BOTTOM_OF_PIPE: a TOP_OF_PIPE write may run ahead of the wait (seen on NVIDIA).
	vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageBottomOfPipeBit, r.qp, 0)
	if res := vkg.EndCommandBuffer(r.cmd); res != vkg.Success {
		return 0, vkg.Error(res)
	}
	vkg.ResetEvent(h, r.ev)
	if err := r.dev.QueueSubmit(r.q.Handle, []vkg.CommandBuffer{r.cmd}, r.fence); err != nil {
		return 0, err
	}
	time.Sleep(200 * time.Microsecond) // let the GPU reach the wait
	set := g.cal.o.Clock.now()
	vkg.SetEvent(h, r.ev)
	if res := vkg.WaitForFences(h, 1, []vkg.Fence{r.fence}, vkg.True, uint64(5*time.Second)); res != vkg.Success {
		return 0, fmt.Errorf("waiting for the causality probe: %w", vkg.Error(res))
	}
	vkg.ResetFences(h, 1, []vkg.Fence{r.fence})
	var res [2]uint64
	if rc := vkg.GetQueryPoolResults(h, r.qp, 0, 1, 16, unsafePointer(&res[0]), 16,
		vkg.QueryResultFlags(vkg.QueryResult64Bit|vkg.QueryResultWithAvailabilityBit)); rc != vkg.Success || res[1] == 0 {
		return 0, fmt.Errorf("causality timestamp unavailable (%v)", vkg.Error(rc))
	}
	host, _, ok := g.clock.Convert(res[0], set)
	if !ok {
		return 0, errors.New("no calibration to convert with")
	}
	return host - set, nil
}

func (r *causalityRig) destroy() {
	h := r.dev.Handle
	vkg.DeviceWaitIdle(h)
	if r.fence != vkg.NullFence {
		vkg.DestroyFence(h, r.fence, nil)
	}
	if r.ev != vkg.NullEvent {
		vkg.DestroyEvent(h, r.ev, nil)
	}
	if r.qp != vkg.NullQueryPool {
		vkg.DestroyQueryPool(h, r.qp, nil)
	}
	if r.pool != vkg.NullCommandPool {
		vkg.DestroyCommandPool(h, r.pool, nil)
	}
}

// Print writes the report for people.
func (r *ClockCheckReport) Print(w io.Writer) {
	us := func(ns float64) string { return fmt.Sprintf("%.3f µs", ns/1e3) }
	fmt.Fprintf(w, "device:               %s (%s)\n", r.Device, r.Driver)
	fmt.Fprintf(w, "calibration:          %s against %s; %d rounds fed to the model over %.1f s\n", r.Method, r.Clock, r.Fits, r.Seconds)
	fmt.Fprintf(w, "timestampPeriod:      %.6g ns (valid bits %d); measured %.9g ns: the reported period is off by %+.3f ppm\n",
		r.PeriodNs, r.ValidBits, r.EffectivePeriod, r.PeriodErrPPM)
	fmt.Fprintf(w, "maxDeviation:         p50 %s, p99 %s, max %s (%d calls)\n",
		us(r.MaxDeviation.P50), us(r.MaxDeviation.P99), us(float64(r.MaxDeviation.Max)), r.MaxDeviation.Count)
	fmt.Fprintf(w, "one calibration call: p50 %s, p99 %s, max %s\n",
		us(r.CallCost.P50), us(r.CallCost.P99), us(float64(r.CallCost.Max)))
	fmt.Fprintf(w, "model residual:       p50 %s, p99 %s, max %s on %d held-out samples; %d outside the stated bound\n",
		us(r.Residual.P50), us(r.Residual.P99), us(float64(r.Residual.Max)), r.Residual.Count, r.OutsideBound)
	ratio := 0.0
	if r.MaxDeviation.P50 > 0 {
		ratio = r.Residual.P99 / r.MaxDeviation.P50
	}
	fmt.Fprintf(w, "                      residual p99 / median maxDeviation = %.2f (goal <= 2)\n", ratio)
	fmt.Fprintf(w, "model now:            drift %+.3f ppm, bound %s, %d samples in window, %d outliers rejected\n",
		r.Model.DriftPPM, us(r.Model.ErrNs), r.Model.Samples, r.Model.Outliers)
	fmt.Fprintf(w, "causality violations: %d\n", r.CausalityViolations)
	fmt.Fprintf(w, "causality lag:        p50 %s, p99 %s, min %s over %d tries (GPU timestamp after a host vkSetEvent, converted, minus the host time of the set)\n",
		us(r.CausalityLag.P50), us(r.CausalityLag.P99), us(float64(r.CausalityLag.Min)), r.CausalityTries)
	fmt.Fprintf(w, "one start-up calibration with the nominal period would be off by %s at the end; the model is off by %s\n",
		us(float64(r.NaiveErrNs)), us(float64(r.ModelErrNs)))
}
