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

func runRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the trace to write (default: PROGRAM.perfetto-trace)")
	every := fs.Uint("frame-every", 0, "end a frame every N submissions, not at each vkQueuePresentKHR (for programs that never present)")
	dir := fs.String("layer", "", "the directory `make layer` built (default: $FRAMESCOPE_LAYER, or this executable's directory)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framescope run [-o FILE] [-frame-every N] [-layer DIR] -- PROGRAM [ARGS...]")
		fmt.Fprintln(stderr, "Runs PROGRAM with Framescope's Vulkan layer, which profiles every Vulkan device it")
		fmt.Fprintln(stderr, "makes: a GPU zone per render pass, dynamic-rendering instance and debug label, a frame")
		fmt.Fprintln(stderr, "per present, CPU spans for submits, presents and waits. The trace is streamed to FILE")
		fmt.Fprintln(stderr, "while it runs; a summary follows at exit. The exit status is PROGRAM's.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	prog := fs.Args()
	if len(prog) == 0 {
		fs.Usage()
		return 2
	}
	layer, err := findLayer(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "framescope run: %v\n", err)
		return 2
	}
	path := *out
	if path == "" {
		path = filepath.Base(prog[0]) + ".perfetto-trace"
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "framescope run: %v\n", err)
		return 2
	}
	if *every > 1<<20 {
		fmt.Fprintf(stderr, "framescope run: -frame-every %d: at most %d\n", *every, 1<<20)
		return 2
	}
	code, err := runWithLayer(prog, layer, path, *every, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "framescope run: %v\n", err)
		return 2
	}
	summarizeTrace(stderr, path)
	return code
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
// 1.3.234), and the trace's path for the layer.
func layerEnv(env []string, dir, out string) []string {
	add := map[string]string{
		"VK_ADD_LAYER_PATH":       dir,
		"VK_INSTANCE_LAYERS":      layerName,
		"VK_LOADER_LAYERS_ENABLE": layerName,
	}
	var res []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "FRAMESCOPE_OUT" || k == "FRAMESCOPE_FRAME_EVERY" {
			continue
		}
		if a, ok := add[k]; ok && v != "" {
			kv = k + "=" + v + string(os.PathListSeparator) + a
			if k == "VK_LOADER_LAYERS_ENABLE" {
				kv = k + "=" + v + "," + a
			}
			delete(add, k)
		}
		res = append(res, kv)
	}
	for k, v := range add {
		res = append(res, k+"="+v)
	}
	return append(res, "FRAMESCOPE_OUT="+out)
}

// runWithLayer runs prog to its end, passing it the signals that would
// end framescope, and returns its exit status (128+N for signal N).
func runWithLayer(prog []string, dir, out string, every uint, stdout, stderr io.Writer) (int, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(prog[0], prog[1:]...)
	cmd.Env = append(layerEnv(os.Environ(), dir, abs), fmt.Sprintf("FRAMESCOPE_FRAME_EVERY=%d", every))
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
