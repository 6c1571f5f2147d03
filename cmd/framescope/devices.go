//go:build cgo

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/framescope/framescope/internal/vk"
)

func init() {
	register(command{name: "devices", summary: "list Vulkan devices and their timing capabilities", run: runDevices})
}

type deviceReport struct {
	vk.Caps
	Extensions  map[string]bool `json:"-"`
	DebugLabels bool            // VK_EXT_debug_utils on the instance: zones can mirror as labels
	Verdict     string
}

func runDevices(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	in, err := vk.NewInstance(vk.InstanceConfig{AppName: "framescope devices"})
	if err != nil {
		fmt.Fprintln(stderr, "framescope devices:", err)
		return 1
	}
	defer in.Destroy()
	pds, err := in.PhysicalDevices()
	if err != nil {
		fmt.Fprintln(stderr, "framescope devices:", err)
		return 1
	}
	if len(pds) == 0 {
		fmt.Fprintln(stderr, "framescope devices: no Vulkan device; install a driver (Debian's mesa-vulkan-drivers gives lavapipe, a CPU device)")
		return 1
	}
	var reps []deviceReport
	for i, pd := range pds {
		c, err := in.Caps(i, pd)
		if err != nil {
			fmt.Fprintf(stderr, "framescope devices: device %d: %v\n", i, err)
			continue
		}
		reps = append(reps, deviceReport{Caps: c, DebugLabels: in.DebugUtils, Verdict: verdict(c)})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reps); err != nil {
			return 1
		}
		return 0
	}
	for _, r := range reps {
		printDevice(stdout, r)
	}
	return 0
}

// verdict answers a user's first question: does this device do what
// Framescope needs?
func verdict(c vk.Caps) string {
	anyTS := false
	for _, f := range c.Families {
		if f.TimestampValidBits > 0 {
			anyTS = true
		}
	}
	switch {
	case !anyTS:
		return "no: no queue family writes timestamps"
	case c.CalibratedExtension == "" || !c.HasTimeDomain(vk.TimeDomainClockMonotonic):
		return "yes, with the submit-and-wait calibration fallback (no calibrated CLOCK_MONOTONIC timestamps)"
	case !c.HostQueryReset:
		return "yes (query pools are reset with commands: no hostQueryReset)"
	}
	return "yes: timestamps, calibrated timestamps against CLOCK_MONOTONIC, host query reset"
}

func printDevice(w io.Writer, r deviceReport) {
	c := r.Caps
	fmt.Fprintf(w, "device %d: %s (%s, Vulkan %s", c.Index, c.Name, c.Type, c.APIVersion)
	if c.DriverName != "" {
		fmt.Fprintf(w, ", driver %s %s", c.DriverName, c.DriverInfo)
	}
	fmt.Fprintf(w, ", vendor %#04x device %#04x)\n", c.VendorID, c.DeviceID)
	fmt.Fprintf(w, "  timestampPeriod:            %g ns per tick\n", c.TimestampPeriod)
	fmt.Fprintf(w, "  timestamps on all gfx+compute queues: %v\n", c.TimestampComputeAndGraphics)
	for _, f := range c.Families {
		wrap := "never wraps"
		if f.TimestampValidBits == 0 {
			wrap = "no timestamps"
		} else if f.TimestampValidBits < 64 {
			secs := float64(uint64(1)<<f.TimestampValidBits) * float64(c.TimestampPeriod) / 1e9
			wrap = fmt.Sprintf("wraps every %.4g s", secs)
		}
		fmt.Fprintf(w, "  queue family %d: %-28s x%d  timestampValidBits %2d (%s)\n",
			f.Index, f.Flags, f.Count, f.TimestampValidBits, wrap)
	}
	ext := c.CalibratedExtension
	if ext == "" {
		ext = "none"
	}
	var doms []string
	for _, d := range c.TimeDomains {
		doms = append(doms, d.String())
	}
	if len(doms) == 0 {
		doms = []string{"none"}
	}
	fmt.Fprintf(w, "  calibrated timestamps:      %s; time domains: %s\n", ext, strings.Join(doms, ", "))
	fmt.Fprintf(w, "  hostQueryReset:             %v\n", c.HostQueryReset)
	fmt.Fprintf(w, "  debug-utils labels:         %v\n", r.DebugLabels)
	fmt.Fprintf(w, "  Framescope:                 %s\n\n", r.Verdict)
}
