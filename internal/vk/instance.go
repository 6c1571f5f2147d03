package vk

/*
#include <stdlib.h>
#include "procs.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// ValidationLayer is the Khronos validation layer's name.
const ValidationLayer = "VK_LAYER_KHRONOS_validation"

// ErrNoValidation is returned when validation is required but the layer
// is not installed.
var ErrNoValidation = errors.New("vk: validation layer " + ValidationLayer +
	" not found; install Debian's vulkan-validationlayers")

// ErrNoDebugUtils is returned when validation is on but VK_EXT_debug_utils,
// through which its messages are caught, is missing.
var ErrNoDebugUtils = errors.New("vk: the validation layer is on but VK_EXT_debug_utils is missing: its messages could not be caught")

// InstanceConfig configures NewInstance.
type InstanceConfig struct {
	AppName string
	// Validation enables the Khronos validation layer when it is installed,
	// with a messenger that counts its warnings and errors, from
	// vkCreateInstance to vkDestroyInstance.
	Validation bool
	// RequireValidation makes a missing layer an error.
	RequireValidation bool
	// SyncValidation and BestPractices turn on the layer's synchronization
	// validation and best-practices checks (VK_EXT_validation_features),
	// when the layer is on; an error if it does not offer them.
	SyncValidation bool
	BestPractices  bool
	// APIVersion is the VkApplicationInfo.apiVersion the instance is made
	// with (vk.MakeVersion); 0: 1.3. Tests of old applications set 1.0.
	APIVersion uint32
}

// VkValidationFeatureEnableEXT values.
const (
	validationBestPractices = 2
	validationSync          = 4
)

// Instance is a VkInstance with the instance-level entry points Framescope
// loads itself.
type Instance struct {
	Handle     vk.Instance
	Validation bool // the validation layer is on
	DebugUtils bool // VK_EXT_debug_utils is enabled
	// APIVersion is the apiVersion the instance was made with (0 reads as
	// 1.0, as Vulkan reads it): what Framescope may call on it, and, with
	// a physical device's own version, on a device made from it.
	APIVersion uint32
	// Properties2: vkGetPhysicalDeviceProperties2 and Features2 may be
	// called (Vulkan 1.1, or VK_KHR_get_physical_device_properties2
	// enabled on the instance).
	Properties2 bool

	timeDomains     proc // vkGetPhysicalDeviceCalibrateableTimeDomains{KHR,EXT}
	features2       proc // vkGetPhysicalDeviceFeatures2
	properties2     proc // vkGetPhysicalDeviceProperties2
	createMessenger proc
	destroyMsg      proc
	messenger       C.fsVkDebugUtilsMessenger
	procs           C.fsInstanceProcs
}

func cstr(s string) string { return s + "\x00" }

// NewInstance loads Vulkan and creates an instance for API 1.3.
func NewInstance(cfg InstanceConfig) (*Instance, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	exts, err := InstanceExtensions()
	if err != nil {
		return nil, err
	}
	var layers []string
	validation := false
	if cfg.Validation || cfg.RequireValidation {
		have, err := InstanceLayers()
		if err != nil {
			return nil, err
		}
		if have[ValidationLayer] {
			layers = append(layers, cstr(ValidationLayer))
			validation = true
		} else if cfg.RequireValidation {
			return nil, ErrNoValidation
		}
	}
	var extNames []string
	debugUtils := exts["VK_EXT_debug_utils"]
	var enables []C.int32_t
	if validation {
		lexts, err := LayerExtensions(ValidationLayer)
		if err != nil {
			return nil, err
		}
		debugUtils = debugUtils || lexts["VK_EXT_debug_utils"]
		if !debugUtils {
			return nil, ErrNoDebugUtils
		}
		if cfg.SyncValidation {
			enables = append(enables, validationSync)
		}
		if cfg.BestPractices {
			enables = append(enables, validationBestPractices)
		}
		if len(enables) > 0 {
			if !exts["VK_EXT_validation_features"] && !lexts["VK_EXT_validation_features"] {
				return nil, errors.New("vk: the validation layer does not offer VK_EXT_validation_features (synchronization validation, best practices)")
			}
			extNames = append(extNames, cstr("VK_EXT_validation_features"))
		}
	}
	if debugUtils {
		extNames = append(extNames, cstr("VK_EXT_debug_utils"))
	}
	name := cfg.AppName
	if name == "" {
		name = "framescope"
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	cl, freeL := cstrings(layers)
	defer freeL()
	ce, freeE := cstrings(extNames)
	defer freeE()
	var ch C.fsVkInstance
	var en *C.int32_t
	if len(enables) > 0 {
		// C memory: vkCreateInstance reads it, and cgo forbids Go pointers
		// in the C structs built around it.
		en = (*C.int32_t)(C.malloc(C.size_t(4 * len(enables))))
		defer C.free(unsafe.Pointer(en))
		copy(unsafe.Slice(en, len(enables)), enables)
	}
	api := cfg.APIVersion
	if api == 0 {
		api = vk.MakeVersion(1, 3, 0)
	}
	if r := C.fs_create_instance(cname, C.uint32_t(api), cl, C.uint32_t(len(layers)),
		ce, C.uint32_t(len(extNames)), en, C.uint32_t(len(enables)), cbool(validation), &ch); r != 0 {
		return nil, fmt.Errorf("vk: vkCreateInstance: %w", vk.Error(vk.Result(r)))
	}
	h := vk.Instance(unsafe.Pointer(ch))
	if err := vk.InitInstance(h); err != nil { // for the program's vulkan-go calls (OpenDevice says so)
		vk.DestroyInstance(h, nil)
		return nil, fmt.Errorf("vk: loading instance entry points: %w", err)
	}
	in, err := wrapInstance(h, loaderGIPA(), debugUtils, api, false)
	if err != nil {
		C.fs_destroy_instance(&in.procs, C.fsVkInstance(unsafe.Pointer(h)))
		return nil, err
	}
	in.Validation = validation
	if validation {
		if in.createMessenger == nil || in.destroyMsg == nil {
			in.Destroy()
			return nil, fmt.Errorf("%w (vkCreateDebugUtilsMessengerEXT not loaded)", ErrNoDebugUtils)
		}
		r := C.fs_create_messenger(C.fsPFN(in.createMessenger), C.fsVkInstance(unsafe.Pointer(h)), &in.messenger)
		if r != 0 {
			in.Destroy()
			return nil, fmt.Errorf("vk: vkCreateDebugUtilsMessengerEXT: %w", vk.Error(vk.Result(r)))
		}
	}
	return in, nil
}

// wrapInstance loads Framescope's instance-level entry points for h
// through gipa, for an instance of API version api with
// VK_KHR_get_physical_device_properties2 enabled or not (props2ext): only
// those the version and extensions allow, as the loader answers a name
// whatever the version.
func wrapInstance(h vk.Instance, gipa unsafe.Pointer, debugUtils bool, api uint32, props2ext bool) (*Instance, error) {
	in := &Instance{Handle: h, DebugUtils: debugUtils, APIVersion: max(api, vk.MakeVersion(1, 0, 0))}
	if err := in.useProcs(gipa); err != nil {
		return in, err
	}
	in.timeDomains, _ = in.lookup("vkGetPhysicalDeviceCalibrateableTimeDomainsKHR",
		"vkGetPhysicalDeviceCalibrateableTimeDomainsEXT")
	switch {
	case in.APIVersion >= vk.MakeVersion(1, 1, 0):
		in.features2, _ = in.lookup("vkGetPhysicalDeviceFeatures2")
		in.properties2, _ = in.lookup("vkGetPhysicalDeviceProperties2")
	case props2ext:
		in.features2, _ = in.lookup("vkGetPhysicalDeviceFeatures2KHR")
		in.properties2, _ = in.lookup("vkGetPhysicalDeviceProperties2KHR")
	}
	in.Properties2 = in.features2 != nil && in.properties2 != nil
	if debugUtils {
		in.createMessenger, _ = in.lookup("vkCreateDebugUtilsMessengerEXT")
		in.destroyMsg, _ = in.lookup("vkDestroyDebugUtilsMessengerEXT")
	}
	return in, nil
}

// Destroy destroys the instance. Destroy devices first.
func (in *Instance) Destroy() {
	if in == nil || in.Handle == nil {
		return
	}
	if in.messenger != 0 && in.destroyMsg != nil {
		C.fs_destroy_messenger(C.fsPFN(in.destroyMsg), C.fsVkInstance(unsafe.Pointer(in.Handle)), in.messenger)
		in.messenger = 0
	}
	C.fs_destroy_instance(&in.procs, C.fsVkInstance(unsafe.Pointer(in.Handle)))
	in.Handle = nil
}

// maxPhysical bounds the physical devices an instance lists.
const maxPhysical = 256

// PhysicalDevices lists the instance's physical devices in the loader's order.
func (in *Instance) PhysicalDevices() ([]vk.PhysicalDevice, error) {
	h := C.fsVkInstance(unsafe.Pointer(in.Handle))
	var n C.uint32_t
	if r := vk.Result(C.fs_enumerate_physical(&in.procs, h, &n, nil)); r != vk.Success {
		return nil, fmt.Errorf("vk: vkEnumeratePhysicalDevices: %w", vk.Error(r))
	}
	if n == 0 {
		return nil, nil
	}
	if n > maxPhysical {
		n = maxPhysical
	}
	// C memory: the driver writes the handles there.
	arr := (*C.fsVkPhysicalDevice)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.fsVkPhysicalDevice(nil)))))
	defer C.free(unsafe.Pointer(arr))
	if r := vk.Result(C.fs_enumerate_physical(&in.procs, h, &n, arr)); r != vk.Success && r != vk.Incomplete {
		return nil, fmt.Errorf("vk: vkEnumeratePhysicalDevices: %w", vk.Error(r))
	}
	pds := make([]vk.PhysicalDevice, int(n))
	for i, pd := range unsafe.Slice(arr, int(n)) {
		pds[i] = vk.PhysicalDevice(unsafe.Pointer(pd))
	}
	return pds, nil
}

// ValidationCounts returns how many validation warnings and errors have been
// reported since the process started, by every instance with validation on.
func ValidationCounts() (warnings, errors uint64) {
	return uint64(C.fs_messages_count(2)), uint64(C.fs_messages_count(3))
}

// ValidationMark returns a mark for ValidationMessagesSince: the number of
// warnings and errors kept so far.
func ValidationMark() uint64 { return uint64(C.fs_messages_head()) }

// ValidationMessagesSince returns the warnings and errors reported since
// mark, the latest 64 at most, whether or not TakeValidationMessages took
// them meanwhile.
func ValidationMessagesSince(mark uint64) []string {
	var out []string
	var buf [1100]C.char
	for i := mark; i < ValidationMark(); i++ {
		if C.fs_messages_at(C.uint64_t(i), &buf[0], C.int(len(buf))) != 0 {
			out = append(out, C.GoString(&buf[0]))
		}
	}
	return out
}

// TakeValidationMessages returns the warnings and errors kept since the last
// call (the latest 64 at most) and forgets them.
func TakeValidationMessages() []string {
	var out []string
	var buf [1100]C.char
	for C.fs_messages_take(&buf[0], C.int(len(buf))) != 0 {
		out = append(out, C.GoString(&buf[0]))
	}
	return out
}

// cstrings copies names (which may end in NUL) into C memory, for a
// call's duration: the returned pointer addresses a C array.
func cstrings(names []string) (**C.char, func()) {
	if len(names) == 0 {
		return nil, func() {}
	}
	arr := (*[1 << 16]*C.char)(C.malloc(C.size_t(len(names)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	for i, n := range names {
		arr[i] = C.CString(strings.TrimSuffix(n, "\x00"))
	}
	return &arr[0], func() {
		for i := range names {
			C.free(unsafe.Pointer(arr[i]))
		}
		C.free(unsafe.Pointer(arr))
	}
}
