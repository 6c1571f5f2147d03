package profiler_test

import (
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// An application whose instance is of Vulkan 1.0 (as Gio's is), which
// says so in Existing.APIVersion (0 reads as 1.0): the profiler makes no
// Vulkan 1.1 call through it (vkGetPhysicalDeviceProperties2 and
// Features2 among them), which the validation layer would report, and
// every zone arrives. vktest's device is made through that instance, with
// what a 1.0 application can enable: no host query reset, no calibrated
// timestamps (they need VK_KHR_get_physical_device_properties2), so the
// application calibrates with GPU.Calibrate.
func TestAppVulkan10Instance(t *testing.T) {
	for _, api := range []uint32{0, vkg.MakeVersion(1, 0, 0)} {
		a := newApp(t, appConfig{vk: vk.Config{InstanceConfig: vk.InstanceConfig{APIVersion: vkg.MakeVersion(1, 0, 0)}},
			gpu: profiler.GPUOptions{FramesInFlight: 2}, apiVersion: &api})
		if a.q.Dev.HostQueryReset || a.q.Dev.Calibrated != "" {
			t.Fatal("a Vulkan 1.0 device has host query reset or calibrated timestamps on")
		}
		for range 3 {
			if err := a.g.Calibrate(); err != nil {
				t.Fatal(err)
			}
		}
		for range 12 {
			a.frame(a.work)
		}
		a.expect(a.finish(), 0, timeline.Drops{})
	}
}

// An application written before Existing.APIVersion existed: its
// instance is of Vulkan 1.3, it enabled calibrated timestamps and host
// query reset and says so, and leaves APIVersion 0. WrapDevice trusts
// what the application enabled (the device could not have been made
// otherwise), calibrates with the extension, resets queries on the host,
// and says that it did not read the device's UUID; every zone arrives and
// the validation layer stays silent.
func TestAppZeroAPIVersion(t *testing.T) {
	var zero uint32
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}, apiVersion: &zero})
	if a.q.Dev.Instance.APIVersion < vkg.MakeVersion(1, 2, 0) {
		t.Skip("vktest's instance is not of Vulkan 1.2")
	}
	// Either extension's name: Existing says only that one was enabled,
	// and the device may offer both (NVIDIA's does).
	if got, want := a.dev.Calibrated(), a.q.Dev.Calibrated; (got == "") != (want == "") {
		t.Errorf("WrapDevice with APIVersion 0 calibrates with %q; the device enabled %q", got, want)
	}
	if got, want := a.dev.HostQueryReset(), a.q.Dev.HostQueryReset; got != want || want && !a.dev.Caps().HostQueryReset {
		t.Errorf("WrapDevice with APIVersion 0: host query reset %v (Caps says %v); the device enabled it: %v", got, a.dev.Caps().HostQueryReset, want)
	}
	for range 12 {
		a.frame(a.work)
	}
	st := a.g.Stats()
	if a.q.Dev.Calibrated != "" && st.Calibrations == 0 {
		t.Errorf("no calibration through %s: %+v", a.q.Dev.Calibrated, st)
	}
	if a.q.Dev.Caps.APIVersionCode >= vkg.MakeVersion(1, 1, 0) && !strings.Contains(st.Unread, "Existing.APIVersion") {
		t.Errorf("Stats.Unread = %q: it does not say what was not read, nor which field to set", st.Unread)
	}
	a.expect(a.finish(), 0, timeline.Drops{})
}

// WrapDevice told host query reset is on, through an instance it is told
// is of 1.0, without VK_EXT_host_query_reset, refuses with an error
// naming what is missing, rather than call vkResetQueryPool, which
// Vulkan 1.0 lacks.
func TestWrapHostResetNeedsVersion(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	d := q.Dev
	if !d.HostQueryReset || d.Caps.APIVersionCode < vkg.MakeVersion(1, 2, 0) {
		t.Skip("the device has no core host query reset")
	}
	_, err := profiler.WrapDevice(profiler.Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle,
		Queues: []profiler.QueueID{{Family: q.Q.Family, Index: q.Q.Index}}, HostQueryReset: true, APIVersion: vkg.MakeVersion(1, 0, 0)})
	if err == nil {
		t.Fatal("WrapDevice with HostQueryReset and APIVersion 1.0 accepted, on a device that enabled it as core 1.2")
	}
	t.Log(err)
	for _, want := range []string{"vkResetQueryPoolEXT", "Existing.APIVersion", "VK_EXT_host_query_reset"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s", want)
		}
	}
}
