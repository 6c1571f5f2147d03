// Package vktest opens real Vulkan devices for tests, with the validation
// layer on, and fails a test whose Vulkan use made the layer report
// anything.
//
// Without a Vulkan device a test is skipped, saying why, unless the
// environment has FRAMESCOPE_REQUIRE_VULKAN=1 (make test sets it): then it
// fails.
package vktest

import (
	"os"
	"testing"

	"github.com/framescope/framescope/internal/vk"
)

// Required reports whether tests must fail, not skip, without Vulkan.
func Required() bool { return os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") == "1" }

// Open opens a device per cfg with validation on (required under
// FRAMESCOPE_REQUIRE_VULKAN=1), synchronization validation included. At cleanup it closes the device and fails
// the test if the validation layer reported warnings or errors meanwhile.
// Validation counts are process-wide: tests that use it must not run in
// parallel with other Vulkan tests.
func Open(tb testing.TB, cfg vk.Config) *vk.Device {
	tb.Helper()
	d := open(tb, cfg)
	if !d.Instance.Validation {
		tb.Logf("validation layer %s not installed: running without it", vk.ValidationLayer)
	}
	w0, e0 := vk.ValidationCounts()
	mark := vk.ValidationMark()
	tb.Cleanup(func() {
		d.Close()
		w, e := vk.ValidationCounts()
		msgs := vk.ValidationMessagesSince(mark)
		if w != w0 || e != e0 {
			if len(msgs) > 4 {
				msgs = msgs[len(msgs)-4:]
			}
			tb.Errorf("validation layer reported %d warnings and %d errors; the latest: %q", w-w0, e-e0, msgs)
		}
	})
	return d
}

// OpenUnchecked opens a device with validation on but does not fail on its
// messages: for tests that provoke them on purpose.
func OpenUnchecked(tb testing.TB, cfg vk.Config) *vk.Device {
	tb.Helper()
	d := open(tb, cfg)
	tb.Cleanup(func() {
		d.Close()
		vk.TakeValidationMessages()
	})
	return d
}

func open(tb testing.TB, cfg vk.Config) *vk.Device {
	tb.Helper()
	cfg.Validation = true
	cfg.SyncValidation = true
	cfg.RequireValidation = Required()
	// Tests open many devices; the pin keeps NVIDIA's driver loaded
	// between them (see vk.PinDrivers). Its error shows again in Open.
	_ = vk.PinDrivers()
	d, err := vk.Open(cfg)
	if err != nil {
		if Required() {
			tb.Fatalf("no Vulkan device (FRAMESCOPE_REQUIRE_VULKAN=1): %v", err)
		}
		tb.Skipf("no Vulkan device: %v", err)
	}
	d.CountLabels = true // tests check that label regions balance
	return d
}
