package vk

/*
#include <stdlib.h>
#include "procs.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// TimeDomain is a VkTimeDomainKHR value.
type TimeDomain int32

// Time domains (identical values for the EXT and KHR extensions).
const (
	TimeDomainDevice            TimeDomain = 0
	TimeDomainClockMonotonic    TimeDomain = 1
	TimeDomainClockMonotonicRaw TimeDomain = 2
	TimeDomainQueryPerfCounter  TimeDomain = 3
	ExtCalibratedTimestamps                = "VK_EXT_calibrated_timestamps"
	KHRCalibratedTimestamps                = "VK_KHR_calibrated_timestamps"
	ExtHostQueryReset                      = "VK_EXT_host_query_reset"
)

func (d TimeDomain) String() string {
	switch d {
	case TimeDomainDevice:
		return "DEVICE"
	case TimeDomainClockMonotonic:
		return "CLOCK_MONOTONIC"
	case TimeDomainClockMonotonicRaw:
		return "CLOCK_MONOTONIC_RAW"
	case TimeDomainQueryPerfCounter:
		return "QUERY_PERFORMANCE_COUNTER"
	}
	return fmt.Sprintf("TimeDomain(%d)", int32(d))
}

// FamilyCaps describes one queue family.
type FamilyCaps struct {
	Index              uint32
	Flags              string // "graphics+compute+transfer", ...
	Bits               uint32 // the VkQueueFlags Flags spells
	Count              uint32
	TimestampValidBits uint32 // 0: no timestamps on this family
}

// Caps is what Framescope needs to know of a physical device.
type Caps struct {
	Index          int
	Name           string
	Type           string // discrete, integrated, virtual, cpu, other
	APIVersion     string
	APIVersionCode uint32 // VK_MAKE_VERSION encoding
	// Version is what may be used of the device through the instance
	// Caps was read on: the lower of the instance's and the device's
	// API versions, as Vulkan rules.
	Version uint32
	// UUID is VkPhysicalDeviceIDProperties.deviceUUID, where Version is
	// 1.1 or more; HasUUID says so.
	UUID            [16]byte
	HasUUID         bool
	VendorID        uint32
	DeviceID        uint32
	DriverName      string
	DriverInfo      string
	TimestampPeriod float32 // ns per tick
	// TimestampComputeAndGraphics: every graphics and compute queue supports timestamps.
	TimestampComputeAndGraphics bool
	Families                    []FamilyCaps
	// CalibratedExtension is the calibrated-timestamps extension the device
	// offers, KHR preferred; "" when neither.
	CalibratedExtension string
	TimeDomains         []TimeDomain
	// HostQueryReset: the hostQueryReset feature (core 1.2 or EXT).
	HostQueryReset bool
	// PipelineStatisticsQuery: the pipelineStatisticsQuery feature.
	PipelineStatisticsQuery bool
	Extensions              map[string]bool
}

// HasTimeDomain reports whether d is calibrateable on the device.
func (c *Caps) HasTimeDomain(d TimeDomain) bool {
	for _, x := range c.TimeDomains {
		if x == d {
			return true
		}
	}
	return false
}

func queueFlagsString(f vk.QueueFlags) string {
	var parts []string
	if f&vk.QueueFlags(vk.QueueGraphicsBit) != 0 {
		parts = append(parts, "graphics")
	}
	if f&vk.QueueFlags(vk.QueueComputeBit) != 0 {
		parts = append(parts, "compute")
	}
	if f&vk.QueueFlags(vk.QueueTransferBit) != 0 {
		parts = append(parts, "transfer")
	}
	if f&vk.QueueFlags(vk.QueueSparseBindingBit) != 0 {
		parts = append(parts, "sparse")
	}
	if len(parts) == 0 {
		return fmt.Sprintf("flags(%#x)", uint32(f))
	}
	return strings.Join(parts, "+")
}

func deviceTypeString(t vk.PhysicalDeviceType) string {
	switch t {
	case vk.PhysicalDeviceTypeDiscreteGpu:
		return "discrete"
	case vk.PhysicalDeviceTypeIntegratedGpu:
		return "integrated"
	case vk.PhysicalDeviceTypeVirtualGpu:
		return "virtual"
	case vk.PhysicalDeviceTypeCpu:
		return "cpu"
	}
	return "other"
}

func versionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22, (v>>12)&0x3ff, v&0xfff)
}

// physical is what Framescope reads of VkPhysicalDeviceProperties and
// VkPhysicalDeviceFeatures.
type physical struct {
	name                   string
	typ                    vk.PhysicalDeviceType
	api, vendor, device    uint32
	timestampPeriod        float32
	timestampAll, pipeline bool
}

// physical reads pd's properties and features through the instance's
// entry points, into C memory that vulkan-go's types read.
func (in *Instance) physical(pd vk.PhysicalDevice) physical {
	buf := C.malloc(C.fs_properties_size)
	defer C.free(buf)
	h := C.fsVkPhysicalDevice(unsafe.Pointer(pd))
	C.fs_get_properties(&in.procs, h, buf)
	p := vk.NewPhysicalDevicePropertiesRef(buf)
	p.Deref()
	p.Limits.Deref()
	out := physical{name: vk.ToString(p.DeviceName[:]), typ: p.DeviceType, api: p.ApiVersion, vendor: p.VendorID,
		device: p.DeviceID, timestampPeriod: p.Limits.TimestampPeriod, timestampAll: p.Limits.TimestampComputeAndGraphics == vk.True}
	C.fs_get_features(&in.procs, h, buf)
	f := vk.NewPhysicalDeviceFeaturesRef(buf)
	f.Deref()
	out.pipeline = f.PipelineStatisticsQuery == vk.True
	return out
}

// Caps reads the timing capabilities of a physical device.
func (in *Instance) Caps(index int, pd vk.PhysicalDevice) (Caps, error) {
	p := in.physical(pd)
	c := Caps{
		Index:                       index,
		Name:                        p.name,
		Type:                        deviceTypeString(p.typ),
		APIVersion:                  versionString(p.api),
		APIVersionCode:              p.api,
		Version:                     min(p.api, in.APIVersion),
		VendorID:                    p.vendor,
		DeviceID:                    p.device,
		TimestampPeriod:             p.timestampPeriod,
		TimestampComputeAndGraphics: p.timestampAll,
		PipelineStatisticsQuery:     p.pipeline,
	}
	if in.properties2 != nil && c.Version >= vk.MakeVersion(1, 1, 0) {
		C.fs_get_device_uuid(C.fsPFN(in.properties2), C.fsVkPhysicalDevice(unsafe.Pointer(pd)), (*C.uint8_t)(unsafe.Pointer(&c.UUID[0])))
		c.HasUUID = true
	}
	if in.properties2 != nil && c.Version >= vk.MakeVersion(1, 2, 0) {
		var d C.fsDriverInfo
		C.fs_get_driver_info(C.fsPFN(in.properties2), C.fsVkPhysicalDevice(unsafe.Pointer(pd)), &d)
		c.DriverName = C.GoString(&d.driverName[0])
		c.DriverInfo = C.GoString(&d.driverInfo[0])
	}
	fams, err := in.queueFamilies(pd)
	if err != nil {
		return c, err
	}
	c.Families = fams
	exts, err := in.DeviceExtensions(pd)
	if err != nil {
		return c, err
	}
	c.Extensions = exts
	switch {
	case exts[KHRCalibratedTimestamps]:
		c.CalibratedExtension = KHRCalibratedTimestamps
	case exts[ExtCalibratedTimestamps]:
		c.CalibratedExtension = ExtCalibratedTimestamps
	}
	if in.Properties2 {
		// Before a device enables the extension, Vulkan 1.1 (or the
		// instance's VK_KHR_get_physical_device_properties2) is needed to
		// use a device extension's physical-device commands.
		c.TimeDomains = in.timeDomainsOf(c.CalibratedExtension, pd)
	}
	if in.features2 != nil && (c.Version >= vk.MakeVersion(1, 2, 0) || exts[ExtHostQueryReset]) {
		c.HostQueryReset = C.fs_host_query_reset_supported(C.fsPFN(in.features2),
			C.fsVkPhysicalDevice(unsafe.Pointer(pd))) != 0
	}
	return c, nil
}

// timeDomainsOf returns the time domains pd calibrates, when it offers
// ext (a calibrated-timestamps extension): the caller knows that it may
// call the extension's physical-device command.
func (in *Instance) timeDomainsOf(ext string, pd vk.PhysicalDevice) []TimeDomain {
	if ext == "" || in.timeDomains == nil {
		return nil
	}
	var n C.uint32_t
	h := C.fsVkPhysicalDevice(unsafe.Pointer(pd))
	if r := C.fs_get_calibrateable_time_domains(C.fsPFN(in.timeDomains), h, &n, nil); r != 0 || n == 0 {
		return nil
	}
	ds := make([]C.int32_t, n)
	if r := C.fs_get_calibrateable_time_domains(C.fsPFN(in.timeDomains), h, &n, &ds[0]); r < 0 {
		return nil
	}
	out := make([]TimeDomain, 0, n)
	for _, d := range ds[:n] {
		out = append(out, TimeDomain(d))
	}
	return out
}
