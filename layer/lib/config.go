package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// config is what `framescope run` asks of the layer, through the
// environment (each variable is named for its flag).
type config struct {
	out          string        // FRAMESCOPE_OUT
	frameEvery   uint64        // FRAMESCOPE_FRAME_EVERY: a frame every N submissions (0: at presents)
	window       int           // FRAMESCOPE_WINDOW: a flight recorder of N frames (0: stream them all)
	cpuBudget    time.Duration // FRAMESCOPE_CPU_BUDGET, with the window
	gpuBudget    time.Duration // FRAMESCOPE_GPU_BUDGET, with the window
	renderStages bool          // FRAMESCOPE_RENDER_STAGES: Perfetto's GPU tracks too (default on)
	live         string        // FRAMESCOPE_LIVE: the live view's address ("": none)
}

// Bounds of the layer's options, which `framescope run` checks first.
const (
	maxFrameEvery = 1 << 20
	maxWindow     = 1 << 16
)

// readConfig reads the environment; a value it cannot take is said, and
// left at its default.
func readConfig() config {
	c := config{out: os.Getenv("FRAMESCOPE_OUT"), renderStages: true, live: os.Getenv("FRAMESCOPE_LIVE")}
	if c.out == "" {
		c.out = "framescope-" + baseName(os.Args[0]) + "-" + strconv.Itoa(os.Getpid()) + ".perfetto-trace"
	}
	num := func(key string, most uint64) uint64 {
		v := os.Getenv(key)
		if v == "" {
			return 0
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > most {
			fmt.Fprintf(os.Stderr, "framescope layer: %s=%q: want an integer from 0 to %d; ignored\n", key, v, most)
			return 0
		}
		return n
	}
	dur := func(key string) time.Duration {
		v := os.Getenv(key)
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "framescope layer: %s=%q: want a duration such as 16ms; ignored\n", key, v)
			return 0
		}
		return d
	}
	c.frameEvery = num("FRAMESCOPE_FRAME_EVERY", maxFrameEvery)
	c.window = int(num("FRAMESCOPE_WINDOW", maxWindow))
	c.cpuBudget, c.gpuBudget = dur("FRAMESCOPE_CPU_BUDGET"), dur("FRAMESCOPE_GPU_BUDGET")
	if v := os.Getenv("FRAMESCOPE_RENDER_STAGES"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "framescope layer: FRAMESCOPE_RENDER_STAGES=%q: want true or false; ignored\n", v)
		} else {
			c.renderStages = b
		}
	}
	return c
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
