//go:build cgo

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/framescope/framescope/internal/clockcheck"
	"github.com/framescope/framescope/profiler"
)

func init() {
	register(command{name: "clockcheck", summary: "measure a GPU clock against CLOCK_MONOTONIC: drift, calibration quality, causality", run: runClockCheck})
}

func runClockCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clockcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seconds := fs.Float64("seconds", 10, "how long to watch the clocks")
	device := fs.String("device", "", "physical device: index or name substring (default: the first GPU)")
	queue := fs.String("queue", "graphics", "queue: graphics, compute, transfer, or a family index")
	fallback := fs.Bool("fallback", false, "calibrate by submit-and-wait, not calibrated timestamps")
	fitEvery := fs.Duration("fit-every", time.Second, "interval of calibration rounds fed to the model")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	clock := fs.String("clock", "monotonic", "host clock: monotonic or raw (CLOCK_MONOTONIC_RAW)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *seconds <= 0 || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "framescope clockcheck: -seconds must be positive and no arguments are taken")
		return 2
	}
	hc := profiler.ClockMonotonic
	switch *clock {
	case "monotonic":
	case "raw":
		hc = profiler.ClockMonotonicRaw
	default:
		fmt.Fprintf(stderr, "framescope clockcheck: -clock %q: want monotonic or raw\n", *clock)
		return 2
	}
	dev, err := profiler.OpenDevice(profiler.DeviceOptions{AppName: "framescope clockcheck", Device: *device, NoCalibrated: *fallback})
	if err != nil {
		fmt.Fprintln(stderr, "framescope clockcheck:", err)
		return 1
	}
	defer dev.Close()
	var q profiler.Queue
	found := false
	if fam, err := strconv.Atoi(*queue); err == nil {
		for _, x := range dev.Queues() {
			if x.Family == uint32(fam) {
				q, found = x, true
			}
		}
	} else if want, ok := queueFlagsByName[*queue]; ok {
		q, found = dev.QueueFor(want)
	}
	if !found {
		fmt.Fprintf(stderr, "framescope clockcheck: no %s queue on %s\n", *queue, dev.Name())
		return 2
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "watching %s, queue family %d (%s), for %.0f s...\n", dev.Name(), q.Family, q.Flags, *seconds)
	}
	o := clockcheck.Options{Duration: time.Duration(*seconds * float64(time.Second)), FitEvery: *fitEvery, Fallback: *fallback, Clock: hc}
	if !*asJSON {
		o.Progress = stdout
	}
	rep, err := clockcheck.Run(dev, q, o)
	if err != nil {
		fmt.Fprintln(stderr, "framescope clockcheck:", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return 0
	}
	rep.Print(stdout)
	return 0
}

// queueFlagsByName are the -queue names clockcheck takes.
var queueFlagsByName = map[string]profiler.QueueFlags{
	"graphics": profiler.QueueGraphics,
	"compute":  profiler.QueueCompute,
	"transfer": profiler.QueueTransfer,
}
