package demo

import (
	"flag"
	"fmt"
	"io"
)

// Run renders cfg's frames, writes the traces and prints the summary on
// stdout (as the flags asked); it is the whole of the demo's main.
func Run(cfg Config, stdout io.Writer) error {
	_, err := run(cfg, stdout)
	return err
}

// Rig says which flags ParseFlags takes: the demo's, or the demo's and the
// overhead rig's (-rawzones, -cmdgpu, -stages).
type Rig bool

// The two flag sets.
const (
	DemoFlags   Rig = false
	OverheadRig Rig = true
)

// ParseFlags reads the command line of the program name into a Config.
// Errors and -help are written to stderr; -help returns flag.ErrHelp.
func ParseFlags(name string, args []string, stderr io.Writer, rig Rig) (Config, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.frames, "frames", cfg.frames, "frames to render; 0: until interrupted (SIGINT, SIGTERM), then write the traces")
	fs.IntVar(&cfg.fps, "fps", cfg.fps, "render at most N frames a second (0: as fast as it can)")
	fs.StringVar(&cfg.http, "http", cfg.http, "serve the live view at http://ADDR/debug/framescope/ while rendering (e.g. 127.0.0.1:6060; off when empty)")
	fs.StringVar(&cfg.out, "out", cfg.out, "directory for "+perfettoFile+", "+chromeFile+" and "+pprofFile)
	fs.StringVar(&cfg.device, "device", cfg.device, "physical device: index or name substring (default: $FRAMESCOPE_DEVICE, else the first GPU)")
	fs.StringVar(&cfg.png, "png", cfg.png, "write the last frame to this PNG file")
	fs.IntVar(&cfg.load, "load", cfg.load, "extra full-screen draws per frame (GPU load that leaves the image as it was)")
	fs.IntVar(&cfg.iterations, "iterations", cfg.iterations, "loop count of the load draws' fragment shader")
	fs.IntVar(&cfg.zones, "zones", cfg.zones, "extra profiler zones per frame, nested around the load draws")
	stagesFlag := new(string)
	*stagesFlag = cfg.stages.String()
	if rig {
		fs.IntVar(&cfg.rawZones, "rawzones", cfg.rawZones, "raw vkCmdWriteTimestamp pairs per frame around the load draws, outside the profiler")
		fs.BoolVar(&cfg.cmdGPU, "cmdgpu", cfg.cmdGPU, "also time each command buffer as a whole with two raw timestamps, the profiler's readback included")
		fs.StringVar(stagesFlag, "stages", *stagesFlag, "timestamp stages BEGIN-END of every zone and raw pair: top, bottom, all, graphics, vertex, fragment, color, transfer")
	}
	fs.IntVar(&cfg.queries, "queries", cfg.queries, "timestamp queries per frame the profiler may use (default: room for every zone); zones over it are dropped and counted")
	fs.IntVar(&cfg.inFlight, "inflight", cfg.inFlight, "frames in flight")
	fs.IntVar(&cfg.size, "size", cfg.size, "the image is size x size pixels")
	fs.IntVar(&cfg.warmup, "warmup", cfg.warmup, "first frames left out of the summary's statistics (they are in the traces)")
	fs.BoolVar(&cfg.pipelineStats, "pipeline-stats", cfg.pipelineStats, "count every pipeline statistic the device offers in every zone (the work each does), and print the work per frame")
	fs.BoolVar(&cfg.renderStages, "render-stages", cfg.renderStages, "also write the GPU zones to the Perfetto trace as render stages on hardware queues (ui.perfetto.dev's GPU section), and the work per frame as GPU counters")
	fs.BoolVar(&cfg.validation, "validation", cfg.validation, "turn the Khronos validation layer on")
	fs.BoolVar(&cfg.quiet, "quiet", cfg.quiet, "print nothing (but -json)")
	fs.BoolVar(&cfg.json, "json", cfg.json, "print the summary as JSON")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments %q", fs.Args())
		fmt.Fprintln(stderr, name+":", err)
		return cfg, err
	}
	st, err := parseStages(*stagesFlag)
	if err != nil {
		fmt.Fprintln(stderr, name+": -"+err.Error())
		return cfg, err
	}
	cfg.stages = st
	if err := cfg.check(); err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return cfg, err
	}
	return cfg, nil
}
