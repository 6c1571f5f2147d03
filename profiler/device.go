package profiler

import (
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// Queue is a VkQueue and the family it belongs to.
type Queue struct {
	Handle    vkg.Queue
	Family    uint32
	Index     uint32
	Flags     string // "graphics+compute+transfer", ...
	ValidBits uint32 // timestampValidBits of the family
}

// Device is a Vulkan device as the profiler sees it: the handles, and the
// entry points vulkan-go lacks, loaded.
type Device struct{ d *vk.Device }

// DeviceConfig configures OpenDevice.
type DeviceConfig struct {
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
// offered), for headless programs and tools.
func OpenDevice(cfg DeviceConfig) (*Device, error) {
	d, err := vk.Open(vk.Config{
		InstanceConfig:   vk.InstanceConfig{AppName: cfg.AppName, Validation: cfg.Validation},
		Device:           cfg.Device,
		NoCalibrated:     cfg.NoCalibrated,
		NoHostQueryReset: cfg.NoHostQueryReset,
	})
	if err != nil {
		return nil, err
	}
	return &Device{d}, nil
}

// Existing describes a device the application created: Vulkan cannot be
// asked what was enabled on it.
type Existing = vk.Existing

// WrapDevice uses a device the application created. The application must
// close the GPU contexts made on it (GPU.Close, Profiler.Close, or Close on
// the returned Device, which closes them all) before it destroys its
// VkDevice: a context holds query pools on the device and, with
// calibrated timestamps, calls into it from a goroutine of its own. Close
// on the returned Device destroys nothing of the application's.
func WrapDevice(e Existing) (*Device, error) {
	d, err := vk.Wrap(e)
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

// Caps returns the device's timing capabilities.
func (d *Device) Caps() vk.Caps { return d.d.Caps }

// HostQueryReset reports whether query pools are reset on the host.
func (d *Device) HostQueryReset() bool { return d.d.HostQueryReset }

// Calibrated returns the calibrated-timestamps extension in use, or "".
func (d *Device) Calibrated() string { return d.d.Calibrated }

// Queues lists one queue per family (OpenDevice creates them so).
func (d *Device) Queues() []Queue {
	out := make([]Queue, len(d.d.Queues))
	for i, q := range d.d.Queues {
		out[i] = Queue{Handle: q.Handle, Family: q.Family, Index: q.Index, Flags: q.Flags, ValidBits: q.ValidBits}
	}
	return out
}

// QueueFor returns the first queue whose flags contain want ("graphics",
// "compute", "transfer").
func (d *Device) QueueFor(want string) (Queue, bool) {
	for _, q := range d.Queues() {
		if containsWord(q.Flags, want) {
			return q, true
		}
	}
	return Queue{}, false
}

func containsWord(flags, w string) bool {
	for len(flags) > 0 {
		i := 0
		for i < len(flags) && flags[i] != '+' {
			i++
		}
		if flags[:i] == w {
			return true
		}
		if i == len(flags) {
			break
		}
		flags = flags[i+1:]
	}
	return false
}

// Close closes every GPU context made on the device: their calibration
// stops, the device is waited for (vkDeviceWaitIdle: nothing may be
// submitted meanwhile), and their query pools are destroyed. Then, for a
// device OpenDevice made, it destroys the device and its instance; for
// one from WrapDevice, nothing more: the application still owns it. Every
// later call on those contexts returns ErrDeviceClosed or is refused and
// counted (zones), without calling Vulkan. A second Close does nothing.
func (d *Device) Close() { d.d.Close() }
