package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/framescope/framescope/timeline"
)

func init() {
	register(command{
		name:    "benchfmt",
		summary: "write runs in the Go benchmark format, for benchstat",
		run:     runBenchfmt,
	})
}

// benchName escapes s for a benchmark name: letters, digits and ".-_+:"
// stay, every other byte becomes %XX, so that spaces, '/' and '=' (which
// benchstat reads as separators) cannot change what a name means.
func benchName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_', c == '+', c == ':':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// writeBenchfmt writes every run of s as benchmark results: one line per
// zone and run, named BenchmarkGPU/track=.../zone=... (or BenchmarkCPU),
// with the zone's count in the run as the iterations, the run's median
// as ns/op and its p95 as p95-ns, and, for a zone that counts pipeline
// statistics, each statistic's mean count per occurrence as a metric of
// its own ("fragment_shader_invocations/op", ...). benchstat then compares
// the runs of two files as this package's diff does: one sample per run.
func writeBenchfmt(w io.Writer, s side) error {
	if devs := s.devices(); len(devs) > 0 {
		fmt.Fprintf(w, "device: %s\n", benchName(strings.Join(devs, ",")))
	}
	fmt.Fprintln(w, "framescope-stats: p50 as ns/op, p95 as p95-ns, one line per run")
	for _, r := range s.Runs {
		keys := make([]zoneKey, 0, len(r.Zones))
		for k := range r.Zones {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareKeys)
		for _, k := range keys {
			z := r.Zones[k]
			if _, err := fmt.Fprintf(w, "Benchmark%s/track=%s/zone=%s %d %.1f ns/op %.1f p95-ns%s\n",
				strings.ToUpper(k.Kind), benchName(k.Track), benchName(k.Name), max(z.N, 1), z.P50, z.P95, workMetrics(z.Work)); err != nil {
				return err
			}
		}
	}
	return nil
}

func runBenchfmt(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchfmt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framescope benchfmt TRACE|DIR > runs.txt")
		fmt.Fprintln(stderr, "Writes each run's zones in the Go benchmark format: compare two sides with")
		fmt.Fprintln(stderr, "benchstat base.txt new.txt (golang.org/x/perf/cmd/benchstat).")
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadInput
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitBadInput
	}
	s, err := loadSide(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "framescope benchfmt: %s\n", termText(err.Error()))
		return exitBadInput
	}
	warnCuts(stderr, "benchfmt", s)
	if err := writeBenchfmt(stdout, s); err != nil {
		fmt.Fprintf(stderr, "framescope benchfmt: %v\n", err)
		return exitBadInput
	}
	return 0
}

// workMetrics formats a zone's work in a run as benchmark metrics: " V
// key/op" for each statistic counted, in bit order; "" without work.
func workMetrics(w *runWork) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	w.Stats.Each(func(i int) {
		if n, ok := w.whole(i); ok {
			fmt.Fprintf(&b, " %d %s/op", n, timeline.StatKey(i)) // exactly, past 2^53 too
		} else if v, ok := w.value(i); ok {
			fmt.Fprintf(&b, " %s %s/op", strconv.FormatFloat(v, 'f', -1, 64), timeline.StatKey(i))
		}
	})
	return b.String()
}
