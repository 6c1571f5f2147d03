//go:build !cgo

package main

import (
	"strings"
	"testing"
)

// Without cgo the Vulkan commands answer with exit 2 and say why.
func TestVulkanCommandsWithoutCgo(t *testing.T) {
	for _, c := range []string{"devices", "clockcheck"} {
		code, _, errs := runCLI(c)
		if code != 2 || !strings.Contains(errs, "built without cgo") {
			t.Errorf("%s: exit %d, %q", c, code, errs)
		}
	}
}

// Without cgo the history works on SQLite (a pure-Go driver): the CLI of
// CI machines on macOS and Windows records and reads runs.
func TestHistoryWithoutCgo(t *testing.T) {
	TestHistoryAddShow(t)
}
