// Command wrap is an application that profiles the Vulkan device it made
// itself: it creates the instance and device with vulkan-go, hands them to
// profiler.WrapDevice, records seven nested GPU zones a frame and CPU spans
// on two goroutines, and writes a Perfetto trace, a Chrome JSON trace and a
// pprof profile. Its last line says what it recorded.
//
//	go run ./examples/wrap -frames 120 -frames-in-flight 3 -validation
//
// vulkan-go opens libvulkan.so (Debian: libvulkan-dev). Two of its habits
// shape the Vulkan code: it copies a slice argument into C memory that a
// finalizer frees once the copy is unreachable, possibly during the call,
// so such calls run under noGC; and it stores the Go pointers of slices and
// pNext chains in C memory, so those are pinned.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vk "github.com/vulkan-go/vulkan"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wrap:", err)
		os.Exit(1)
	}
}

// errNoVulkan marks a missing Vulkan loader, layer or device.
var errNoVulkan = errors.New("no usable Vulkan")

// noGC runs f with the garbage collector off, so that no finalizer frees
// what vulkan-go handed the driver before f returns. One goroutine at a time.
func noGC(f func()) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	f()
}

// problems counts the validation layer's warnings and errors: global, as
// vulkan-go keeps the first debug-report callback of the process.
var problems atomic.Int64

func onReport(_ vk.DebugReportFlags, _ vk.DebugReportObjectType, _ uint64, _ uint, _ int32, _, msg string, _ unsafe.Pointer) vk.Bool32 {
	problems.Add(1)
	fmt.Fprintln(os.Stderr, "validation:", msg)
	return vk.False
}

// VkValidationFeaturesEXT and VkPhysicalDeviceHostQueryResetFeatures, which
// vulkan-go (Vulkan 1.1 headers) lacks.
type validationFeatures struct {
	sType    vk.StructureType
	pNext    unsafe.Pointer
	nEnable  uint32
	enable   *int32
	nDisable uint32
	disable  unsafe.Pointer
}
type hostQueryResetFeatures struct {
	sType vk.StructureType
	pNext unsafe.Pointer
	reset vk.Bool32
}

func run(args []string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("wrap", flag.ContinueOnError)
	frames := fs.Int("frames", 60, "frames to render")
	fif := fs.Int("frames-in-flight", 3, "frames the CPU may be ahead of the GPU, 1..16")
	out := fs.String("out", "out", "directory for wrap.perfetto-trace, wrap.json, wrap.pb.gz")
	validation := fs.Bool("validation", false, "Khronos validation layer, synchronization checks included")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *fif < 1 || *fif > 16 || *frames < 1 {
		return fmt.Errorf("-frames-in-flight %d (1..16) or -frames %d (1..)", *fif, *frames)
	}
	ok := func(r vk.Result, what string) bool { // records the first failure in err
		if r != vk.Success && err == nil {
			err = fmt.Errorf("%s: %w", what, vk.Error(r))
		}
		return err == nil
	}
	if vk.SetDefaultGetInstanceProcAddr() != nil || vk.Init() != nil {
		return fmt.Errorf("%w: cannot load libvulkan.so", errNoVulkan)
	}
	var pin runtime.Pinner // Go memory that vulkan-go's C copies point to
	defer pin.Unpin()

	// The instance, for Vulkan 1.2; with -validation, the layer with its
	// synchronization checks, debug report for its messages and debug
	// utils for the profiler's labels.
	ici := vk.InstanceCreateInfo{SType: vk.StructureTypeInstanceCreateInfo, PApplicationInfo: &vk.ApplicationInfo{
		SType: vk.StructureTypeApplicationInfo, PApplicationName: "wrap\x00", ApiVersion: vk.MakeVersion(1, 2, 0)}}
	if *validation {
		feats := &validationFeatures{sType: 1000247000, nEnable: 1, enable: &[]int32{4}[0]} // 4: synchronization
		pin.Pin(feats)
		pin.Pin(feats.enable)
		ici.PNext = unsafe.Pointer(feats)
		ici.PpEnabledLayerNames = []string{"VK_LAYER_KHRONOS_validation\x00"}
		ici.PpEnabledExtensionNames = []string{"VK_EXT_debug_report\x00", "VK_EXT_validation_features\x00", "VK_EXT_debug_utils\x00"}
	}
	ici.EnabledLayerCount, ici.EnabledExtensionCount = uint32(len(ici.PpEnabledLayerNames)), uint32(len(ici.PpEnabledExtensionNames))
	var inst vk.Instance
	if noGC(func() { ok(vk.CreateInstance(&ici, nil, &inst), "vkCreateInstance") }); err != nil {
		return fmt.Errorf("%w (-validation needs the Khronos validation layer): %v", errNoVulkan, err)
	}
	defer vk.DestroyInstance(inst, nil)
	if err := vk.InitInstance(inst); err != nil {
		return err
	}
	var report vk.DebugReportCallback
	if *validation && !ok(vk.CreateDebugReportCallback(inst, &vk.DebugReportCallbackCreateInfo{SType: vk.StructureTypeDebugReportCallbackCreateInfo,
		Flags: vk.DebugReportFlags(vk.DebugReportErrorBit | vk.DebugReportWarningBit), PfnCallback: onReport}, nil, &report), "vkCreateDebugReportCallbackEXT") {
		return err
	}
	defer vk.DestroyDebugReportCallback(inst, report, nil)
	problems0, summary := problems.Load(), ""
	defer func() { // once the device is gone, with what validation reported until then
		n := problems.Load() - problems0
		if summary != "" {
			fmt.Fprintf(stdout, "%s validation=%d\n", summary, n)
		}
		if n != 0 && err == nil {
			err = fmt.Errorf("the validation layer reported %d problems", n)
		}
	}()

	// The first device with a graphics+compute queue family that has timestamps.
	var pd vk.PhysicalDevice
	var family uint32
	for _, d := range enumerate(func(n *uint32, s []vk.PhysicalDevice) { vk.EnumeratePhysicalDevices(inst, n, s) }) {
		for i, f := range enumerate(func(n *uint32, s []vk.QueueFamilyProperties) { vk.GetPhysicalDeviceQueueFamilyProperties(d, n, s) }) {
			want := vk.QueueFlags(vk.QueueGraphicsBit | vk.QueueComputeBit)
			if f.Deref(); pd == nil && f.QueueFlags&want == want && f.TimestampValidBits > 0 {
				pd, family = d, uint32(i)
			}
		}
	}
	if pd == nil {
		return fmt.Errorf("%w: no device with a graphics+compute queue family that has timestamps", errNoVulkan)
	}

	// The device: one queue, host query reset, calibrated timestamps.
	exts := deviceExtension(pd, "VK_KHR_calibrated_timestamps\x00", "VK_EXT_calibrated_timestamps\x00")
	prio, reset := []float32{1}, &hostQueryResetFeatures{sType: 1000261000, reset: vk.True}
	pin.Pin(&prio[0])
	pin.Pin(reset)
	var dev vk.Device
	if noGC(func() {
		ok(vk.CreateDevice(pd, &vk.DeviceCreateInfo{SType: vk.StructureTypeDeviceCreateInfo, PNext: unsafe.Pointer(reset),
			QueueCreateInfoCount: 1, PQueueCreateInfos: []vk.DeviceQueueCreateInfo{{SType: vk.StructureTypeDeviceQueueCreateInfo,
				QueueFamilyIndex: family, QueueCount: 1, PQueuePriorities: prio}},
			EnabledExtensionCount: uint32(len(exts)), PpEnabledExtensionNames: exts}, nil, &dev), "vkCreateDevice")
	}); err != nil {
		return err
	}
	defer vk.DestroyDevice(dev, nil)
	var queue vk.Queue
	vk.GetDeviceQueue(dev, family, 0, &queue)

	// A command buffer and a fence per frame in flight; a buffer to fill.
	const region = 1 << 16 // bytes a zone fills; 6 regions a frame
	var cpool vk.CommandPool
	var buf vk.Buffer
	var mem vk.DeviceMemory
	var req vk.MemoryRequirements
	cmds, fences := make([]vk.CommandBuffer, *fif), make([]vk.Fence, *fif)
	pin.Pin(&cmds[0]) // SubmitInfo.PCommandBuffers points into it
	defer func() {    // destroying a null handle does nothing
		for _, f := range fences {
			vk.DestroyFence(dev, f, nil)
		}
		vk.DestroyBuffer(dev, buf, nil)
		vk.FreeMemory(dev, mem, nil)
		vk.DestroyCommandPool(dev, cpool, nil)
	}()
	for i := range fences {
		ok(vk.CreateFence(dev, &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo,
			Flags: vk.FenceCreateFlags(vk.FenceCreateSignaledBit)}, nil, &fences[i]), "vkCreateFence")
	}
	_ = ok(vk.CreateCommandPool(dev, &vk.CommandPoolCreateInfo{SType: vk.StructureTypeCommandPoolCreateInfo, QueueFamilyIndex: family,
		Flags: vk.CommandPoolCreateFlags(vk.CommandPoolCreateResetCommandBufferBit)}, nil, &cpool), "vkCreateCommandPool") &&
		ok(vk.AllocateCommandBuffers(dev, &vk.CommandBufferAllocateInfo{SType: vk.StructureTypeCommandBufferAllocateInfo,
			CommandPool: cpool, Level: vk.CommandBufferLevelPrimary, CommandBufferCount: uint32(*fif)}, cmds), "vkAllocateCommandBuffers") &&
		ok(vk.CreateBuffer(dev, &vk.BufferCreateInfo{SType: vk.StructureTypeBufferCreateInfo, Size: vk.DeviceSize(6 * region * *fif),
			Usage: vk.BufferUsageFlags(vk.BufferUsageTransferDstBit)}, nil, &buf), "vkCreateBuffer")
	if err == nil {
		vk.GetBufferMemoryRequirements(dev, buf, &req)
		req.Deref()
		_ = ok(vk.AllocateMemory(dev, &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, AllocationSize: req.Size,
			MemoryTypeIndex: uint32(bits.TrailingZeros32(req.MemoryTypeBits))}, nil, &mem), "vkAllocateMemory") &&
			ok(vk.BindBufferMemory(dev, buf, mem, 0), "vkBindBufferMemory")
	}
	if err != nil {
		return err
	}

	// The profiler, on the device as the application made it. Closing it
	// comes before the device's destruction, deferred earlier.
	wrapped, err := profiler.WrapDevice(profiler.Existing{Instance: inst, Physical: pd, Device: dev, Queues: []profiler.QueueID{{Family: family}},
		HostQueryReset: true, CalibratedTimestamps: len(exts) > 0, DebugUtils: *validation})
	if err != nil {
		return err
	}
	defer wrapped.Close()
	q, err := wrapped.Queue(family, 0)
	if err != nil {
		return err
	}
	p := profiler.New(profiler.Options{Recorder: timeline.Options{Process: timeline.Process{PID: int32(os.Getpid()), Name: "wrap"}}})
	defer p.Close()
	gpu, err := p.GPU(wrapped, q, profiler.GPUOptions{FramesInFlight: *fif, DebugLabels: *validation})
	if err != nil {
		return err
	}
	nm := p.Name
	zFrame, zShadows, zClear, zDraw, zLight, zDispatch, zPost := nm("frame"), nm("shadows"), nm("clear"), nm("draw"), nm("lighting"), nm("dispatch"), nm("post")
	sRender, sWait, sRecord, sSubmit, sIdle, sSim, sPhysics, sAnimate := nm("render"), nm("wait fence"), nm("record"), nm("submit"),
		nm("wait idle"), nm("simulate"), nm("physics"), nm("animate")

	// A simulation worker on a goroutine and CPU track of its own, a frame
	// at a time, while the render loop records.
	work, done := make(chan int), make(chan int)
	go func() {
		sim, spans := p.CPUTrack("simulate"), 0
		for range work {
			s := sim.Span(sSim)
			for _, n := range []profiler.Name{sPhysics, sAnimate} {
				c := sim.Span(n)
				time.Sleep(100 * time.Microsecond) // the work
				c.End()
			}
			s.End()
			spans += 3
			done <- spans
		}
	}()

	render := p.CPUTrack("render")
	begin := &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo,
		Flags: vk.CommandBufferUsageFlags(vk.CommandBufferUsageOneTimeSubmitBit)}
	defer begin.Free() // vulkan-go keeps one C copy, reused each frame
	var zones []profiler.ZoneResult
	var nZones, nRender, nSim int
	for i := 0; i < *frames && err == nil; i++ {
		s, cmd := i%*fif, cmds[i%*fif]
		p.BeginFrame()
		frame := render.Span(sRender)
		work <- i
		w := render.Span(sWait) // for the frame that used this slot FramesInFlight ago
		ok(vk.WaitForFences(dev, 1, fences[s:s+1], vk.True, math.MaxUint64), "vkWaitForFences")
		w.End()
		rec := render.Span(sRecord)
		vk.ResetFences(dev, 1, fences[s:s+1])
		vk.ResetCommandBuffer(cmd, 0)
		vk.BeginCommandBuffer(cmd, begin)
		gpu.BeginFrame(cmd)
		pass := func(name profiler.Name, part int, inner ...profiler.Name) { // a zone, and zones inside it
			z := gpu.Zone(cmd, name)
			vk.CmdFillBuffer(cmd, buf, vk.DeviceSize((6*s+part)*region), region, uint32(i))
			for k, n := range inner {
				zi := gpu.Zone(cmd, n)
				vk.CmdFillBuffer(cmd, buf, vk.DeviceSize((6*s+part+1+k)*region), region, uint32(i))
				zi.End()
			}
			z.End()
			nZones += 1 + len(inner)
		}
		f := gpu.Zone(cmd, zFrame)
		pass(zShadows, 0, zClear, zDraw)
		pass(zLight, 3, zDispatch)
		pass(zPost, 5)
		f.End()
		nZones++
		gpu.EndFrame(cmd)
		vk.EndCommandBuffer(cmd)
		rec.End()
		sub := render.Span(sSubmit)
		sub.Submitted(gpu.Submitted(cmd))
		noGC(func() {
			ok(vk.QueueSubmit(queue, 1, []vk.SubmitInfo{{SType: vk.StructureTypeSubmitInfo, CommandBufferCount: 1,
				PCommandBuffers: cmds[s : s+1]}}, fences[s]), "vkQueueSubmit")
		})
		sub.End()
		nSim = <-done
		frame.End()
		nRender += 4
		p.EndFrame()
		zones, _ = gpu.Collect(zones[:0]) // never waits: what the GPU has finished
	}
	close(work)
	idle := render.Span(sIdle)
	vk.DeviceWaitIdle(dev)
	idle.End()
	nRender++
	if err != nil {
		return err
	}
	if err := p.Close(); err != nil { // collects what the GPU finished
		return err
	}

	tr := p.Dump()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for file, write := range map[string]func(io.Writer, *timeline.Trace) error{
		"wrap.perfetto-trace": perfetto.WriteTrace, "wrap.json": chrome.Write, "wrap.pb.gz": pprof.Write} {
		f, err := os.Create(filepath.Join(*out, file))
		if err == nil {
			err = errors.Join(write(f, tr), f.Close())
		}
		if err != nil {
			return err
		}
	}
	st := p.Recorder().Stats()
	summary = fmt.Sprintf("wrap: device=%q frames=%d frames_in_flight=%d zones=%d flows=%d spans.render=%d spans.simulate=%d dropped=%d unlinked=%d",
		wrapped.Name(), *frames, *fif, nZones, nZones, nRender, nSim, st.Drops.Total(), st.ZonesUnlinked)
	return nil
}

// enumerate calls a vkEnumerate or vkGet...Properties function twice, for
// the count and the items.
func enumerate[T any](f func(*uint32, []T)) []T {
	var n uint32
	var s []T
	noGC(func() { f(&n, nil); s = make([]T, n); f(&n, s) })
	return s[:n]
}

// deviceExtension returns the first of names (NUL-terminated, as vulkan-go
// hands them to C) that pd offers, or none.
func deviceExtension(pd vk.PhysicalDevice, names ...string) []string {
	props := enumerate(func(n *uint32, s []vk.ExtensionProperties) { vk.EnumerateDeviceExtensionProperties(pd, "", n, s) })
	for _, name := range names {
		for _, p := range props {
			if p.Deref(); vk.ToString(p.ExtensionName[:])+"\x00" == name {
				return []string{name}
			}
		}
	}
	return nil
}
