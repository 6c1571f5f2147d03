// Command table runs the hostile inputs of package hostile through the
// framescope command and prints docs/hostile-inputs.md's table: for each
// case the input's size, the command's result, its peak RSS and its time,
// as /usr/bin/time -v measures them.
//
//	go run ./internal/cmd/hostiletable > table.md
//
// It builds framescope from this checkout into a temporary directory and
// writes its inputs there (a few hundred MB at most).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/testkit/hostile"
	"github.com/framescope/framescope/internal/testkit/tracecases"
)

// A row is one hostile case: an input, made by gen into a file named
// file, and a framescope command line on it (IN and OUT stand for the
// input and an output beside it).
type row struct {
	name string
	file string
	gen  func(io.Writer) error
	args string
}

// captureArgs is the command line of capture's rows, one for each of
// hostile.Answers, which a server on loopback sends (URL is its address).
const captureArgs = "capture -timeout 5s -o OUT.pftrace URL"

func rows() []row {
	pf := func(n, depth int, named bool) func(io.Writer) error {
		return func(w io.Writer) error { return hostile.PerfettoSlices(w, n, depth, named) }
	}
	js := func(n, depth int) func(io.Writer) error {
		return func(w io.Writer) error { return hostile.ChromeSlices(w, n, depth) }
	}
	pfWork := func(n int) func(io.Writer) error {
		return func(w io.Writer) error { return perfettoWork(w, n) }
	}
	jsWork := func(n int) func(io.Writer) error {
		return func(w io.Writer) error { return chromeWork(w, n) }
	}
	pfBomb := func(n int) func(io.Writer) error {
		return func(w io.Writer) error { return hostile.PerfettoBomb(w, n, 1) }
	}
	jsBomb := func(n int) func(io.Writer) error {
		return func(w io.Writer) error { return hostile.ChromeBomb(w, n, 1) }
	}
	bigEvent := func(n int) func(io.Writer) error {
		return func(w io.Writer) error {
			io.WriteString(w, `[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"`)
			if err := hostile.Spaces(w, n); err != nil {
				return err
			}
			_, err := io.WriteString(w, `"}]`)
			return err
		}
	}
	gz := func(g func(io.Writer) error) func(io.Writer) error {
		return func(w io.Writer) error { return hostile.Gzip(w, g) }
	}
	zeros := func(n int) func(io.Writer) error { return func(w io.Writer) error { return hostile.Zeros(w, n) } }
	huge := func(n int) func(io.Writer) error {
		return func(w io.Writer) error { return hostile.PerfettoHugePacket(w, n) }
	}
	return []row{
		{"depth: Perfetto, 65,535 nested slices", "deep.pftrace", pf(65535, 65535, false), "convert IN OUT.pb.gz"},
		{"depth: Perfetto, 65,535 nested slices", "deep.pftrace", pf(65535, 65535, false), "stats IN"},
		{"depth: Perfetto, 300,000 slices in runs 65,535 deep", "deep3.pftrace", pf(300_000, 65535, false), "convert IN OUT.json"},
		{"depth: Perfetto, 70,000 nested slices (past the depth limit)", "deeper.pftrace", pf(70_000, 70_000, false), "stats IN"},
		{"depth: Chrome JSON, 4,000 nested, 40,000 slices", "deep.json", js(40_000, 4000), "convert IN OUT.pb.gz"},
		{"depth: Chrome JSON, 5,000 nested (past the depth limit)", "deeper.json", js(5000, 5000), "stats IN"},
		{"width: Perfetto, 4,000,000 tiny slices side by side", "wide.pftrace", pf(4_000_000, 1, false), "stats IN"},
		{"width: Perfetto, 4,000,000 tiny slices side by side", "wide.pftrace", pf(4_000_000, 1, false), "convert IN OUT.json"},
		{"width: Perfetto, 2,000,000 slices, every name distinct", "names.pftrace", pf(2_000_000, 1, true), "convert IN OUT.pb.gz"},
		{"width: Chrome JSON, 2,000,000 slices side by side", "wide.json", js(2_000_000, 1), "stats IN"},
		{"width: Chrome JSON, 2,000,000 slices side by side", "wide.json", js(2_000_000, 1), "convert IN OUT.pftrace"},
		{"width: Chrome JSON, 4,000,000 slices side by side (at the span limit)", "wide4.json", js(4_000_000, 1), "convert IN OUT.pftrace"},
		{"width: Perfetto, 4,000,000 tiny slices side by side", "wide.pftrace", pf(4_000_000, 1, false), "convert IN OUT.pb.gz"},
		{"work: Perfetto, 4 Mi GPU zones, each with all 11 statistics (at the span limit)", "work.pftrace", pfWork(4 << 20), "stats IN"},
		{"work: Perfetto, 4 Mi GPU zones, each with all 11 statistics (at the span limit)", "work.pftrace", pfWork(4 << 20), "convert IN OUT.json"},
		{"work: Perfetto, 4 Mi GPU zones, each with all 11 statistics (at the span limit)", "work.pftrace", pfWork(4 << 20), "convert IN OUT.pb.gz"},
		{"work: Perfetto, 4 Mi GPU zones, each with all 11 statistics (at the span limit)", "work.pftrace", pfWork(4 << 20), "convert IN OUT.pftrace"},
		{"work: Perfetto, 4 Mi GPU zones, each with all 11 statistics (at the span limit)", "work.pftrace", pfWork(4 << 20), "convert -render-stages IN OUT.pftrace"},
		{"work: Chrome JSON, 1,750,000 GPU zones, each with all 11 statistics (1 GB, at the size limit)", "work.json", jsWork(1_750_000), "stats IN"},
		{"work: Chrome JSON, 1,750,000 GPU zones, each with all 11 statistics (1 GB, at the size limit)", "work.json", jsWork(1_750_000), "convert IN OUT.pftrace"},
		{"packet size: Perfetto, one 60 MiB packet", "bigpkt.pftrace", huge(60 << 20), "stats IN"},
		{"packet size: Perfetto, one 65 MiB packet (past MaxPacket), gzipped", "bigpkt.pftrace.gz", gz(huge(65 << 20)), "stats IN"},
		{"packet size: Chrome JSON, one event with a 60 MiB name", "bigevent.json", bigEvent(60 << 20), "convert IN OUT.pftrace"},
		{"packet size: Chrome JSON, one event with a 60 MiB name", "bigevent.json", bigEvent(60 << 20), "stats IN"},
		{"packet size: Chrome JSON, one event of 65 MiB (past the 64 MiB object limit), gzipped", "bigevent.json.gz", gz(bigEvent(65 << 20)), "stats IN"},
		{"compression: Perfetto, 3,000,000 alike slices, gzipped", "bomb3.pftrace.gz", gz(pfBomb(3_000_000)), "stats IN"},
		{"compression: Perfetto, 20,000,000 alike slices (past the span limit), gzipped", "bomb.pftrace.gz", gz(pfBomb(20_000_000)), "stats IN"},
		{"compression: Chrome JSON, 1,500,000 alike slices, gzipped", "bomb1.json.gz", gz(jsBomb(1_500_000)), "stats IN"},
		{"compression: Chrome JSON, 20,000,000 alike slices (past the event limit), gzipped", "bomb.json.gz", gz(jsBomb(20_000_000)), "stats IN"},
		{"compression: 5 GiB of zeros, gzipped", "zeros.gz", gz(zeros(5 << 30)), "stats IN"},
		{"compression: Chrome JSON '[' and 2 GiB of spaces, gzipped (past the size limit)", "spaces.json.gz", gz(func(w io.Writer) error {
			w.Write([]byte("["))
			return hostile.Spaces(w, 2<<30)
		}), "stats IN"},
	}
}

var rssRE = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)

func main() {
	options := flag.Bool("options", false, "run the writer with extreme options (a row of the table, measured on this command)")
	only := flag.String("only", "", "run only the cases whose name or command matches this regular expression")
	keep := flag.String("keep", "", "write the inputs into this directory, and keep them")
	flag.Parse()
	sel := regexp.MustCompile(*only)
	if *options {
		os.Exit(extremeOptions())
	}
	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "hostile-")
		check(err)
		defer os.RemoveAll(d)
		dir = d
	}
	fs := filepath.Join(dir, "framescope")
	var err error
	build := exec.Command("go", "build", "-o", fs, "./cmd/framescope")
	build.Stderr = os.Stderr
	check(build.Run())
	self, err := os.Executable()
	check(err)

	fmt.Println("| case | input (bytes) | command | exit | result | peak RSS (MiB) | time (s) |")
	fmt.Println("|---|---:|---|---:|---|---:|---:|")
	for _, a := range hostile.Answers() {
		if name := "capture: " + a.Name; sel.MatchString(name + " " + captureArgs) {
			captureRow(fs, dir, name, a.Serve)
		}
	}
	made := map[string]bool{}
	for _, r := range rows() {
		if !sel.MatchString(r.name + " " + r.args) {
			continue
		}
		in := filepath.Join(dir, r.file)
		if _, err := os.Stat(in); err == nil && *keep != "" {
			made[r.file] = true
		}
		if !made[r.file] {
			f, err := os.Create(in)
			check(err)
			check(r.gen(f))
			check(f.Close())
			made[r.file] = true
		}
		st, err := os.Stat(in)
		check(err)
		args := strings.Fields(strings.ReplaceAll(strings.ReplaceAll(r.args, "IN", in), "OUT", filepath.Join(dir, "out")))
		res := measure(fs, args...)
		res.result = strings.ReplaceAll(res.result, dir+"/", "")
		fmt.Printf("| %s | %d | `framescope %s` | %d | %s | %.0f | %.2f |\n", r.name, st.Size(), shortArgs(r.args, r.file), res.code, res.result, res.rssMiB, res.secs)
		os.Remove(filepath.Join(dir, "out.pb.gz"))
		os.Remove(filepath.Join(dir, "out.json"))
		os.Remove(filepath.Join(dir, "out.pftrace"))
	}
	if !sel.MatchString("options") {
		return
	}
	res := measure(self, "-options")
	fmt.Printf("| options: perfetto.Options{FlushBytes: MaxInt, MaxSequences: MaxInt} | 0 | `table -options` | %d | %s | %.0f | %.2f |\n", res.code, res.result, res.rssMiB, res.secs)
}

// captureRow runs capture against a server that sends answer, and prints
// its row; the output, "old" before, must stay so.
func captureRow(fs, dir, name string, answer http.HandlerFunc) {
	srv := httptest.NewServer(answer)
	defer srv.Close()
	out := filepath.Join(dir, "out.pftrace")
	check(os.WriteFile(out, []byte("old"), 0o644))
	defer os.Remove(out)
	args := strings.Fields(strings.ReplaceAll(strings.ReplaceAll(captureArgs, "URL", srv.URL), "OUT", filepath.Join(dir, "out")))
	res := measure(fs, args...)
	if b, _ := os.ReadFile(out); string(b) != "old" {
		res.result = "OUTPUT CHANGED: " + res.result
	}
	res.result = strings.ReplaceAll(res.result, srv.URL, "URL")
	fmt.Printf("| %s | - | `framescope %s` | %d | %s | %.0f | %.2f |\n", name, captureArgs, res.code, res.result, res.rssMiB, res.secs)
}

func shortArgs(args, file string) string {
	return strings.ReplaceAll(strings.ReplaceAll(args, "IN", file), "OUT", "out")
}

type result struct {
	code   int
	result string
	rssMiB float64
	secs   float64
}

// measure runs the command under /usr/bin/time -v, with a 60 s limit.
func measure(name string, args ...string) result {
	cmd := exec.Command("/usr/bin/time", append([]string{"-v", "timeout", "60", name}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{secs: time.Since(start).Seconds()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		check(err)
	}
	out := stderr.String()
	if m := rssRE.FindStringSubmatch(out); m != nil {
		kb, _ := strconv.ParseFloat(m[1], 64)
		r.rssMiB = kb / 1024
	}
	// The command's own message: the lines before time's report.
	msg := out
	if i := strings.Index(out, "\tCommand being timed"); i >= 0 {
		msg = out[:i]
	}
	msg = strings.TrimSpace(msg)
	switch {
	case r.code == 124:
		msg = "killed at 60 s"
	case msg == "" && r.code == 0:
		msg = "ok"
		if lines := strings.Count(stdout.String(), "\n"); lines > 0 {
			msg = fmt.Sprintf("ok (%d lines of output)", lines)
		}
	}
	if i := strings.Index(msg, "\n"); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.ReplaceAll(msg, "|", `\|`)
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	r.result = msg
	return r
}

// extremeOptions writes a trace with the writer's options at the ends of
// their types, and reads it back.
func extremeOptions() int {
	var buf bytes.Buffer
	o := perfetto.Options{FlushBytes: math.MaxInt, MaxSequences: math.MaxInt}
	w := perfetto.NewWriter(&buf, o)
	for _, c := range tracecases.All() {
		for _, b := range c.Batches {
			w.Write(b)
		}
	}
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "ok: %d bytes written (options clamped to FlushBytes %d, MaxSequences %d)\n", buf.Len(), o.Clamp().FlushBytes, o.Clamp().MaxSequences)
	return 0
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(1)
	}
}
