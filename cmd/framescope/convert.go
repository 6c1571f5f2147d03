package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/timeline"
)

func init() {
	register(command{
		name:    "convert",
		summary: "convert a trace between Perfetto, Chrome JSON and pprof",
		run:     runConvert,
	})
}

// formatOf picks the output format from a file name.
func formatOf(name string) (traceFormat, bool) {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".perfetto-trace"), strings.HasSuffix(n, ".pftrace"), strings.HasSuffix(n, ".perfetto-trace.gz"), strings.HasSuffix(n, ".pftrace.gz"):
		return formatPerfetto, true
	case strings.HasSuffix(n, ".json"), strings.HasSuffix(n, ".json.gz"):
		return formatChrome, true
	case strings.HasSuffix(n, ".pb.gz"), strings.HasSuffix(n, ".pprof"):
		return formatPprof, true
	}
	return formatUnknown, false
}

func parseFormat(s string) (traceFormat, bool) {
	switch strings.ToLower(s) {
	case "perfetto", "pftrace":
		return formatPerfetto, true
	case "chrome", "json":
		return formatChrome, true
	case "pprof":
		return formatPprof, true
	}
	return formatUnknown, false
}

func writeTrace(w io.Writer, t *timeline.Trace, f traceFormat) error {
	switch f {
	case formatPerfetto:
		return perfetto.Write(w, t)
	case formatChrome:
		return chrome.Write(w, t)
	case formatPprof:
		return pprof.Write(w, t)
	}
	return fmt.Errorf("unknown format %v", f)
}

func runConvert(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	to := fs.String("to", "", "output format: perfetto, chrome or pprof (default: from OUT's extension)")
	stages := fs.Bool("render-stages", false, "Perfetto output only: also write each GPU zone as a GPU render stage on a\nhardware queue of its queue, and the queues' work counters as GPU counters\n(ui.perfetto.dev's GPU group; the trace processor's gpu_slice and gpu_counter_track)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framescope convert [-to FORMAT] [-render-stages] IN OUT")
		fmt.Fprintln(stderr, "IN is a Perfetto or Chrome JSON trace, gzipped or not (told apart by content).")
		fmt.Fprintln(stderr, "OUT's extension picks the format: .perfetto-trace or .pftrace, .json, .pb.gz (pprof);")
		fmt.Fprintln(stderr, "a further .gz on a Perfetto or JSON name compresses it. OUT - writes to standard output.")
		fmt.Fprintln(stderr, "JSON output also shows what limits each frame (threads \"frame limits\" and \"GPU idle\",")
		fmt.Fprintln(stderr, "counters \"GPU busy\" and \"CPU busy\"), which reading it leaves out; pprof output puts the")
		fmt.Fprintln(stderr, "GPU's idle time in frames under \"GPU idle\", by cause (-tagignore=kind=idle: the work alone).")
		fmt.Fprintln(stderr, "OUT is replaced only once written whole, and only if it is a regular file (keeping its")
		fmt.Fprintln(stderr, "permissions; a new one gets 0644). A leftover \".OUT"+tmpMark+"*\" beside it is a temporary")
		fmt.Fprintln(stderr, "of a convert that was killed, and may be removed.")
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 2 {
		fs.Usage()
		return 2
	}
	in, out := pos[0], pos[1]
	var f traceFormat
	var ok bool
	if *to != "" {
		if f, ok = parseFormat(*to); !ok {
			fmt.Fprintf(stderr, "framescope convert: unknown format %q: want perfetto, chrome or pprof\n", *to)
			return 2
		}
	} else if f, ok = formatOf(out); !ok {
		fmt.Fprintf(stderr, "framescope convert: cannot tell the format from %q: name it .perfetto-trace, .pftrace, .json or .pb.gz, or use -to\n", out)
		return 2
	}
	if *stages && f != formatPerfetto {
		fmt.Fprintf(stderr, "framescope convert: -render-stages needs Perfetto output, not %v\n", f)
		return 2
	}
	po := perfetto.Options{RenderStages: *stages}
	if out != "-" {
		// Refuse a bad OUT before the work of reading IN.
		if _, err := checkOutput(out); err != nil {
			fmt.Fprintf(stderr, "framescope convert: %v\n", err)
			return 2
		}
	}
	t, cut, err := loadTraceCut(in)
	if err != nil {
		fmt.Fprintf(stderr, "framescope convert: %v\n", err)
		return 2
	}
	if cut != nil {
		fmt.Fprintf(stderr, "framescope convert: %s; the output holds what reads back\n", termText(cut.String()))
	}
	gz := f != formatPprof && strings.HasSuffix(strings.ToLower(out), ".gz")
	if out == "-" {
		if err := emitWith(stdout, t, f, gz, po); err != nil {
			fmt.Fprintf(stderr, "framescope convert: %v\n", err)
			return 2
		}
		return 0
	}
	o, err := createOutput(out)
	if err != nil {
		fmt.Fprintf(stderr, "framescope convert: %v\n", err)
		return 2
	}
	err = emitWith(o.f, t, f, gz, po)
	if err == nil && testHookWritten != nil {
		err = testHookWritten()
	}
	if err == nil {
		err = o.commit()
	} else {
		o.abort()
	}
	if err != nil {
		fmt.Fprintf(stderr, "framescope convert: writing %s: %v\n", out, err)
		return 2
	}
	return 0
}

// writeTraceWith is writeTrace with the options of a Perfetto writer, and
// what limits each frame after the trace.
func writeTraceWith(w io.Writer, t *timeline.Trace, f traceFormat, po perfetto.Options) error {
	if f != formatPerfetto {
		return writeTrace(w, t, f)
	}
	pw := perfetto.NewWriter(w, po)
	if err := pw.Write(t); err != nil {
		return err
	}
	if err := pw.Close(); err != nil {
		return err
	}
	return perfetto.AppendLimits(w, t) // as perfetto.Write adds them
}

// testHookWritten, when set, runs once OUT is written, before it takes
// OUT's place.
var testHookWritten func() error

func emit(w io.Writer, t *timeline.Trace, f traceFormat, gz bool) error {
	return emitWith(w, t, f, gz, perfetto.Options{})
}

// emitWith is emit with the options of a Perfetto writer.
func emitWith(w io.Writer, t *timeline.Trace, f traceFormat, gz bool, po perfetto.Options) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var dst io.Writer = bw
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(bw)
		dst = zw
	}
	if err := writeTraceWith(dst, t, f, po); err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	return bw.Flush()
}
