package vk

import "sync"

var pin struct {
	once sync.Once
	in   *Instance
	err  error
}

// PinDrivers creates one bare instance, once, and never destroys it, so
// that the loader keeps the drivers it loaded for it in the process.
//
// Without it, every vkDestroyInstance unloads the driver and the next
// vkCreateInstance loads it again. NVIDIA's driver (580.159.04, an H100)
// stands that 30 times in one process; the 31st vkCreateInstance fails
// with VK_ERROR_INCOMPATIBLE_DRIVER. Programs that open and close many
// devices in one process (test binaries, benchmarks) call this first. It
// costs one instance, and no device.
func PinDrivers() error {
	pin.once.Do(func() {
		pin.in, pin.err = NewInstance(InstanceConfig{AppName: "framescope pin"})
	})
	return pin.err
}
