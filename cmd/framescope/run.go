package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/tracesplit"
	"github.com/framescope/framescope/timeline"
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
	out, outDir          string // checkOut's: -o as the layer writes it, and its directory
	layer, live          string
	frameEvery, window   uint
	cpuBudget, gpuBudget time.Duration
	renderStages, draws  bool
	work                 bool
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
	if err == nil {
		o.out, o.outDir, err = checkOut(o.out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "framescope run: %v\n", err)
		return 2
	}
	runDir, err := os.MkdirTemp("", "framescope-run-")
	if err != nil {
		fmt.Fprintf(stderr, "framescope run: %v\n", err)
		return 2
	}
	defer os.RemoveAll(runDir)
	code, end, err := runWithLayer(prog, layer, o.env(runDir), stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "framescope run: %v\n", err)
		return 2
	}
	reportTraces(stderr, runDir, end)
	return code
}

// checkOut checks -o before the program runs, touching nothing there: it
// must be a regular file or nothing yet, in a directory this user can
// write (the layer writes the trace beside it and renames it into place).
// It returns the path to write (a link's target: a link stays a link)
// and its directory; with no -o, "" and this directory.
func checkOut(out string) (path, dir string, err error) {
	if out == "" {
		dir, err = os.Getwd()
		if err == nil {
			err = writable(dir, "this directory")
		}
		return "", dir, err
	}
	path, err = filepath.Abs(out)
	if err != nil {
		return "", "", err
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return "", "", fmt.Errorf("-o %s is a directory: name the trace file (such as %s)", out, filepath.Join(out, "run.perfetto-trace"))
	case err == nil && !st.Mode().IsRegular():
		return "", "", fmt.Errorf("-o %s is not a regular file (%v), which the trace would replace: name a file", out, st.Mode().Type())
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", "", fmt.Errorf("-o %w", err)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	} else if path, err = linkTarget(path); err != nil {
		return "", "", fmt.Errorf("-o %w", err)
	}
	if st, err := os.Stat(path); err == nil {
		for _, f := range []*os.File{os.Stdout, os.Stderr} {
			if fst, err := f.Stat(); err == nil && os.SameFile(st, fst) {
				return "", "", fmt.Errorf("-o %s is where this command's output goes, and the program's: the trace would replace it: name another file", out)
			}
		}
	}
	dir = filepath.Dir(path)
	return path, dir, writable(dir, "-o "+out+": its directory")
}

// maxLinks bounds the links linkTarget follows (as Linux's 40).
const maxLinks = 40

// linkTarget follows path's links to a file that does not exist yet, the
// one the trace makes (a link to a trace not written yet stays a link);
// path itself where it is no link.
func linkTarget(path string) (string, error) {
	for range maxLinks {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", fmt.Errorf("%s: more than %d links", path, maxLinks)
}

// writable checks that a file can be made in dir, by making one and
// removing it.
func writable(dir, what string) error {
	f, err := os.CreateTemp(dir, ".framescope-check-*")
	if err != nil {
		return fmt.Errorf("%s cannot take the trace: %v", what, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// parseRun reads run's flags, checking each against its bound.
func parseRun(args []string, stderr io.Writer) (runOptions, []string, bool) {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "o", "", "the trace `FILE` to write (default: NAME.perfetto-trace here, NAME the program that makes the first Vulkan device, such as vkcube under xvfb-run); each other process that profiles writes its own beside it: FILE less .perfetto-trace, then .PID.perfetto-trace")
	fs.UintVar(&o.frameEvery, "frame-every", 0, fmt.Sprintf("end a frame every N submissions, not at each vkQueuePresentKHR or VK_EXT_frame_boundary mark (for programs that give neither; at most %d)", maxFrameEvery))
	fs.UintVar(&o.window, "window", 0, fmt.Sprintf("a flight recorder: keep the last N frames and write them at exit, not the whole run (at most %d)", maxRunWindow))
	fs.DurationVar(&o.cpuBudget, "cpu-budget", 0, "with -window: write each frame over this CPU time, with the window before it, beside FILE (FILE-over-FRAME.perfetto-trace, 16 at most)")
	fs.DurationVar(&o.gpuBudget, "gpu-budget", 0, "with -window: the same for GPU time")
	fs.BoolVar(&o.draws, "draws", false, "also a zone for each draw and dispatch command (a zone costs more than a small draw)")
	fs.BoolVar(&o.work, "work", false, "also count each zone's work: the pipeline statistics its queue offers (vertices, primitives, shader invocations), where the device has pipelineStatisticsQuery, which the layer enables; each zone then costs a call into Go")
	fs.BoolVar(&o.renderStages, "render-stages", true, "also write GPU zones as Perfetto's own GPU render stages and counters (ui.perfetto.dev's GPU group)")
	fs.StringVar(&o.live, "live", "", "serve the live view on this address (such as 127.0.0.1:6060) at /debug/framescope/")
	fs.StringVar(&o.layer, "layer", "", "the `DIR` that make layer built (default: $FRAMESCOPE_LAYER, or this executable's directory)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framescope run [flags] -- PROGRAM [ARGS...]")
		fmt.Fprintln(stderr, "Runs PROGRAM with Framescope's Vulkan layer, which profiles every Vulkan device it")
		fmt.Fprintln(stderr, "makes: a GPU zone per command buffer, render pass, dynamic-rendering instance and debug")
		fmt.Fprintln(stderr, "label, a frame per present, CPU spans for submits, presents and waits. The trace is")
		fmt.Fprintln(stderr, "streamed to FILE while it runs; a summary of each trace written follows at exit. The exit")
		fmt.Fprintln(stderr, "status is PROGRAM's.")
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
	if err := checkLive(o.live); err != nil {
		return bad("%v", err)
	}
	return o, prog, true
}

// checkLive checks -live before the program runs: an address the layer
// can listen on, which it does once the program makes its first device
// (a port taken later still fails there, and the layer says so).
func checkLive(addr string) error {
	if addr == "" {
		return nil
	}
	if _, port, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("-live %s: %v (an address such as 127.0.0.1:6060)", addr, err)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("-live %s: the port is a number from 0 to 65535", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-live %s: %v", addr, err)
	}
	return ln.Close()
}

// env is what the layer reads of o (layer/lib/config.go), runDir the
// directory where the run's processes claim -o and record their traces.
func (o runOptions) env(runDir string) []string {
	e := []string{"FRAMESCOPE_OUT=" + o.out, "FRAMESCOPE_OUT_DIR=" + o.outDir, "FRAMESCOPE_RUN_DIR=" + runDir,
		fmt.Sprintf("FRAMESCOPE_FRAME_EVERY=%d", o.frameEvery),
		fmt.Sprintf("FRAMESCOPE_WINDOW=%d", o.window),
		fmt.Sprintf("FRAMESCOPE_RENDER_STAGES=%t", o.renderStages),
		fmt.Sprintf("FRAMESCOPE_DRAWS=%d", map[bool]int{false: 0, true: 1}[o.draws]),
		fmt.Sprintf("FRAMESCOPE_WORK=%d", map[bool]int{false: 0, true: 1}[o.work]),
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

// testKnobs is the prefix of the layer's knobs for tests, which run
// passes on: FRAMESCOPE_TEST_FILE_SPANS lowers the spans a file of its
// trace holds (tracesplit.FileSlices), FRAMESCOPE_TEST_FIRST_TIMED the
// wait before a never-presenting program's first frame.
const testKnobs = "FRAMESCOPE_TEST_"

// layerEnv is env with the layer added for the loader, both ways a loader
// takes it (VK_INSTANCE_LAYERS; VK_LOADER_LAYERS_ENABLE from loader
// 1.3.234), and its directory first in VK_ADD_LAYER_PATH: the loader
// orders the layers it finds there as it finds them (1.3.239 does so
// whatever order VK_INSTANCE_LAYERS names them in), and the layer must be
// the outermost, so that the layers the program runs with (the validation
// layer) see the device as the layer made it, and the profiler's own
// calls, which go through the loader, after the program's. Then the
// layer's own variables (FRAMESCOPE_*, from own alone, but for the test
// knobs).
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
		if strings.HasPrefix(k, "FRAMESCOPE_") && k != "FRAMESCOPE_LAYER" && !strings.HasPrefix(k, testKnobs) {
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
// end framescope, and returns its exit status (128+N for signal N) and
// how it ended, in words ("" for status 0).
//
// The program runs in framescope's process group, as it would run
// without it, so that it keeps the terminal. A Ctrl-C or Ctrl-\ at the
// terminal signals the whole foreground group, the program already
// among it: that one is not passed on again (forwarded reports whether
// framescope's group is the terminal's foreground group). The rest (a
// kill of framescope's pid, from a script) are passed on, once each.
func runWithLayer(prog []string, dir string, env []string, stdout, stderr io.Writer) (int, string, error) {
	cmd := exec.Command(prog[0], prog[1:]...)
	cmd.Env = layerEnv(os.Environ(), dir, env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, os.Interrupt, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if forwarded(s) {
					cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, "", err
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal()), nil
	}
	return ee.ExitCode(), fmt.Sprintf("exited with status %d", ee.ExitCode()), nil
}

// forwarded reports whether s is passed on to the program: not a Ctrl-C
// or Ctrl-\ that the terminal sent to framescope's process group, the
// program's too.
func forwarded(s os.Signal) bool {
	return (s != os.Interrupt && s != syscall.SIGQUIT) || !terminalForeground()
}

// A trace record, as the layer writes one in the run directory
// (layer/lib/config.go, claimPath): a file named ID (a pid, -K after it
// for a later image of the process) of three lines, then two more (its
// path and temporary name) for each file after the first of a trace
// that goes on in several.
type traceRecord struct {
	id, path, tmp, prog string
	parts               []tracePart // the files after the first
	owner               bool        // the process that claimed -o
	pid, image          int
}

// tracePart is a file of a trace after its first.
type tracePart struct{ path, tmp string }

// Bounds of what framescope run reads of the run directory: a record
// holds at most tracesplit.MaxFiles files, each path at most PATH_MAX.
const (
	maxRecords     = 256 // records reported; later ones are counted
	maxRecordBytes = (3 + 2*tracesplit.MaxFiles) * 4096
)

// reportTraces lists every trace the program's processes wrote, -o's
// first, each with its summary, and says how the program ended where no
// trace came of it.
func reportTraces(w io.Writer, runDir, end string) {
	recs, more, err := readRecords(runDir)
	if err != nil {
		fmt.Fprintf(w, "framescope run: reading the run's records: %v\n", err)
	}
	if len(recs) == 0 {
		fmt.Fprintf(w, "framescope run: no trace: the program made no Vulkan device the layer could profile (see its messages above)%s\n", endNote(end))
	}
	for _, r := range recs {
		if len(recs) > 1 {
			fmt.Fprintf(w, "process %s (%s):\n", r.id, r.prog)
		}
		summarizeTrace(w, r, end)
	}
	if more > 0 {
		fmt.Fprintf(w, "framescope run: %d more processes wrote traces beside these (%d listed at most)\n", more, maxRecords)
	}
}

func endNote(end string) string {
	if end == "" {
		return ""
	}
	return "; the program " + end
}

// readRecords reads the run directory's records, the owner's first, then
// by pid; past maxRecords, it counts them.
func readRecords(dir string) ([]traceRecord, int, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, 0, err
	}
	defer d.Close()
	owner, _ := readSmall(filepath.Join(dir, "owner"))
	var recs []traceRecord
	more := 0
	for {
		ents, err := d.ReadDir(64)
		for _, e := range ents {
			if e.Name() == "owner" {
				continue
			}
			if len(recs) == maxRecords {
				more++
				continue
			}
			if r, ok := readRecord(dir, e.Name()); ok {
				r.owner = r.id == strings.TrimSpace(owner)
				recs = append(recs, r)
			}
		}
		if err != nil {
			break
		}
	}
	sortRecords(recs)
	return recs, more, nil
}

// sortRecords puts -o's first, then the rest by pid and image.
func sortRecords(recs []traceRecord) {
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if a.owner != b.owner {
			return a.owner
		}
		if a.pid != b.pid {
			return a.pid < b.pid
		}
		return a.image < b.image
	})
}

// readRecord reads the record named id; one that is not whole (its
// process still writing it) is left out.
func readRecord(dir, id string) (traceRecord, bool) {
	r := traceRecord{id: id}
	pid, image, _ := strings.Cut(id, "-")
	var err error
	if r.pid, err = strconv.Atoi(pid); err != nil {
		return r, false
	}
	if image != "" {
		if r.image, err = strconv.Atoi(image); err != nil {
			return r, false
		}
	}
	s, err := readSmall(filepath.Join(dir, id))
	lines := strings.Split(s, "\n")
	if err != nil || len(lines) < 4 {
		return r, false
	}
	r.path, r.tmp, r.prog = lines[0], lines[1], lines[2]
	rest := lines[3 : len(lines)-1] // whole lines: the last one ends the record, or is being written
	for i := 0; i+1 < len(rest) && len(r.parts) < tracesplit.MaxFiles-1; i += 2 {
		r.parts = append(r.parts, tracePart{rest[i], rest[i+1]})
	}
	return r, true
}

// readSmall reads the file at path, at most maxRecordBytes of it.
func readSmall(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecordBytes))
	return string(b), err
}

// summarizeTrace prints what r's trace holds, as the demo does at its
// end, or why there is none.
func summarizeTrace(w io.Writer, r traceRecord, end string) {
	if noTrace(w, r, tracePart{r.path, r.tmp}, "", end) {
		return
	}
	if len(r.parts) > 0 {
		summarizeParts(w, r, end)
		return
	}
	t, cut, err := loadTraceCut(r.path)
	if err != nil {
		fmt.Fprintf(w, "framescope run: the trace does not read back: %v\n", err)
		return
	}
	printSummary(w, computeStats(t))
	if cut != nil { // the program was killed as it wrote: what reads back is whole
		fmt.Fprintf(w, "cut         %s%s\n", cut, endNote(end))
	}
	limitsNote(w, r.path, r.pid, t, cut)
	fmt.Fprintf(w, "wrote       %s\n", r.path)
	fmt.Fprintf(w, "open it at https://ui.perfetto.dev (Open trace file); per zone: framescope stats %s\n", r.path)
}

// noTrace says so, and reports true, when the file f of r's trace is not
// there: the process ended before the layer wrote a batch to it (what it
// began, if anything, is at f.tmp).
func noTrace(w io.Writer, r traceRecord, f tracePart, toIt, end string) bool {
	if _, err := os.Stat(f.path); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	note := endNote(end)
	if _, err := os.Stat(f.tmp); err == nil {
		note += "; what it began is at " + f.tmp
	}
	fmt.Fprintf(w, "framescope run: no trace at %s: process %s (%s) ended before the layer wrote a batch%s%s\n", f.path, r.id, r.prog, toIt, note)
	return true
}

// summarizeParts prints what each file of a trace in several holds, then
// the books of them all, which are the run's: each file's books count
// what reached it or was lost while it was written.
func summarizeParts(w io.Writer, r traceRecord, end string) {
	files := append([]tracePart{{r.path, r.tmp}}, r.parts...)
	fmt.Fprintf(w, "the trace is in %d files, each a whole trace (the layer begins the next before a file would hold more than framescope reads); their books add up to the run's\n", len(files))
	var all []ledgerJSON
	var drops timeline.Drops
	for i, f := range files {
		fmt.Fprintf(w, "file %d of %d: %s\n", i+1, len(files), f.path)
		if noTrace(w, r, f, " to it", end) {
			continue
		}
		t, cut, err := loadTraceCut(f.path)
		if err != nil {
			fmt.Fprintf(w, "framescope run: the trace does not read back: %v\n", err)
			continue
		}
		st := computeStats(t)
		printSummary(w, st)
		if cut != nil {
			fmt.Fprintf(w, "cut         %s%s\n", cut, endNote(end))
		}
		limitsNote(w, f.path, r.pid, t, cut)
		all = append(all, st.Ledger)
		drops = books.Add(drops, st.Drops.Drops)
	}
	fmt.Fprintf(w, "all %d files:\n", len(files))
	fmt.Fprintln(w, dropsLine(dropsOf(drops)))
	for _, l := range ledgerLines(sumLedgers(all)) {
		fmt.Fprintln(w, strings.Replace(l, "in this trace", "in these files", 1))
	}
	fmt.Fprintf(w, "open each at https://ui.perfetto.dev (Open trace file); per zone: framescope stats FILE\n")
}

// sumLedgers adds up the books of several files of one trace, which
// balance when each does.
func sumLedgers(ls []ledgerJSON) ledgerJSON {
	var sum ledgerJSON
	for _, l := range ls {
		if l == nil {
			continue
		}
		if sum == nil {
			sum = ledgerJSON{}
		}
		for k, b := range l {
			s, ok := sum[k]
			if !ok {
				s.Balanced = true
			}
			s.Issued += b.Issued
			s.Delivered += b.Delivered
			s.InTrace += b.InTrace
			s.Open += b.Open
			s.Lost = dropsOf(books.Add(s.Lost.Drops, b.Lost.Drops))
			s.Balanced = s.Balanced && b.Balanced
			sum[k] = s
		}
	}
	return sum
}

// printSummary prints a trace's frames, zones and books.
func printSummary(w io.Writer, r statsReport) {
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
	fmt.Fprintf(w, "limited by  %s\n", limitsLine(r.Frames.limitsJSON))
	fmt.Fprintln(w, dropsLine(r.Drops))
	for _, l := range ledgerLines(r.Ledger) {
		fmt.Fprintln(w, l)
	}
}
