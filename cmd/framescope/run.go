package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func init() {
	register(command{
		name:    "run",
		summary: "run any Vulkan program under Framescope's layer and write its trace",
		run:     runRun,
	})
}

// The layer's files, as `make layer` builds them into one directory.
const (
	layerName     = "VK_LAYER_FRAMESCOPE_profile"
	layerManifest = "VkLayer_framescope.json"
)

var layerFiles = []string{layerManifest, "libVkLayer_framescope.so", "libframescope_go.so"}

// runOptions are run's flags, which reach the layer as its environment.
type runOptions struct {
	out, layer, live     string
	frameEvery, window   uint
	cpuBudget, gpuBudget time.Duration
	renderStages, draws  bool
}

// The bounds of run's flags (the layer's own, layer/lib/config.go).
const (
	maxFrameEvery = 1 << 20
	maxRunWindow  = 1 << 16
)

func runRun(args []string, stdout, stderr io.Writer) int {
	o, prog, ok := parseRun(args, stderr)
	if !ok {
		return 2
	}
	layer, err := findLayer(o.layer)
	if err != nil {
		fmt.Fprintf(stderr, "framescope run: %v\n", err)
		return 2
	}
	if err := os.Remove(o.out); err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "framescope run: %v\n", err)
		return 2
	}
	code, err := runWithLayer(prog, layer, o, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "framescope run: %v\n", err)
		return 2
	}
	summarizeTrace(stderr, o.out)
	return code
}

// parseRun reads run's flags, checking each against its bound.
func parseRun(args []string, stderr io.Writer) (runOptions, []string, bool) {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "o", "", "the trace to write (default: PROGRAM.perfetto-trace)")
	fs.UintVar(&o.frameEvery, "frame-every", 0, fmt.Sprintf("end a frame every N submissions, not at each vkQueuePresentKHR or VK_EXT_frame_boundary mark (for programs that give neither; at most %d)", maxFrameEvery))
	fs.UintVar(&o.window, "window", 0, fmt.Sprintf("a flight recorder: keep the last N frames and write them at exit, not the whole run (at most %d)", maxRunWindow))
	fs.DurationVar(&o.cpuBudget, "cpu-budget", 0, "with -window: write each frame over this CPU time, with the window before it, beside FILE (FILE-over-FRAME.perfetto-trace, 16 at most)")
	fs.DurationVar(&o.gpuBudget, "gpu-budget", 0, "with -window: the same for GPU time")
	fs.BoolVar(&o.draws, "draws", false, "also a zone for each draw and dispatch command (a zone costs more than a small draw)")
	fs.BoolVar(&o.renderStages, "render-stages", true, "also write GPU zones as Perfetto's own GPU render stages and counters (ui.perfetto.dev's GPU group)")
	fs.StringVar(&o.live, "live", "", "serve the live view on this address (such as 127.0.0.1:6060) at /debug/framescope/")
	fs.StringVar(&o.layer, "layer", "", "the directory `make layer` built (default: $FRAMESCOPE_LAYER, or this executable's directory)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framescope run [flags] -- PROGRAM [ARGS...]")
		fmt.Fprintln(stderr, "Runs PROGRAM with Framescope's Vulkan layer, which profiles every Vulkan device it")
		fmt.Fprintln(stderr, "makes: a GPU zone per command buffer, render pass, dynamic-rendering instance and debug")
		fmt.Fprintln(stderr, "label, a frame per present, CPU spans for submits, presents and waits. The trace is")
		fmt.Fprintln(stderr, "streamed to FILE while it runs; a summary follows at exit. The exit status is PROGRAM's.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, nil, false
	}
	prog := fs.Args()
	bad := func(format string, a ...any) (runOptions, []string, bool) {
		fmt.Fprintf(stderr, "framescope run: "+format+"\n", a...)
		return o, nil, false
	}
	switch {
	case len(prog) == 0:
		fs.Usage()
		return o, nil, false
	case o.frameEvery > maxFrameEvery:
		return bad("-frame-every %d: at most %d", o.frameEvery, maxFrameEvery)
	case o.window > maxRunWindow:
		return bad("-window %d: at most %d", o.window, maxRunWindow)
	case o.cpuBudget < 0 || o.gpuBudget < 0:
		return bad("a budget is a duration of 0 or more")
	case (o.cpuBudget > 0 || o.gpuBudget > 0) && o.window == 0:
		return bad("-cpu-budget and -gpu-budget need -window: a frame over budget is written with the window before it")
	}
	if o.out == "" {
		o.out = filepath.Base(prog[0]) + ".perfetto-trace"
	}
	return o, prog, true
}

// env is what the layer reads of o (layer/lib/config.go).
func (o runOptions) env(out string) []string {
	e := []string{"FRAMESCOPE_OUT=" + out,
		fmt.Sprintf("FRAMESCOPE_FRAME_EVERY=%d", o.frameEvery),
		fmt.Sprintf("FRAMESCOPE_WINDOW=%d", o.window),
		fmt.Sprintf("FRAMESCOPE_RENDER_STAGES=%t", o.renderStages),
		fmt.Sprintf("FRAMESCOPE_DRAWS=%d", map[bool]int{false: 0, true: 1}[o.draws]),
		"FRAMESCOPE_LIVE=" + o.live}
	if o.cpuBudget > 0 {
		e = append(e, "FRAMESCOPE_CPU_BUDGET="+o.cpuBudget.String())
	}
	if o.gpuBudget > 0 {
		e = append(e, "FRAMESCOPE_GPU_BUDGET="+o.gpuBudget.String())
	}
	return e
}

// findLayer returns the directory that holds the layer's files: dir, or
// $FRAMESCOPE_LAYER, or this executable's own directory.
func findLayer(dir string) (string, error) {
	where := "-layer"
	if dir == "" {
		dir, where = os.Getenv("FRAMESCOPE_LAYER"), "$FRAMESCOPE_LAYER"
	}
	if dir == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", err
		}
		dir, where = filepath.Dir(exe), "this executable's directory"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for _, f := range layerFiles {
		if _, err := os.Stat(filepath.Join(abs, f)); err != nil {
			return "", fmt.Errorf("no layer in %s (%s): %s is missing; build it with `make layer` and name its directory with -layer", abs, where, f)
		}
	}
	return abs, nil
}

// layerEnv is env with the layer added for the loader, both ways a loader
// takes it (VK_INSTANCE_LAYERS; VK_LOADER_LAYERS_ENABLE from loader
// 1.3.234), and its directory first in VK_ADD_LAYER_PATH: the loader
// orders the layers it finds there as it finds them (1.3.239 does so
// whatever order VK_INSTANCE_LAYERS names them in), and the layer must be
// the outermost, so that the layers the program runs with (the validation
// layer) see the device as the layer made it, and the profiler's own
// calls, which go through the loader, after the program's. Then the
// layer's own variables (FRAMESCOPE_*, from own alone).
func layerEnv(env []string, dir string, own []string) []string {
	add := map[string]func(old string) string{
		"VK_ADD_LAYER_PATH":       func(old string) string { return dir + string(os.PathListSeparator) + old },
		"VK_INSTANCE_LAYERS":      func(old string) string { return layerName + string(os.PathListSeparator) + old },
		"VK_LOADER_LAYERS_ENABLE": func(old string) string { return layerName + "," + old },
	}
	fresh := map[string]string{"VK_ADD_LAYER_PATH": dir, "VK_INSTANCE_LAYERS": layerName, "VK_LOADER_LAYERS_ENABLE": layerName}
	var res []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "FRAMESCOPE_") && k != "FRAMESCOPE_LAYER" {
			continue
		}
		if f, ok := add[k]; ok && v != "" {
			kv = k + "=" + f(v)
			delete(fresh, k)
		}
		res = append(res, kv)
	}
	for _, k := range []string{"VK_ADD_LAYER_PATH", "VK_INSTANCE_LAYERS", "VK_LOADER_LAYERS_ENABLE"} {
		if v, ok := fresh[k]; ok {
			res = append(res, k+"="+v)
		}
	}
	return append(res, own...)
}

// runWithLayer runs prog to its end, passing it the signals that would
// end framescope, and returns its exit status (128+N for signal N).
func runWithLayer(prog []string, dir string, o runOptions, stdout, stderr io.Writer) (int, error) {
	abs, err := filepath.Abs(o.out)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(prog[0], prog[1:]...)
	cmd.Env = layerEnv(os.Environ(), dir, o.env(abs))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

// summarizeTrace prints what the trace holds, as the demo does at its end.
func summarizeTrace(w io.Writer, path string) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(w, "framescope run: no trace: the program made no Vulkan instance the layer could profile (see its messages above)\n")
		return
	}
	t, err := loadTrace(path)
	if err != nil {
		fmt.Fprintf(w, "framescope run: the trace does not read back: %v\n", err)
		return
	}
	r := computeStats(t)
	gpu, names := 0, 0
	for _, z := range r.Zones {
		if z.Kind == "gpu" {
			gpu += z.Count
			names++
		}
	}
	fmt.Fprintf(w, "frames      %d\n", r.Frames.Count)
	fmt.Fprintf(w, "GPU zones   %d, of %d names\n", gpu, names)
	fmt.Fprintf(w, "GPU frame   p50 %s, p95 %s\n", fmtNs(r.Frames.GPU.P50Ns), fmtNs(r.Frames.GPU.P95Ns))
	fmt.Fprintf(w, "CPU frame   p50 %s, p95 %s\n", fmtNs(r.Frames.CPU.P50Ns), fmtNs(r.Frames.CPU.P95Ns))
	fmt.Fprintln(w, dropsLine(r.Drops))
	for _, l := range ledgerLines(r.Ledger) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "wrote       %s\n", path)
	fmt.Fprintf(w, "open it at https://ui.perfetto.dev (Open trace file); per zone: framescope stats %s\n", path)
}
