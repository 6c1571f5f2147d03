package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// The least Vulkan the README's loop needs, made with vulkan-go alone.
// vulkan-go copies a slice argument into C memory that a finalizer may
// free during the call: such calls run under noGC. It stores the Go
// pointers of slices and pNext chains in C memory: those are pinned.

// app is a Vulkan 1.2 instance, one device with one queue, host query
// reset and calibrated timestamps where offered, and a command buffer and a
// fence per frame in flight.
type app struct {
	*handles
	pd         vk.PhysicalDevice
	family     uint32
	calibrated bool // VK_KHR_ or VK_EXT_calibrated_timestamps is enabled
	cmds       []vk.CommandBuffer
	fences     []vk.Fence
	pin        runtime.Pinner
	problem0   int64
}

// handles are what vulkan-go's create calls return through a pointer, in
// an object of their own: cgo refuses a pointer into one that holds Go
// pointers.
type handles struct {
	inst   vk.Instance
	report vk.DebugReportCallback
	dev    vk.Device
	queue  vk.Queue
	pool   vk.CommandPool
}

// hostQueryResetFeatures is VkPhysicalDeviceHostQueryResetFeatures, which
// vulkan-go (Vulkan 1.1 headers) lacks.
type hostQueryResetFeatures struct {
	sType vk.StructureType
	pNext unsafe.Pointer
	reset vk.Bool32
}

// problems counts the validation layer's warnings and errors.
var problems atomic.Int64

func onReport(_ vk.DebugReportFlags, _ vk.DebugReportObjectType, _ uint64, _ uint, _ int32, _, msg string, _ unsafe.Pointer) vk.Bool32 {
	problems.Add(1)
	fmt.Fprintln(os.Stderr, "validation:", msg)
	return vk.False
}

// noGC runs f with the garbage collector off.
func noGC(f func()) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	f()
}

// result turns a failed Vulkan call into an error naming it.
func result(r vk.Result, what string) error {
	if r != vk.Success {
		return fmt.Errorf("%s: %w", what, vk.Error(r))
	}
	return nil
}

// newApp makes the instance, with the validation layer and its debug
// report if validation, the device and what a frame needs.
func newApp(validation bool, slots int) (a *app, err error) {
	a = &app{handles: &handles{}, problem0: problems.Load(),
		cmds: make([]vk.CommandBuffer, slots), fences: make([]vk.Fence, slots)}
	if err := a.instance(validation); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.close())
		}
	}()
	if err := a.pick(); err != nil {
		return a, err
	}
	if err := a.device(); err != nil {
		return a, err
	}
	return a, a.frames()
}

// instance makes the Vulkan 1.2 instance.
func (a *app) instance(validation bool) error {
	if vk.SetDefaultGetInstanceProcAddr() != nil || vk.Init() != nil {
		return errors.New("cannot load libvulkan.so")
	}
	ici := vk.InstanceCreateInfo{SType: vk.StructureTypeInstanceCreateInfo, PApplicationInfo: &vk.ApplicationInfo{
		SType: vk.StructureTypeApplicationInfo, PApplicationName: "readme-loop\x00", ApiVersion: vk.MakeVersion(1, 2, 0)}}
	if validation {
		ici.PpEnabledLayerNames = []string{"VK_LAYER_KHRONOS_validation\x00"}
		ici.PpEnabledExtensionNames = []string{"VK_EXT_debug_report\x00"}
	}
	ici.EnabledLayerCount, ici.EnabledExtensionCount = uint32(len(ici.PpEnabledLayerNames)), uint32(len(ici.PpEnabledExtensionNames))
	var r vk.Result
	if noGC(func() { r = vk.CreateInstance(&ici, nil, &a.inst) }); r != vk.Success {
		return result(r, "vkCreateInstance")
	}
	if err := vk.InitInstance(a.inst); err != nil {
		return err
	}
	if !validation {
		return nil
	}
	return result(vk.CreateDebugReportCallback(a.inst, &vk.DebugReportCallbackCreateInfo{SType: vk.StructureTypeDebugReportCallbackCreateInfo,
		Flags: vk.DebugReportFlags(vk.DebugReportErrorBit | vk.DebugReportWarningBit), PfnCallback: onReport}, nil, &a.report),
		"vkCreateDebugReportCallbackEXT")
}

// pick takes the first device with a graphics+compute queue family that
// has timestamps.
func (a *app) pick() error {
	var n uint32
	var pds []vk.PhysicalDevice
	noGC(func() {
		vk.EnumeratePhysicalDevices(a.inst, &n, nil)
		pds = make([]vk.PhysicalDevice, n)
		vk.EnumeratePhysicalDevices(a.inst, &n, pds)
	})
	for _, pd := range pds[:n] {
		var m uint32
		var fams []vk.QueueFamilyProperties
		noGC(func() {
			vk.GetPhysicalDeviceQueueFamilyProperties(pd, &m, nil)
			fams = make([]vk.QueueFamilyProperties, m)
			vk.GetPhysicalDeviceQueueFamilyProperties(pd, &m, fams)
		})
		for i, f := range fams[:m] {
			want := vk.QueueFlags(vk.QueueGraphicsBit | vk.QueueComputeBit)
			if f.Deref(); f.QueueFlags&want == want && f.TimestampValidBits > 0 {
				a.pd, a.family = pd, uint32(i)
				return nil
			}
		}
	}
	return errors.New("no device with a graphics+compute queue family that has timestamps")
}

// device makes the device: one queue of the family, host query reset,
// and calibrated timestamps where the device offers them.
func (a *app) device() error {
	exts := deviceExtension(a.pd, "VK_KHR_calibrated_timestamps\x00", "VK_EXT_calibrated_timestamps\x00")
	a.calibrated = len(exts) > 0
	prio, reset := []float32{1}, &hostQueryResetFeatures{sType: 1000261000, reset: vk.True}
	a.pin.Pin(&prio[0])
	a.pin.Pin(reset)
	var r vk.Result
	noGC(func() {
		r = vk.CreateDevice(a.pd, &vk.DeviceCreateInfo{SType: vk.StructureTypeDeviceCreateInfo, PNext: unsafe.Pointer(reset),
			QueueCreateInfoCount: 1, PQueueCreateInfos: []vk.DeviceQueueCreateInfo{{SType: vk.StructureTypeDeviceQueueCreateInfo,
				QueueFamilyIndex: a.family, QueueCount: 1, PQueuePriorities: prio}},
			EnabledExtensionCount: uint32(len(exts)), PpEnabledExtensionNames: exts}, nil, &a.dev)
	})
	if r != vk.Success {
		return result(r, "vkCreateDevice")
	}
	vk.GetDeviceQueue(a.dev, a.family, 0, &a.queue)
	return nil
}

// frames makes a signalled fence and a command buffer per frame in flight.
func (a *app) frames() error {
	for i := range a.fences {
		if err := result(vk.CreateFence(a.dev, &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo,
			Flags: vk.FenceCreateFlags(vk.FenceCreateSignaledBit)}, nil, &a.fences[i]), "vkCreateFence"); err != nil {
			return err
		}
	}
	a.pin.Pin(&a.cmds[0]) // SubmitInfo.PCommandBuffers points into it
	if err := result(vk.CreateCommandPool(a.dev, &vk.CommandPoolCreateInfo{SType: vk.StructureTypeCommandPoolCreateInfo,
		QueueFamilyIndex: a.family, Flags: vk.CommandPoolCreateFlags(vk.CommandPoolCreateResetCommandBufferBit)}, nil, &a.pool), "vkCreateCommandPool"); err != nil {
		return err
	}
	return result(vk.AllocateCommandBuffers(a.dev, &vk.CommandBufferAllocateInfo{SType: vk.StructureTypeCommandBufferAllocateInfo,
		CommandPool: a.pool, Level: vk.CommandBufferLevelPrimary, CommandBufferCount: uint32(len(a.cmds))}, a.cmds), "vkAllocateCommandBuffers")
}

// begin waits for frame's fence, resets it and begins its command buffer.
func (a *app) begin(frame int) {
	slot := frame % len(a.cmds)
	check(result(vk.WaitForFences(a.dev, 1, a.fences[slot:slot+1], vk.True, math.MaxUint64), "vkWaitForFences"))
	vk.ResetFences(a.dev, 1, a.fences[slot:slot+1])
	vk.ResetCommandBuffer(a.cmds[slot], 0)
	vk.BeginCommandBuffer(a.cmds[slot], &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo,
		Flags: vk.CommandBufferUsageFlags(vk.CommandBufferUsageOneTimeSubmitBit)})
}

// submit ends frame's command buffer and submits it with its fence.
func (a *app) submit(frame int) {
	slot := frame % len(a.cmds)
	vk.EndCommandBuffer(a.cmds[slot])
	var r vk.Result
	noGC(func() {
		r = vk.QueueSubmit(a.queue, 1, []vk.SubmitInfo{{SType: vk.StructureTypeSubmitInfo,
			CommandBufferCount: 1, PCommandBuffers: a.cmds[slot : slot+1]}}, a.fences[slot])
	})
	check(result(r, "vkQueueSubmit"))
}

// close destroys what newApp made (Vulkan ignores null handles) and
// returns an error if the validation layer reported anything meanwhile.
func (a *app) close() error {
	if a.dev != nil {
		vk.DeviceWaitIdle(a.dev)
		for _, f := range a.fences {
			vk.DestroyFence(a.dev, f, nil)
		}
		vk.DestroyCommandPool(a.dev, a.pool, nil)
		vk.DestroyDevice(a.dev, nil)
	}
	if a.report != vk.NullDebugReportCallback {
		vk.DestroyDebugReportCallback(a.inst, a.report, nil)
	}
	vk.DestroyInstance(a.inst, nil)
	a.pin.Unpin()
	if n := a.problems(); n != 0 {
		return fmt.Errorf("the validation layer reported %d problems", n)
	}
	return nil
}

// problems counts the validation layer's messages since newApp.
func (a *app) problems() int64 { return problems.Load() - a.problem0 }

// deviceExtension returns the first of names (NUL-terminated, as vulkan-go
// hands them to C) that pd offers, or none.
func deviceExtension(pd vk.PhysicalDevice, names ...string) []string {
	var n uint32
	var props []vk.ExtensionProperties
	noGC(func() {
		vk.EnumerateDeviceExtensionProperties(pd, "", &n, nil)
		props = make([]vk.ExtensionProperties, n)
		vk.EnumerateDeviceExtensionProperties(pd, "", &n, props)
	})
	for _, name := range names {
		for _, p := range props[:n] {
			if p.Deref(); vk.ToString(p.ExtensionName[:])+"\x00" == name {
				return []string{name}
			}
		}
	}
	return nil
}
