package vk

/*
#include <stdlib.h>
#include "procs.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// maxNames bounds the extensions or layers one enumeration returns.
const maxNames = 1024

// names runs a C enumeration that writes 256-byte names and returns them.
func names(what string, enum func(buf *C.char, cap C.uint32_t) C.int) (map[string]bool, error) {
	buf := make([]byte, 256*maxNames)
	n := enum((*C.char)(unsafe.Pointer(&buf[0])), maxNames)
	if n < 0 {
		return nil, fmt.Errorf("vk: %s: %w", what, vk.Error(vk.Result(n)))
	}
	out := make(map[string]bool, int(n))
	for i := 0; i < int(n); i++ {
		out[vk.ToString(buf[256*i:256*(i+1)])] = true
	}
	return out, nil
}

// InstanceExtensions lists the instance extensions the loader offers.
func InstanceExtensions() (map[string]bool, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	return names("vkEnumerateInstanceExtensionProperties", func(b *C.char, c C.uint32_t) C.int {
		return C.fs_instance_extensions(nil, b, c)
	})
}

// LayerExtensions lists the instance extensions a layer offers itself.
func LayerExtensions(layer string) (map[string]bool, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	cl := C.CString(layer)
	defer C.free(unsafe.Pointer(cl))
	return names("vkEnumerateInstanceExtensionProperties("+layer+")", func(b *C.char, c C.uint32_t) C.int {
		return C.fs_instance_extensions(cl, b, c)
	})
}

// InstanceLayers lists the installed instance layers.
func InstanceLayers() (map[string]bool, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	return names("vkEnumerateInstanceLayerProperties", func(b *C.char, c C.uint32_t) C.int {
		return C.fs_instance_layers(b, c)
	})
}

// DeviceExtensions lists the device extensions a physical device offers.
func (in *Instance) DeviceExtensions(pd vk.PhysicalDevice) (map[string]bool, error) {
	return names("vkEnumerateDeviceExtensionProperties", func(b *C.char, c C.uint32_t) C.int {
		return C.fs_device_extensions(in.procs.deviceExtensions, C.fsVkPhysicalDevice(unsafe.Pointer(pd)), b, c)
	})
}

// queueFamilies reads a physical device's queue families.
func (in *Instance) queueFamilies(pd vk.PhysicalDevice) ([]FamilyCaps, error) {
	var fams [64]C.fsFamily
	n := C.fs_queue_families(in.procs.queueFamilies, C.fsVkPhysicalDevice(unsafe.Pointer(pd)), &fams[0], 64)
	if n < 0 {
		return nil, fmt.Errorf("vk: vkGetPhysicalDeviceQueueFamilyProperties: %w", vk.Error(vk.Result(n)))
	}
	out := make([]FamilyCaps, int(n))
	for i := range out {
		out[i] = FamilyCaps{
			Index:              uint32(i),
			Flags:              queueFlagsString(vk.QueueFlags(fams[i].flags)),
			Bits:               uint32(fams[i].flags),
			Count:              uint32(fams[i].count),
			TimestampValidBits: uint32(fams[i].validBits),
		}
	}
	return out, nil
}
