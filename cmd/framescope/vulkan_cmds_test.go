//go:build cgo

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/vk"
)

// needVulkan skips without a Vulkan device, unless make test requires one.
func needVulkan(t *testing.T) {
	t.Helper()
	d, err := vk.Open(vk.Config{})
	if err != nil {
		if os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") == "1" {
			t.Fatalf("no Vulkan device (FRAMESCOPE_REQUIRE_VULKAN=1): %v", err)
		}
		t.Skipf("no Vulkan device: %v", err)
	}
	d.Close()
}

func TestDevicesCommand(t *testing.T) {
	needVulkan(t)
	var out, errb bytes.Buffer
	if rc := run([]string{"devices"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	for _, want := range []string{"timestampPeriod", "timestampValidBits", "calibrated timestamps", "hostQueryReset", "Framescope:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("devices output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if rc := run([]string{"devices", "-json"}, &out, &errb); rc != 0 || !strings.HasPrefix(strings.TrimSpace(out.String()), "[") {
		t.Errorf("devices -json: rc %d, %q", rc, out.String())
	}
}

func TestClockCheckCommand(t *testing.T) {
	needVulkan(t)
	var out, errb bytes.Buffer
	if rc := run([]string{"clockcheck", "-seconds", "1", "-fit-every", "200ms"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	s := out.String()
	for _, want := range []string{"causality violations: 0", "model residual:", "maxDeviation:", "one start-up calibration"} {
		if !strings.Contains(s, want) {
			t.Errorf("clockcheck output lacks %q:\n%s", want, s)
		}
	}
	if rc := run([]string{"clockcheck", "-seconds", "-1"}, &out, &errb); rc != 2 {
		t.Errorf("bad -seconds: rc %d, want 2", rc)
	}
	if rc := run([]string{"clockcheck", "-queue", "nonesuch"}, &out, &errb); rc != 2 {
		t.Errorf("unknown queue: rc %d, want 2", rc)
	}
}
