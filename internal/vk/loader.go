package vk

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "fsvk.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// LoaderNames are the file names Load tries, in order. libvulkan.so.1 is what
// the runtime package (Debian's libvulkan1) installs; libvulkan.so comes only
// with the -dev package.
var LoaderNames = []string{"libvulkan.so.1", "libvulkan.so"}

var (
	loadOnce sync.Once
	loadErr  error
)

// ErrNoLoader is returned by Load when no Vulkan loader library could be opened.
var ErrNoLoader = errors.New("vk: no Vulkan loader found")

// Load opens the Vulkan loader and initialises vulkan-go with it. It is safe
// to call many times; the first call does the work.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

func load() error {
	var msgs []string
	opened := false
	for _, name := range LoaderNames {
		cname := C.CString(name)
		var buf [512]C.char
		rc := C.fs_open_loader(cname, &buf[0], C.size_t(len(buf)))
		C.free(unsafe.Pointer(cname))
		if rc == 0 {
			opened = true
			break
		}
		msgs = append(msgs, C.GoString(&buf[0]))
	}
	if !opened {
		return fmt.Errorf("%w (tried %s): %s; install Debian's libvulkan1 (and mesa-vulkan-drivers for a CPU device)",
			ErrNoLoader, strings.Join(LoaderNames, ", "), strings.Join(msgs, "; "))
	}
	vk.SetGetInstanceProcAddr(C.fs_get_instance_proc_addr_ptr())
	if err := vk.Init(); err != nil {
		return fmt.Errorf("vk: vulkan-go init: %w", err)
	}
	return nil
}

// proc is a loaded entry point; nil when absent.
type proc C.fsPFN

// loaderGIPA is the loader's vkGetInstanceProcAddr (after Load).
func loaderGIPA() unsafe.Pointer { return C.fs_get_instance_proc_addr_ptr() }

// handle64 reads a non-dispatchable handle (8 bytes on 64-bit) as uint64.
func handle64[T any](h T) uint64 {
	return *(*uint64)(unsafe.Pointer(&h))
}
