package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/internal/testkit/tracecases"
)

// FuzzArgs runs the trace commands on any command line, in a directory of
// a few traces: no panic, an exit code of 0, 1 or 2, and a message on
// standard error for every 2. Paths are kept inside the directory (words
// with a slash are dropped) and the Vulkan commands are left out.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{
		"stats a.json", "stats --json b.pftrace", "stats --markdown --frames a.json", "stats -frames=true b.pftrace --json",
		"convert a.json c.pftrace", "convert -to pprof b.pftrace c.out", "convert -to bogus a.json c.json", "convert a.json -",
		"diff a.json b.pftrace --threshold 5%", "diff --json a.json a.json", "stats", "convert", "help", "nosuch x",
		"stats -- -x", "convert a.json a.json", "stats a.json b.pftrace", "convert --to=json b.pftrace d.json.gz",
	} {
		f.Add(strings.ReplaceAll(s, " ", "\x00"))
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		if len(args) > 16 || args[0] == "devices" || args[0] == "clockcheck" {
			return
		}
		kept := args[:0]
		for _, a := range args {
			if !strings.Contains(a, "/") {
				kept = append(kept, a)
			}
		}
		dir := t.TempDir()
		tr := synthTrace(3, 4, 2, nil)
		writeFile(t, dir, "a.json", tr, formatChrome, false)
		writeFile(t, dir, "b.pftrace", tr, formatPerfetto, false)
		t.Chdir(dir)
		code, _, errs := runCLI(kept...)
		switch {
		case code < 0 || code > 3:
			t.Fatalf("%q: exit %d", kept, code)
		case code == 2 && errs == "" && len(kept) > 0:
			t.Fatalf("%q: exit 2 without a message", kept)
		}
	})
}

// FuzzPipeline reads any input as the CLI does, and when it reads,
// writes it in every format and reads it back: what was read is written
// whole (every span back, or counted as dropped), reads back, and makes a
// valid profile.
func FuzzPipeline(f *testing.F) {
	tr := synthTrace(5, 3, 2, nil)
	var js, pf bytes.Buffer
	chrome.Write(&js, tr)
	perfetto.Write(&pf, tr)
	f.Add(js.Bytes())
	f.Add(pf.Bytes())
	// Every trace kind the writers know, in both formats.
	for _, c := range tracecases.All() {
		if len(c.Batches) == 0 || len(c.Batches[0].Spans) > 200 {
			continue
		}
		var js, pf bytes.Buffer
		cw, pw := chrome.NewWriter(&js), perfetto.NewWriter(&pf, perfetto.Options{})
		for _, b := range c.Batches {
			cw.WriteBatch(b)
			pw.Write(b)
		}
		cw.Close()
		pw.Close()
		f.Add(js.Bytes())
		f.Add(pf.Bytes())
	}
	f.Add([]byte(`[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":5e15,"name":"a","args":{"frame":1}},{"ph":"B","pid":1,"tid":1,"ts":1,"name":"b"}]`))
	f.Add([]byte(`[{"ph":"C","pid":1,"ts":9,"name":"framescope dropped","args":{"value":2650}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		orig, _, err := readTrace(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := orig.Validate(); err != nil {
			t.Fatalf("a trace read breaks the model: %v", err)
		}
		for _, f := range []traceFormat{formatPerfetto, formatChrome} {
			var buf bytes.Buffer
			if err := emit(&buf, orig, f, false); err != nil {
				t.Fatalf("%v: %v", f, err)
			}
			back, _, err := readTrace(&buf)
			if err != nil {
				t.Fatalf("%v: reading back: %v", f, err)
			}
			lost := int64(len(orig.Spans)) - int64(len(back.Spans))
			grew := int64(back.Drops.Total()) - int64(orig.Drops.Total())
			if lost < 0 || lost > grew {
				t.Fatalf("%v: %d spans, %d back; drops %+v, then %+v", f, len(orig.Spans), len(back.Spans), orig.Drops, back.Drops)
			}
			computeStats(back)
		}
		if err := pprof.Build(orig).CheckValid(); err != nil {
			t.Fatalf("pprof: %v", err)
		}
	})
}
