package profiler

import (
	"fmt"
	"unsafe"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// Queue is a VkQueue and the family it belongs to.
type Queue struct {
	Handle    vkg.Queue
	Family    uint32
	Index     uint32
	Flags     QueueFlags
	ValidBits uint32 // timestampValidBits of the family
}

// Device is a Vulkan device as the profiler sees it: the handles, and the
// entry points vulkan-go lacks, loaded.
type Device struct{ d *vk.Device }

// DeviceOptions configures OpenDevice.
type DeviceOptions struct {
	AppName string
	// Device picks the physical device: an index or a substring of its
	// name; empty: $FRAMESCOPE_DEVICE, else the first GPU, else the first
	// device (lavapipe where there is no GPU).
	Device string
	// Validation turns the Khronos validation layer on where installed.
	Validation bool
	// NoCalibrated and NoHostQueryReset leave those features off.
	NoCalibrated     bool
	NoHostQueryReset bool
}

// OpenDevice creates an instance and a device set up for profiling (one
// queue per family, calibrated timestamps and host query reset where
// offered), for headless programs and tools. vulkan-go is initialized for
// its instance (vk.Init, vk.InitInstance): the handles [Device.Handle] and
// [Device.Instance] return are ready for the application's own calls.
func OpenDevice(o DeviceOptions) (*Device, error) {
	d, err := vk.Open(vk.Config{
		InstanceConfig:   vk.InstanceConfig{AppName: o.AppName, Validation: o.Validation},
		Device:           o.Device,
		NoCalibrated:     o.NoCalibrated,
		NoHostQueryReset: o.NoHostQueryReset,
	})
	if err != nil {
		return nil, err
	}
	return &Device{d}, nil
}

// QueueID names a queue of a device: its family, and its index within the
// family.
type QueueID struct{ Family, Index uint32 }

// Existing describes a device the application created, and what it enabled
// on it: Vulkan cannot be asked which features, extensions or queues a
// device was created with.
type Existing struct {
	Instance vkg.Instance
	Physical vkg.PhysicalDevice
	Device   vkg.Device
	// Queues are the queues the application created (its
	// VkDeviceQueueCreateInfo entries, one QueueID for each queue): the
	// profiler calls vkGetDeviceQueue on these and no others, and profiles
	// only these. At least one, at most 256.
	Queues []QueueID
	// HostQueryReset: the hostQueryReset feature was enabled (core in
	// Vulkan 1.2, or VK_EXT_host_query_reset). Without it, GPU.BeginFrame
	// records the query reset into the application's command buffer.
	HostQueryReset bool
	// CalibratedTimestamps: VK_KHR_calibrated_timestamps or
	// VK_EXT_calibrated_timestamps was enabled on the device. Without it,
	// see GPUOptions.FallbackQueue.
	CalibratedTimestamps bool
	// DebugUtils: VK_EXT_debug_utils was enabled on the instance (needed by
	// GPUOptions.DebugLabels).
	DebugUtils bool
	// PipelineStatisticsQuery: the pipelineStatisticsQuery feature was
	// enabled (VkPhysicalDeviceFeatures; needed by
	// GPUOptions.PipelineStatistics).
	PipelineStatisticsQuery bool
	// APIVersion is the apiVersion of the VkApplicationInfo the instance
	// was created with (vkg.MakeVersion(1, 3, 0)). The profiler calls
	// only what it and the physical device's version allow, with the
	// extensions Existing names. 0, not said, reads as 1.0 for what only
	// the instance's version allows: the device's UUID and driver name
	// are not read (GPU.Stats().Unread says so). What the application
	// says it enabled proves its own requirements: CalibratedTimestamps
	// and HostQueryReset work with APIVersion 0 (host query reset through
	// vkResetQueryPool or vkResetQueryPoolEXT, whichever the device
	// answers).
	APIVersion uint32
	// Properties2: VK_KHR_get_physical_device_properties2 was enabled on
	// the instance, for a Vulkan 1.0 instance: the profiler then reads the
	// device's UUID through it, which tells two devices of one model apart
	// (see GPU.Track).
	Properties2 bool
	// Dispatch, for a Vulkan layer, is how the profiler calls Vulkan for
	// this device; zero: through the loader, as the application calls.
	Dispatch Dispatch
}

// Dispatch is the next layer's entry points, as a Vulkan layer has them
// when it creates the device: with them the profiler's calls (query
// pools, resets, copies, calibration, waits) go down the chain from the
// layer, never back through the loader's top and the layers above it,
// which may hold their own locks while they call into the layer. A layer
// then gives Existing its own view of the handles: the instance and
// physical device as its vkCreateDevice received them.
type Dispatch struct {
	// GetInstanceProcAddr is the next layer's (VkLayerInstanceLink's
	// pfnNextGetInstanceProcAddr).
	GetInstanceProcAddr unsafe.Pointer
	// GetDeviceProcAddr is the next layer's (VkLayerDeviceLink's
	// pfnNextGetDeviceProcAddr).
	GetDeviceProcAddr unsafe.Pointer
	// SetDeviceLoaderData is the loader's PFN_vkSetDeviceLoaderData (the
	// VkLayerDeviceCreateInfo of function VK_LOADER_DATA_CALLBACK), with
	// which the command buffers the profiler allocates get their
	// dispatch; nil: the profiler copies the device's.
	SetDeviceLoaderData unsafe.Pointer
}

// WrapDevice uses a device the application created. The application must
// close the GPU contexts made on it (GPU.Close, Profiler.Close, or Close on
// the returned Device, which closes them all) before it destroys its
// VkDevice: a context holds query pools on the device and, with
// calibrated timestamps, calls into it from a goroutine of its own. Close
// on the returned Device destroys nothing of the application's.
func WrapDevice(e Existing) (*Device, error) {
	refs := make([]vk.QueueRef, len(e.Queues))
	for i, q := range e.Queues {
		refs[i] = vk.QueueRef{Family: q.Family, Index: q.Index}
	}
	d, err := vk.Wrap(vk.Existing{
		Instance: e.Instance, Physical: e.Physical, Device: e.Device, Queues: refs,
		HostQueryReset: e.HostQueryReset, CalibratedTimestamps: e.CalibratedTimestamps, DebugUtils: e.DebugUtils,
		PipelineStatisticsQuery: e.PipelineStatisticsQuery, APIVersion: e.APIVersion, Properties2: e.Properties2,
		Dispatch: vk.Dispatch{GetInstanceProcAddr: e.Dispatch.GetInstanceProcAddr, GetDeviceProcAddr: e.Dispatch.GetDeviceProcAddr,
			SetDeviceLoaderData: e.Dispatch.SetDeviceLoaderData},
	})
	if err != nil {
		return nil, err
	}
	return &Device{d}, nil
}

// Handle returns the VkDevice.
func (d *Device) Handle() vkg.Device { return d.d.Handle }

// Physical returns the VkPhysicalDevice.
func (d *Device) Physical() vkg.PhysicalDevice { return d.d.Physical }

// Instance returns the VkInstance.
func (d *Device) Instance() vkg.Instance { return d.d.Instance.Handle }

// Name returns the physical device's name.
func (d *Device) Name() string { return d.d.Caps.Name }

// Caps are a physical device's timing capabilities, as `framescope
// devices` prints them.
type Caps struct {
	Name       string // VkPhysicalDeviceProperties.deviceName
	Type       string // discrete, integrated, virtual, cpu, other
	APIVersion string // "1.3.275"
	DriverName string // VkPhysicalDeviceDriverProperties, where offered
	DriverInfo string
	VendorID   uint32
	DeviceID   uint32
	// TimestampPeriod is the ns one timestamp tick lasts.
	TimestampPeriod float32
	// TimestampComputeAndGraphics: every graphics and compute queue
	// writes timestamps.
	TimestampComputeAndGraphics bool
	Families                    []FamilyCaps
	// CalibratedExtension is the calibrated-timestamps extension the
	// device offers (VK_KHR_ preferred to VK_EXT_), "" when neither.
	CalibratedExtension string
	// TimeDomains are the host clocks it calibrates against:
	// "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", ...
	TimeDomains []string
	// HostQueryReset: it offers the hostQueryReset feature.
	HostQueryReset bool
	// PipelineStatisticsQuery: it offers the pipelineStatisticsQuery
	// feature (OpenDevice enables it then).
	PipelineStatisticsQuery bool
}

// FamilyCaps describe one queue family.
type FamilyCaps struct {
	Index uint32
	Flags QueueFlags
	Count uint32 // queues in the family
	// TimestampValidBits is how many bits of a timestamp are valid; 0: the
	// family writes no timestamps.
	TimestampValidBits uint32
}

// Caps returns the device's timing capabilities.
func (d *Device) Caps() Caps {
	c := d.d.Caps
	out := Caps{
		Name: c.Name, Type: c.Type, APIVersion: c.APIVersion, DriverName: c.DriverName, DriverInfo: c.DriverInfo,
		VendorID: c.VendorID, DeviceID: c.DeviceID, TimestampPeriod: c.TimestampPeriod,
		TimestampComputeAndGraphics: c.TimestampComputeAndGraphics, CalibratedExtension: c.CalibratedExtension,
		HostQueryReset:          c.HostQueryReset,
		PipelineStatisticsQuery: c.PipelineStatisticsQuery,
	}
	for _, f := range c.Families {
		out.Families = append(out.Families, FamilyCaps{Index: f.Index, Flags: QueueFlags(f.Bits), Count: f.Count, TimestampValidBits: f.TimestampValidBits})
	}
	for _, t := range c.TimeDomains {
		out.TimeDomains = append(out.TimeDomains, t.String())
	}
	return out
}

// HostQueryReset reports whether query pools are reset on the host.
func (d *Device) HostQueryReset() bool { return d.d.HostQueryReset }

// Calibrated returns the calibrated-timestamps extension in use, or "".
func (d *Device) Calibrated() string { return d.d.Calibrated }

// Queues lists the device's queues: for WrapDevice those of
// Existing.Queues, for OpenDevice one per family.
func (d *Device) Queues() []Queue {
	out := make([]Queue, len(d.d.Queues))
	for i, q := range d.d.Queues {
		out[i] = Queue{Handle: q.Handle, Family: q.Family, Index: q.Index, Flags: QueueFlags(q.Bits), ValidBits: q.ValidBits}
	}
	return out
}

// Queue returns queue index of family: one the device was created with.
func (d *Device) Queue(family, index uint32) (Queue, error) {
	for _, q := range d.Queues() {
		if q.Family == family && q.Index == index {
			return q, nil
		}
	}
	return Queue{}, fmt.Errorf("profiler: %s has no queue %d.%d among the %d it was created with", d.d.Caps.Name, family, index, len(d.d.Queues))
}

// QueueFor returns the first of the device's queues whose family has
// every capability of want.
func (d *Device) QueueFor(want QueueFlags) (Queue, bool) {
	for _, q := range d.Queues() {
		if q.Flags.Has(want) {
			return q, true
		}
	}
	return Queue{}, false
}

// resolve returns the device's own record of queue q (family and index;
// its handle, when set, must match), and an error when the device was not
// created with it or its family has no timestamps.
func (d *Device) resolve(q Queue) (Queue, error) {
	for _, k := range d.d.Queues {
		if k.Family != q.Family || k.Index != q.Index {
			continue
		}
		if q.Handle != nil && k.Handle != q.Handle {
			return Queue{}, fmt.Errorf("profiler: queue %d.%d: its handle is not the device's queue %d.%d (take it from Device.Queue or Device.Queues)", q.Family, q.Index, q.Family, q.Index)
		}
		if k.ValidBits == 0 {
			return Queue{}, fmt.Errorf("profiler: queue family %d (%s) has no timestamps (timestampValidBits 0)", k.Family, k.Flags)
		}
		return Queue{Handle: k.Handle, Family: k.Family, Index: k.Index, Flags: QueueFlags(k.Bits), ValidBits: k.ValidBits}, nil
	}
	return Queue{}, fmt.Errorf("profiler: %s has no queue %d.%d among the %d it was created with (Existing.Queues for WrapDevice)", d.d.Caps.Name, q.Family, q.Index, len(d.d.Queues))
}

// Close closes every GPU context made on the device: their calibration
// stops, the device is waited for (vkDeviceWaitIdle: nothing may be
// submitted meanwhile), and their query pools are destroyed. Then, for a
// device OpenDevice made, it destroys the device and its instance; for
// one from WrapDevice, nothing more: the application still owns it. Every
// later call on those contexts returns ErrDeviceClosed or is refused and
// counted (zones), without calling Vulkan. A second Close does nothing.
func (d *Device) Close() { d.d.Close() }
