package main

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// This file is the application's own Vulkan, made with vulkan-go alone:
// what a renderer has before it meets a profiler. Two habits of vulkan-go
// shape it. It copies a slice argument into C memory that a finalizer
// frees once the copy is unreachable, possibly during the call: such calls
// run under noGC. And it stores the Go pointers of slices and pNext chains
// in C memory: those are pinned.

// app is one device, one queue, and per frame in flight a command buffer,
// a fence and a part of a buffer that the frame's passes fill.
type app struct {
	*handles
	pd         vk.PhysicalDevice
	family     uint32
	calibrated bool // VK_KHR_ or VK_EXT_calibrated_timestamps is enabled
	validation bool // the validation layer and VK_EXT_debug_utils are on
	cmds       []vk.CommandBuffer
	fences     []vk.Fence
	begin      *vk.CommandBufferBeginInfo // one C copy, reused each frame
	pin        runtime.Pinner
	problems0  int64
}

// handles are what vulkan-go's create calls return through a pointer: in
// an object of their own, as cgo refuses a pointer into one that holds Go
// pointers.
type handles struct {
	inst   vk.Instance
	report vk.DebugReportCallback
	dev    vk.Device
	queue  vk.Queue
	cpool  vk.CommandPool
	buf    vk.Buffer
	mem    vk.DeviceMemory
}

const region = 1 << 16 // bytes one fill writes; 6 regions a frame

// apiVersion is the instance's: the profiler is told it (Existing.APIVersion).
var apiVersion = vk.MakeVersion(1, 2, 0)

// errNoVulkan marks a missing Vulkan loader or device; errNoValidation,
// one of them, the missing validation layer.
var (
	errNoVulkan     = errors.New("no usable Vulkan")
	errNoValidation = fmt.Errorf("%w: -validation needs the Khronos validation layer (Debian: vulkan-validationlayers)", errNoVulkan)
)

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

// newApp creates the instance (Vulkan 1.2; with validation, the layer with
// its synchronization checks, debug report for its messages and debug
// utils for the profiler's labels), picks the first device with a
// graphics+compute queue family that has timestamps, and creates a device
// with one queue of it, host query reset and calibrated timestamps.
func newApp(validation bool, slots int) (a *app, err error) {
	a = &app{handles: &handles{}, validation: validation, problems0: problems.Load(), cmds: make([]vk.CommandBuffer, slots), fences: make([]vk.Fence, slots)}
	ok := func(r vk.Result, what string) bool { // records the first failure in err
		if r != vk.Success && err == nil {
			err = fmt.Errorf("%s: %w", what, vk.Error(r))
		}
		return err == nil
	}
	if vk.SetDefaultGetInstanceProcAddr() != nil || vk.Init() != nil {
		return nil, fmt.Errorf("%w: cannot load libvulkan.so", errNoVulkan)
	}
	ici := vk.InstanceCreateInfo{SType: vk.StructureTypeInstanceCreateInfo, PApplicationInfo: &vk.ApplicationInfo{
		SType: vk.StructureTypeApplicationInfo, PApplicationName: "wrap\x00", ApiVersion: apiVersion}}
	if validation {
		feats := &validationFeatures{sType: 1000247000, nEnable: 1, enable: &[]int32{4}[0]} // 4: synchronization
		a.pin.Pin(feats)
		a.pin.Pin(feats.enable)
		ici.PNext = unsafe.Pointer(feats)
		ici.PpEnabledLayerNames = []string{"VK_LAYER_KHRONOS_validation\x00"}
		ici.PpEnabledExtensionNames = []string{"VK_EXT_debug_report\x00", "VK_EXT_validation_features\x00", "VK_EXT_debug_utils\x00"}
	}
	ici.EnabledLayerCount, ici.EnabledExtensionCount = uint32(len(ici.PpEnabledLayerNames)), uint32(len(ici.PpEnabledExtensionNames))
	var r vk.Result
	if noGC(func() { r = vk.CreateInstance(&ici, nil, &a.inst) }); r != vk.Success {
		a.pin.Unpin()
		if validation && (r == vk.ErrorLayerNotPresent || r == vk.ErrorExtensionNotPresent) {
			return nil, errNoValidation
		}
		return nil, fmt.Errorf("%w: vkCreateInstance: %v", errNoVulkan, vk.Error(r))
	}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	if err := vk.InitInstance(a.inst); err != nil {
		return a, err
	}
	if validation && !ok(vk.CreateDebugReportCallback(a.inst, &vk.DebugReportCallbackCreateInfo{SType: vk.StructureTypeDebugReportCallbackCreateInfo,
		Flags: vk.DebugReportFlags(vk.DebugReportErrorBit | vk.DebugReportWarningBit), PfnCallback: onReport}, nil, &a.report), "vkCreateDebugReportCallbackEXT") {
		return a, err
	}
	for _, d := range enumerate(func(n *uint32, s []vk.PhysicalDevice) { vk.EnumeratePhysicalDevices(a.inst, n, s) }) {
		for i, f := range enumerate(func(n *uint32, s []vk.QueueFamilyProperties) { vk.GetPhysicalDeviceQueueFamilyProperties(d, n, s) }) {
			want := vk.QueueFlags(vk.QueueGraphicsBit | vk.QueueComputeBit)
			if f.Deref(); a.pd == nil && f.QueueFlags&want == want && f.TimestampValidBits > 0 {
				a.pd, a.family = d, uint32(i)
			}
		}
	}
	if a.pd == nil {
		return a, fmt.Errorf("%w: no device with a graphics+compute a.queue family that has timestamps", errNoVulkan)
	}

	calibrated := []string{"VK_KHR_calibrated_timestamps\x00", "VK_EXT_calibrated_timestamps\x00"}
	if validation { // a validation layer older than the KHR extension (Debian 12's) warns of it
		calibrated[0], calibrated[1] = calibrated[1], calibrated[0]
	}
	exts := deviceExtension(a.pd, calibrated...)
	a.calibrated = len(exts) > 0
	prio, reset := []float32{1}, &hostQueryResetFeatures{sType: 1000261000, reset: vk.True}
	a.pin.Pin(&prio[0])
	a.pin.Pin(reset)
	if noGC(func() {
		ok(vk.CreateDevice(a.pd, &vk.DeviceCreateInfo{SType: vk.StructureTypeDeviceCreateInfo, PNext: unsafe.Pointer(reset),
			QueueCreateInfoCount: 1, PQueueCreateInfos: []vk.DeviceQueueCreateInfo{{SType: vk.StructureTypeDeviceQueueCreateInfo,
				QueueFamilyIndex: a.family, QueueCount: 1, PQueuePriorities: prio}},
			EnabledExtensionCount: uint32(len(exts)), PpEnabledExtensionNames: exts}, nil, &a.dev), "vkCreateDevice")
	}); err != nil {
		return a, err
	}
	vk.GetDeviceQueue(a.dev, a.family, 0, &a.queue)

	for i := range a.fences {
		ok(vk.CreateFence(a.dev, &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo,
			Flags: vk.FenceCreateFlags(vk.FenceCreateSignaledBit)}, nil, &a.fences[i]), "vkCreateFence")
	}
	a.pin.Pin(&a.cmds[0]) // SubmitInfo.PCommandBuffers points into it
	_ = ok(vk.CreateCommandPool(a.dev, &vk.CommandPoolCreateInfo{SType: vk.StructureTypeCommandPoolCreateInfo, QueueFamilyIndex: a.family,
		Flags: vk.CommandPoolCreateFlags(vk.CommandPoolCreateResetCommandBufferBit)}, nil, &a.cpool), "vkCreateCommandPool") &&
		ok(vk.AllocateCommandBuffers(a.dev, &vk.CommandBufferAllocateInfo{SType: vk.StructureTypeCommandBufferAllocateInfo,
			CommandPool: a.cpool, Level: vk.CommandBufferLevelPrimary, CommandBufferCount: uint32(slots)}, a.cmds), "vkAllocateCommandBuffers") &&
		ok(vk.CreateBuffer(a.dev, &vk.BufferCreateInfo{SType: vk.StructureTypeBufferCreateInfo, Size: vk.DeviceSize(6 * region * slots),
			Usage: vk.BufferUsageFlags(vk.BufferUsageTransferDstBit)}, nil, &a.buf), "vkCreateBuffer")
	if err == nil {
		var req vk.MemoryRequirements
		vk.GetBufferMemoryRequirements(a.dev, a.buf, &req)
		req.Deref()
		_ = ok(vk.AllocateMemory(a.dev, &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, AllocationSize: req.Size,
			MemoryTypeIndex: uint32(bits.TrailingZeros32(req.MemoryTypeBits))}, nil, &a.mem), "vkAllocateMemory") &&
			ok(vk.BindBufferMemory(a.dev, a.buf, a.mem, 0), "vkBindBufferMemory")
	}
	a.begin = &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo,
		Flags: vk.CommandBufferUsageFlags(vk.CommandBufferUsageOneTimeSubmitBit)}
	return a, err
}

// fill records the fill of part of slot's share of the buffer: the work of
// a pass, on bytes no other pass of the frame touches, so that it needs no
// barrier.
func (a *app) fill(cmd vk.CommandBuffer, slot, part int, value uint32) {
	vk.CmdFillBuffer(cmd, a.buf, vk.DeviceSize((6*slot+part)*region), region, value)
}

// close destroys everything newApp made (Vulkan ignores null handles) and
// returns an error if the validation layer reported anything meanwhile.
func (a *app) close() error {
	if a.dev != nil {
		for _, f := range a.fences {
			vk.DestroyFence(a.dev, f, nil)
		}
		vk.DestroyBuffer(a.dev, a.buf, nil)
		vk.FreeMemory(a.dev, a.mem, nil)
		vk.DestroyCommandPool(a.dev, a.cpool, nil)
		vk.DestroyDevice(a.dev, nil)
	}
	if a.report != vk.NullDebugReportCallback {
		vk.DestroyDebugReportCallback(a.inst, a.report, nil)
	}
	vk.DestroyInstance(a.inst, nil)
	if a.begin != nil {
		a.begin.Free()
	}
	a.pin.Unpin()
	if n := a.problems(); n != 0 {
		return fmt.Errorf("the validation layer reported %d problems", n)
	}
	return nil
}

// problems returns the validation layer's count of warnings and errors
// since newApp.
func (a *app) problems() int64 { return problems.Load() - a.problems0 }

// enumerate calls a vkEnumerate or vkGet...Properties function twice: for
// the count, and for the items.
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
