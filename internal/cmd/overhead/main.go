// Command overhead is the demo's render loop with the rig that measures
// what profiling costs the GPU: the flags of examples/triangle, plus
// -rawzones N (N bare vkCmdWriteTimestamp pairs around the load draws, the
// floor the profiler's zones are compared with), -cmdgpu (each command
// buffer timed whole with two raw timestamps, the profiler's readback
// included) and -stages BEGIN-END (the pipeline stages of zones and raw
// pairs). scripts/gpu/overhead.sh runs it on the GPU machine.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/framescope/framescope/internal/cmd/demo"
)

func main() {
	cfg, err := demo.ParseFlags("overhead", os.Args[1:], os.Stderr, demo.OverheadRig)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		os.Exit(2)
	}
	if err := demo.Run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
}
