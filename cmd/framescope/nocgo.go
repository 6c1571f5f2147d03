//go:build !cgo

package main

import (
	"fmt"
	"io"
)

// Built without cgo (CGO_ENABLED=0, as for a cross-build to macOS or
// Windows), the command has no Vulkan: the commands that need a device say
// so, and the trace commands (stats, diff, convert, benchfmt) work as ever.
func init() {
	for _, name := range []string{"devices", "clockcheck"} {
		register(command{name: name, summary: "needs Vulkan: not in this build (built without cgo)", run: func(_ []string, _, stderr io.Writer) int {
			fmt.Fprintf(stderr, "framescope %s: this framescope was built without cgo, so without Vulkan; build it with CGO_ENABLED=1 on a machine with libvulkan-dev\n", name)
			return 2
		}})
	}
}
