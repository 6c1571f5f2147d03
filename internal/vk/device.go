package vk

/*
#include <stdlib.h>
#include "procs.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// ErrNoDevice is returned when no physical device matches.
var ErrNoDevice = errors.New("vk: no Vulkan physical device")

// ErrDeviceClosed is returned by OnClose once the device is closed.
var ErrDeviceClosed = errors.New("vk: the device is closed")

// MissingError says that an entry point or feature is absent, and why.
type MissingError struct {
	What string // the entry point or feature
	Why  string
}

func (e *MissingError) Error() string { return "vk: " + e.What + " is not available: " + e.Why }

// Config configures Open.
type Config struct {
	InstanceConfig
	// Device picks the physical device: a decimal index into the loader's
	// list, or a case-insensitive substring of the device name. Empty: the
	// FRAMESCOPE_DEVICE environment variable, else the first discrete or
	// integrated GPU, else the first device (lavapipe on a machine with no GPU).
	Device string
	// NoCalibrated leaves the calibrated-timestamps extension off, to
	// exercise the fallback path.
	NoCalibrated bool
	// NoHostQueryReset leaves the hostQueryReset feature off, so query
	// pools are reset with commands.
	NoHostQueryReset bool
}

// Queue is a VkQueue the device was created with: one per queue family.
type Queue struct {
	Handle    vk.Queue
	Family    uint32
	Index     uint32
	Flags     string
	Bits      uint32 // the VkQueueFlags Flags spells
	ValidBits uint32 // timestampValidBits of its family
}

// Device is a logical device with the entry points Framescope loads itself.
type Device struct {
	Instance *Instance
	Physical vk.PhysicalDevice
	Handle   vk.Device
	Caps     Caps
	Queues   []Queue
	// HostQueryReset: the feature is enabled and vkResetQueryPool loaded.
	HostQueryReset bool
	// Calibrated is the calibrated-timestamps extension enabled, or "".
	Calibrated string
	// PipelineStatistics: the pipelineStatisticsQuery feature is enabled.
	PipelineStatistics bool
	// Unread says what Wrap could not read of the device, and why ("":
	// nothing).
	Unread string
	// Twins is how many of the instance's physical devices have this
	// one's name (Caps.Name), itself included: above 1, a name alone does
	// not say which device it is.
	Twins int

	procs        C.fsDeviceProcs
	ownsInstance bool
	borrowed     bool // Wrap: the application owns the device
	resetQP      proc
	calibrated   proc
	beginLabel   proc
	endLabel     proc
	barrier      proc
	copyQueries  proc
	submit       proc
	waitEvents   proc
	writeTS      proc

	// CountLabels makes CmdBeginLabel and CmdEndLabel count what they
	// record (LabelCounts), for tests: off, recording a label costs no
	// atomic shared by every recording goroutine.
	CountLabels              bool
	labelsBegun, labelsEnded atomic.Uint64 // label commands recorded, with CountLabels

	life    sync.Mutex // closed, users, nextUser
	closed  bool
	users   []user
	nextUse uint64
}

// user is something made on the device that must go before it.
type user struct {
	id            uint64
	stop, release func()
}

// Open creates an instance (see InstanceConfig) and a logical device with
// one queue in every queue family, calibrated timestamps and host query
// reset enabled where the device offers them.
func Open(cfg Config) (*Device, error) {
	in, err := NewInstance(cfg.InstanceConfig)
	if err != nil {
		return nil, err
	}
	d, err := in.OpenDevice(cfg)
	if err != nil {
		in.Destroy()
		return nil, err
	}
	d.ownsInstance = true
	return d, nil
}

// SelectPhysical picks a physical device by spec (see Config.Device).
func (in *Instance) SelectPhysical(spec string) (int, vk.PhysicalDevice, error) {
	pds, err := in.PhysicalDevices()
	if err != nil {
		return 0, nil, err
	}
	if len(pds) == 0 {
		return 0, nil, fmt.Errorf("%w: the loader lists none; install a driver (Debian's mesa-vulkan-drivers gives lavapipe)", ErrNoDevice)
	}
	if spec == "" {
		spec = os.Getenv("FRAMESCOPE_DEVICE")
	}
	if spec != "" {
		// A number is an index when one of the devices has it; otherwise
		// it is part of a name ("100" finds an H100).
		i, err := strconv.Atoi(spec)
		if err == nil && i >= 0 && i < len(pds) {
			return i, pds[i], nil
		}
		var names []string
		for i, pd := range pds {
			name := in.physical(pd).name
			if strings.Contains(strings.ToLower(name), strings.ToLower(spec)) {
				return i, pd, nil
			}
			names = append(names, name)
		}
		if err == nil {
			return 0, nil, fmt.Errorf("%w: no device %d (%d devices) and none named like %q among %q", ErrNoDevice, i, len(pds), spec, names)
		}
		return 0, nil, fmt.Errorf("%w: none named like %q among %q", ErrNoDevice, spec, names)
	}
	for i, pd := range pds {
		if t := in.physical(pd).typ; t == vk.PhysicalDeviceTypeDiscreteGpu || t == vk.PhysicalDeviceTypeIntegratedGpu {
			return i, pd, nil
		}
	}
	return 0, pds[0], nil
}

// OpenDevice creates a logical device on this instance.
func (in *Instance) OpenDevice(cfg Config) (*Device, error) {
	idx, pd, err := in.SelectPhysical(cfg.Device)
	if err != nil {
		return nil, err
	}
	caps, err := in.Caps(idx, pd)
	if err != nil {
		return nil, err
	}
	if in.Validation && caps.Extensions[ExtCalibratedTimestamps] {
		// The EXT name, which the validation layer knows: Debian's
		// (1.3.239) warns of the KHR one.
		caps.CalibratedExtension = ExtCalibratedTimestamps
	}
	d := &Device{Instance: in, Physical: pd, Caps: caps, Twins: in.twins(caps.Name)}

	var exts []string
	// The calibrated-timestamps extensions need Vulkan 1.1 or the
	// instance's VK_KHR_get_physical_device_properties2.
	if !cfg.NoCalibrated && caps.CalibratedExtension != "" && in.Properties2 {
		exts = append(exts, cstr(caps.CalibratedExtension))
		d.Calibrated = caps.CalibratedExtension
	}
	core12 := caps.Version >= vk.MakeVersion(1, 2, 0)
	wantHQR := !cfg.NoHostQueryReset && caps.HostQueryReset
	if wantHQR && !core12 {
		exts = append(exts, cstr(ExtHostQueryReset))
	}
	var fams []C.uint32_t
	for _, f := range caps.Families {
		if f.Count > 0 {
			fams = append(fams, C.uint32_t(f.Index))
		}
	}
	ce, freeE := cstrings(exts)
	defer freeE()
	var ch C.fsVkDevice
	hqr := 0
	if wantHQR {
		hqr = 1
	}
	stats := 0
	if caps.PipelineStatisticsQuery {
		stats = 1
	}
	var famp *C.uint32_t
	if len(fams) > 0 {
		famp = &fams[0]
	}
	if r := C.fs_create_device(C.fsVkInstance(unsafe.Pointer(in.Handle)), C.fsVkPhysicalDevice(unsafe.Pointer(pd)),
		famp, C.uint32_t(len(fams)), ce, C.uint32_t(len(exts)), C.int(hqr), C.int(stats), &ch); r != 0 {
		return nil, fmt.Errorf("vk: vkCreateDevice on %s: %w", caps.Name, vk.Error(vk.Result(r)))
	}
	d.Handle = vk.Device(unsafe.Pointer(ch))
	d.PipelineStatistics = stats != 0
	if err := d.useProcs(nil, nil); err != nil {
		C.fs_destroy_device_via(C.fsVkInstance(unsafe.Pointer(in.Handle)), ch)
		return nil, err
	}
	for _, f := range caps.Families {
		if f.Count == 0 {
			continue
		}
		q := d.queue(f.Index, 0)
		d.Queues = append(d.Queues, Queue{Handle: q, Family: f.Index, Flags: f.Flags, Bits: f.Bits, ValidBits: f.TimestampValidBits})
	}
	d.loadProcs(wantHQR, d.Calibrated != "")
	return d, nil
}

// QueueRef names a queue by family and index within it.
type QueueRef struct{ Family, Index uint32 }

// Existing describes a device an application created itself, and what it
// enabled on it: Vulkan cannot be asked which features a device has on, nor
// which queues it was created with.
type Existing struct {
	Instance vk.Instance
	Physical vk.PhysicalDevice
	Device   vk.Device
	// Queues are the queues the application created (VkDeviceQueueCreateInfo):
	// vkGetDeviceQueue is called on these alone.
	Queues []QueueRef
	// HostQueryReset: the hostQueryReset feature was enabled (core 1.2 or
	// VK_EXT_host_query_reset).
	HostQueryReset bool
	// CalibratedTimestamps: VK_KHR_ or VK_EXT_calibrated_timestamps was enabled.
	CalibratedTimestamps bool
	// DebugUtils: VK_EXT_debug_utils was enabled on the instance.
	DebugUtils bool
	// PipelineStatisticsQuery: the pipelineStatisticsQuery feature was
	// enabled.
	PipelineStatisticsQuery bool
	// APIVersion is the instance's VkApplicationInfo.apiVersion; 0 reads
	// as 1.0, as Vulkan reads it.
	APIVersion uint32
	// Properties2: VK_KHR_get_physical_device_properties2 was enabled on
	// the instance.
	Properties2 bool
	// Dispatch: the entry points to call through (a layer's next ones);
	// zero: the loader's. With it, Instance and Physical are the handles
	// as that level of the chain has them.
	Dispatch Dispatch
}

// MaxWrappedQueues bounds Existing.Queues.
const MaxWrappedQueues = 256

// Wrap loads Framescope's entry points for a device the application made.
// Close on the result destroys nothing: the application owns the device.
func Wrap(e Existing) (*Device, error) {
	if e.Instance == nil || e.Physical == nil || e.Device == nil {
		return nil, errors.New("vk: Wrap needs the instance, physical device and device handles")
	}
	if len(e.Queues) == 0 {
		return nil, errors.New("vk: Wrap: Existing.Queues lists no queue: name the queues the device was created with")
	}
	if len(e.Queues) > MaxWrappedQueues {
		return nil, fmt.Errorf("vk: Wrap: Existing.Queues lists %d queues (at most %d)", len(e.Queues), MaxWrappedQueues)
	}
	gipa := e.Dispatch.GetInstanceProcAddr
	if gipa == nil {
		// The loader's, as the application calls; vulkan-go loaded for
		// the instance, as Wrap always did for the program's own calls.
		if err := Load(); err != nil {
			return nil, err
		}
		if err := vk.InitInstance(e.Instance); err != nil {
			return nil, fmt.Errorf("vk: loading instance entry points: %w", err)
		}
		gipa = loaderGIPA()
	}
	in, err := wrapInstance(e.Instance, gipa, e.DebugUtils, e.APIVersion, e.Properties2)
	if err != nil {
		return nil, err
	}
	pds, err := in.PhysicalDevices()
	if err != nil {
		return nil, err
	}
	idx := -1
	for i, pd := range pds {
		if pd == e.Physical {
			idx = i
		}
	}
	if idx < 0 {
		return nil, errors.New("vk: Wrap: the physical device is not the instance's")
	}
	caps, err := in.Caps(idx, e.Physical)
	if err != nil {
		return nil, err
	}
	if e.CalibratedTimestamps && caps.TimeDomains == nil {
		// The device was made with a calibrated-timestamps extension, so
		// its requirement (Vulkan 1.1 or the instance's
		// VK_KHR_get_physical_device_properties2) was met, whatever
		// Existing says of the instance: the extension's own commands
		// may be called.
		caps.TimeDomains = in.timeDomainsOf(caps.CalibratedExtension, e.Physical)
	}
	d := &Device{Instance: in, Physical: e.Physical, Handle: e.Device, Caps: caps, borrowed: true, Twins: in.twins(caps.Name),
		PipelineStatistics: e.PipelineStatisticsQuery && caps.PipelineStatisticsQuery}
	if e.HostQueryReset {
		d.Caps.HostQueryReset = true // enabled, so offered, whatever could be read
	}
	if e.APIVersion == 0 && caps.APIVersionCode >= vk.MakeVersion(1, 1, 0) {
		d.Unread = "the device's UUID, driver name and Vulkan 1.1 features and time domains (Existing.APIVersion is 0, read as Vulkan 1.0: set it to the instance's apiVersion)"
	}
	for i, r := range e.Queues {
		if int(r.Family) >= len(caps.Families) || r.Index >= caps.Families[r.Family].Count {
			return nil, fmt.Errorf("vk: Wrap: Existing.Queues[%d] is queue %d.%d, which %s does not have (%d families)",
				i, r.Family, r.Index, caps.Name, len(caps.Families))
		}
		for _, o := range e.Queues[:i] {
			if o == r {
				return nil, fmt.Errorf("vk: Wrap: Existing.Queues names queue %d.%d twice", r.Family, r.Index)
			}
		}
	}
	if err := d.useProcs(e.Dispatch.GetDeviceProcAddr, e.Dispatch.SetDeviceLoaderData); err != nil {
		return nil, err
	}
	for _, r := range e.Queues {
		f := caps.Families[r.Family]
		q := d.queue(r.Family, r.Index)
		d.Queues = append(d.Queues, Queue{Handle: q, Family: r.Family, Index: r.Index, Flags: f.Flags, Bits: f.Bits, ValidBits: f.TimestampValidBits})
	}
	d.loadProcs(e.HostQueryReset, e.CalibratedTimestamps && caps.CalibratedExtension != "")
	if e.HostQueryReset && !d.HostQueryReset && e.APIVersion == 0 && caps.APIVersionCode >= vk.MakeVersion(1, 2, 0) {
		// The instance's version is not said, and the application says
		// host query reset is on: through core Vulkan 1.2 or the
		// extension, whichever the driver answers (it answers only the
		// name the device enabled).
		d.resetQP, _ = d.lookup("vkResetQueryPool", "vkResetQueryPoolEXT")
		d.HostQueryReset = d.resetQP != nil
	}
	if e.HostQueryReset && !d.HostQueryReset {
		return nil, fmt.Errorf("vk: Wrap: Existing.HostQueryReset, but %s is not loaded: a device of Vulkan %s through an instance of %s has it only with %s enabled (is Existing.APIVersion the instance's?)",
			d.resetName(), versionString(caps.APIVersionCode), versionString(in.APIVersion), ExtHostQueryReset)
	}
	return d, nil
}

// resetName is the entry point of vkResetQueryPool the device's version
// allows: the core one from Vulkan 1.2, else the extension's.
func (d *Device) resetName() string {
	if d.Caps.Version >= vk.MakeVersion(1, 2, 0) {
		return "vkResetQueryPool"
	}
	return "vkResetQueryPoolEXT"
}

func (d *Device) loadProcs(hostReset, calibrated bool) {
	in := d.Instance
	if hostReset {
		d.resetQP, _ = d.lookup(d.resetName())
		d.HostQueryReset = d.resetQP != nil
	}
	if calibrated {
		d.Calibrated = d.Caps.CalibratedExtension
		if d.Calibrated == KHRCalibratedTimestamps {
			d.calibrated, _ = d.lookup("vkGetCalibratedTimestampsKHR", "vkGetCalibratedTimestampsEXT")
		} else {
			d.calibrated, _ = d.lookup("vkGetCalibratedTimestampsEXT")
		}
		if d.calibrated == nil {
			d.Calibrated = ""
		}
	}
	d.barrier, _ = d.lookup("vkCmdPipelineBarrier")
	d.submit, _ = d.lookup("vkQueueSubmit")
	d.waitEvents, _ = d.lookup("vkCmdWaitEvents")
	d.writeTS, _ = d.lookup("vkCmdWriteTimestamp")
	d.copyQueries, _ = d.lookup("vkCmdCopyQueryPoolResults")
	if in.DebugUtils {
		d.beginLabel, _ = d.lookup("vkCmdBeginDebugUtilsLabelEXT")
		d.endLabel, _ = d.lookup("vkCmdEndDebugUtilsLabelEXT")
	}
}

// OnClose registers what Close must do before the device goes: stop ends
// every use of the device from the user's own goroutines (and makes its
// later calls refuse), release destroys what it made on the device. Close
// calls every user's stop (the newest first), waits for the device to go
// idle, then calls every release, and only then destroys the device. Call
// unregister when the user closes first. OnClose fails with ErrDeviceClosed
// once Close has begun.
func (d *Device) OnClose(stop, release func()) (unregister func(), err error) {
	d.life.Lock()
	defer d.life.Unlock()
	if d.closed {
		return nil, ErrDeviceClosed
	}
	d.nextUse++
	id := d.nextUse
	d.users = append(d.users, user{id: id, stop: stop, release: release})
	return func() {
		d.life.Lock()
		defer d.life.Unlock()
		for i, u := range d.users {
			if u.id == id {
				d.users = append(d.users[:i], d.users[i+1:]...)
				return
			}
		}
	}, nil
}

// Borrowed reports whether the device is the application's (Wrap): what
// it enabled beyond Existing's fields is unknown. A device from Open
// enables no optional feature and only Framescope's extensions.
func (d *Device) Borrowed() bool { return d.borrowed }

// Closed reports whether Close has begun.
func (d *Device) Closed() bool {
	d.life.Lock()
	defer d.life.Unlock()
	return d.closed
}

// Close closes what was made on the device (see OnClose), then destroys
// the device, and the instance when Open created it. On a device from Wrap
// it destroys nothing of the application's: it waits for the device to go
// idle (when something registered with OnClose is still open) and closes
// those users. Later calls do nothing.
func (d *Device) Close() {
	if d == nil {
		return
	}
	d.life.Lock()
	if d.closed || d.Handle == nil {
		d.closed = true
		d.life.Unlock()
		return
	}
	d.closed = true
	users := d.users
	d.users = nil
	d.life.Unlock()
	for i := len(users) - 1; i >= 0; i-- {
		if users[i].stop != nil {
			users[i].stop()
		}
	}
	if len(users) > 0 || !d.borrowed {
		d.WaitIdle()
	}
	for i := len(users) - 1; i >= 0; i-- {
		if users[i].release != nil {
			users[i].release()
		}
	}
	if !d.borrowed {
		C.fs_destroy_device(&d.procs, d.dev())
		if d.ownsInstance {
			d.Instance.Destroy()
		}
	}
	d.Handle = nil // every user is stopped: no goroutine of theirs reads it
}

// QueueFor returns the first queue whose flags contain want ("graphics",
// "compute", "transfer").
func (d *Device) QueueFor(want string) (Queue, bool) {
	for _, q := range d.Queues {
		if strings.Contains(q.Flags, want) {
			return q, true
		}
	}
	return Queue{}, false
}

// ResetQueryPool resets queries on the host (vkResetQueryPool).
func (d *Device) ResetQueryPool(pool vk.QueryPool, first, count uint32) error {
	if d.resetQP == nil {
		return &MissingError{"vkResetQueryPool", "hostQueryReset is not enabled on " + d.Caps.Name}
	}
	C.fs_reset_query_pool(C.fsPFN(d.resetQP), C.fsVkDevice(unsafe.Pointer(d.Handle)),
		C.fsVkQueryPool(handle64(pool)), C.uint32_t(first), C.uint32_t(count))
	return nil
}

// MaxCalibrationDomains is the most domains one CalibratedTimestamps call takes.
const MaxCalibrationDomains = 4

// CalibratedTimestamps reads the given time domains as close together as the
// driver can (vkGetCalibratedTimestamps{KHR,EXT}) into out, and returns the
// driver's maxDeviation in ns. It does not allocate.
func (d *Device) CalibratedTimestamps(domains []TimeDomain, out []uint64) (maxDeviation uint64, err error) {
	if d.calibrated == nil {
		return 0, &MissingError{"vkGetCalibratedTimestamps", "neither " + KHRCalibratedTimestamps + " nor " +
			ExtCalibratedTimestamps + " is enabled on " + d.Caps.Name}
	}
	n := len(domains)
	if n == 0 || n > MaxCalibrationDomains || len(out) < n {
		return 0, fmt.Errorf("vk: CalibratedTimestamps: %d domains, %d outputs (1..%d domains)", n, len(out), MaxCalibrationDomains)
	}
	var doms [MaxCalibrationDomains]C.int32_t
	for i, dom := range domains {
		doms[i] = C.int32_t(dom)
	}
	r := C.fs_calibrated(C.fsPFN(d.calibrated), C.fsVkDevice(unsafe.Pointer(d.Handle)), C.uint32_t(n),
		doms[0], doms[1], doms[2], doms[3])
	if r.rc != 0 {
		return 0, fmt.Errorf("vk: vkGetCalibratedTimestamps: %w", vk.Error(vk.Result(r.rc)))
	}
	for i := 0; i < n; i++ {
		out[i] = uint64(r.ts[i])
	}
	return uint64(r.maxDeviation), nil
}

// Label is a debug-utils label name kept in C memory, made once.
type Label struct{ c *C.char }

// NewLabel copies name into C memory for the life of the process.
func NewLabel(name string) Label { return Label{C.CString(name)} }

// HasLabels reports whether debug-utils labels can be recorded.
func (d *Device) HasLabels() bool { return d.beginLabel != nil && d.endLabel != nil }

// WriteTimestampProc returns the device's vkCmdWriteTimestamp, for C code
// that records timestamps itself; 0 when it was not loaded.
func (d *Device) WriteTimestampProc() uintptr { return uintptr(unsafe.Pointer(d.writeTS)) }

// CmdWriteTimestamp records vkCmdWriteTimestamp through the device's own
// entry point (not the loader's), as the zone path does: the benchmarks'
// floor beside vulkan-go's call.
func (d *Device) CmdWriteTimestamp(cmd vk.CommandBuffer, stage vk.PipelineStageFlagBits, pool vk.QueryPool, query uint32) {
	C.fs_cmd_write_timestamp(C.fsPFN(d.writeTS), C.uintptr_t(uintptr(unsafe.Pointer(cmd))), C.uint32_t(stage),
		C.uint64_t(uintptr(unsafe.Pointer(pool))), C.uint32_t(query))
}

// CmdBeginLabel records vkCmdBeginDebugUtilsLabelEXT; a no-op without the extension.
func (d *Device) CmdBeginLabel(cmd vk.CommandBuffer, l Label) {
	if d.beginLabel == nil || l.c == nil {
		return
	}
	C.fs_cmd_begin_label(C.fsPFN(d.beginLabel), C.fsVkCommandBuffer(unsafe.Pointer(cmd)), l.c)
	if d.CountLabels {
		d.labelsBegun.Add(1)
	}
}

// CmdEndLabel records vkCmdEndDebugUtilsLabelEXT; a no-op without the extension.
func (d *Device) CmdEndLabel(cmd vk.CommandBuffer) {
	if d.endLabel == nil {
		return
	}
	C.fs_cmd_end_label(C.fsPFN(d.endLabel), C.fsVkCommandBuffer(unsafe.Pointer(cmd)))
	if d.CountLabels {
		d.labelsEnded.Add(1)
	}
}

// LabelCounts returns, with CountLabels set, how many label regions were
// begun and ended through CmdBeginLabel and CmdEndLabel: equal when every region opened was closed
// (the validation layer does not check it).
func (d *Device) LabelCounts() (begun, ended uint64) {
	return d.labelsBegun.Load(), d.labelsEnded.Load()
}

// CmdCopyQueries records the copy of count timestamp queries (64-bit
// values with availability, 16 bytes a query) into buf, through the
// device's own entry points: no Go memory and no finalizers are involved.
// pre records a barrier before it that makes all earlier work on the queue
// finish first; post one after it that makes the copy visible to the host.
func (d *Device) CmdCopyQueries(cmd vk.CommandBuffer, pool vk.QueryPool, first, count uint32, buf vk.Buffer, pre, post bool) {
	C.fs_cmd_copy_queries(C.fsPFN(d.barrier), C.fsPFN(d.copyQueries), C.fsVkCommandBuffer(unsafe.Pointer(cmd)),
		C.fsVkQueryPool(handle64(pool)), C.uint32_t(first), C.uint32_t(count), C.fsVkBuffer(handle64(buf)), 0, 16,
		C.uint32_t(vk.QueryResult64Bit|vk.QueryResultWithAvailabilityBit), cbool(pre), cbool(post))
}

// CmdCopyQueriesAt is CmdCopyQueries into buf from offset bytes on.
func (d *Device) CmdCopyQueriesAt(cmd vk.CommandBuffer, pool vk.QueryPool, first, count uint32, buf vk.Buffer, offset uint64, pre, post bool) {
	C.fs_cmd_copy_queries(C.fsPFN(d.barrier), C.fsPFN(d.copyQueries), C.fsVkCommandBuffer(unsafe.Pointer(cmd)),
		C.fsVkQueryPool(handle64(pool)), C.uint32_t(first), C.uint32_t(count), C.fsVkBuffer(handle64(buf)), C.uint64_t(offset), 16,
		C.uint32_t(vk.QueryResult64Bit|vk.QueryResultWithAvailabilityBit), cbool(pre), cbool(post))
}

// CmdCopyStats records the copy of count pipeline statistics queries
// from first, of n statistics each (64-bit values, then availability:
// 8*(n+1) bytes a query), into buf at the place of query first, as
// CmdCopyQueries does.
func (d *Device) CmdCopyStats(cmd vk.CommandBuffer, pool vk.QueryPool, first, count, n uint32, buf vk.Buffer, pre, post bool) {
	stride := 8 * (uint64(n) + 1)
	C.fs_cmd_copy_queries(C.fsPFN(d.barrier), C.fsPFN(d.copyQueries), C.fsVkCommandBuffer(unsafe.Pointer(cmd)),
		C.fsVkQueryPool(handle64(pool)), C.uint32_t(first), C.uint32_t(count), C.fsVkBuffer(handle64(buf)),
		C.uint64_t(uint64(first)*stride), C.uint64_t(stride),
		C.uint32_t(vk.QueryResult64Bit|vk.QueryResultWithAvailabilityBit), cbool(pre), cbool(post))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// QueueSubmit submits cmds (ended) to q in one batch, signalling fence
// (which may be nil). It passes no Go memory to the driver that a
// finalizer could free during the call.
func (d *Device) QueueSubmit(q vk.Queue, cmds []vk.CommandBuffer, fence vk.Fence) error {
	if len(cmds) == 0 || len(cmds) > 64 {
		return fmt.Errorf("vk: QueueSubmit: %d command buffers (1..64)", len(cmds))
	}
	var arr [64]unsafe.Pointer
	for i, c := range cmds {
		arr[i] = unsafe.Pointer(c)
	}
	r := C.fs_queue_submit(C.fsPFN(d.submit), unsafe.Pointer(q), &arr[0], C.uint32_t(len(cmds)), C.uint64_t(handle64(fence)))
	if r != 0 {
		return fmt.Errorf("vk: vkQueueSubmit: %w", vk.Error(vk.Result(r)))
	}
	return nil
}

// CmdWaitEvent records a wait for ev, set by the host, before all later
// commands.
func (d *Device) CmdWaitEvent(cmd vk.CommandBuffer, ev vk.Event) {
	C.fs_cmd_wait_event(C.fsPFN(d.waitEvents), C.fsVkCommandBuffer(unsafe.Pointer(cmd)), C.uint64_t(handle64(ev)))
}

// twins counts the instance's physical devices named name.
func (in *Instance) twins(name string) int {
	pds, err := in.PhysicalDevices()
	if err != nil {
		return 1
	}
	n := 0
	for _, pd := range pds {
		if in.physical(pd).name == name {
			n++
		}
	}
	return max(n, 1)
}
