// Package vk is Framescope's only cgo. It opens the Vulkan loader
// (libvulkan.so.1, then libvulkan.so) and hands it to vulkan-go, and it loads
// the entry points vulkan-go lacks: calibrated timestamps (EXT and KHR),
// host query reset (core 1.2 or EXT), debug-utils labels and the validation
// messenger. Each entry point reports clearly when it is absent.
//
// It also opens instances and devices configured the way Framescope needs
// them (Open), and reads a physical device's timing capabilities (Caps).
package vk
