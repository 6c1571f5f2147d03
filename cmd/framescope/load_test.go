package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/timeline"
)

// synthTrace makes frames of sequential GPU zones z0..z{zones-1} and a CPU
// zone, durations log-normal around fixed medians with a 5% spread; slow
// multiplies the named zones' durations.
func synthTrace(seed uint64, frames, zones int, slow map[string]float64) *timeline.Trace {
	rng := rand.New(rand.NewPCG(seed, 99))
	t := &timeline.Trace{
		Process: timeline.Process{PID: 7, Name: "synth"},
		Names:   []string{"", "frame", "record"},
		Tracks: []timeline.Track{
			{ID: 1, Kind: timeline.TrackCPU, Name: "main"},
			{ID: 2, Kind: timeline.TrackGPUQueue, Name: "gpu", Queue: timeline.Queue{Device: "synthetic", Flags: "graphics"}},
		},
	}
	for z := range zones {
		t.Names = append(t.Names, "z"+string(rune('0'+z)))
	}
	noise := func(median float64) int64 { return int64(median * math.Exp(0.05*rng.NormFloat64())) }
	for f := range frames {
		id := uint64(f + 1)
		t0 := int64(f) * 20_000_000
		cpuEnd := t0 + noise(2_000_000)
		t.Spans = append(t.Spans,
			timeline.Span{Track: 1, Name: 1, Start: t0, End: cpuEnd, Frame: id},
			timeline.Span{Track: 1, Name: 2, Start: t0, End: t0 + (cpuEnd-t0)/2, Frame: id, Depth: 1})
		at := cpuEnd
		for z := range zones {
			name := t.Names[3+z]
			d := float64(200_000 * (z + 1))
			if m, ok := slow[name]; ok {
				d *= m
			}
			end := at + noise(d)
			t.Spans = append(t.Spans, timeline.Span{Track: 2, Name: timeline.NameID(3 + z), Start: at, End: end, Frame: id, ErrNs: 2000})
			at = end
		}
		t.Frames = append(t.Frames, timeline.Frame{ID: id, Start: t0, End: at})
	}
	return t
}

// writeFile writes tr in format f (gzipped when gz) into dir.
func writeFile(t testing.TB, dir, name string, tr *timeline.Trace, f traceFormat, gz bool) string {
	t.Helper()
	var buf bytes.Buffer
	if err := emit(&buf, tr, f, gz); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSniff(t *testing.T) {
	var pp bytes.Buffer
	pprof.Build(synthTrace(1, 2, 2, nil)).WriteUncompressed(&pp)
	tests := []struct {
		name string
		in   string
		want traceFormat
		err  string
	}{
		{"object", `{"traceEvents":[]}`, formatChrome, ""},
		{"array", "  \n\t[", formatChrome, ""},
		{"bom", "\xef\xbb\xbf {", formatChrome, ""},
		{"perfetto", "\x0a\x02\x40\x01", formatPerfetto, ""},
		// A first packet 123 or 91 bytes long: its length is '{' or '['.
		{"perfetto, length '{'", "\x0a\x7b\x12\x79" + strings.Repeat("x", 121) + "\x0a\x00", formatPerfetto, ""},
		{"perfetto, length '['", "\x0a\x5b\x12\x59" + strings.Repeat("x", 89), formatPerfetto, ""},
		{"perfetto cut short", "\x0a\x7b\x12\x79" + strings.Repeat("x", 121) + "\x0a\x05\x40", formatPerfetto, ""},
		{"long newline array", "\n[" + strings.Repeat("{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2},\n", 40) + "{}]", formatChrome, ""},
		{"newline object", "\n{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\"}]}", formatChrome, ""},
		{"newline array", "\n[\n{\"ph\":\"B\",\"ts\":1},\n{\"ph\":\"E\",\"ts\":2}]", formatChrome, ""},
		{"pprof", pp.String(), formatPprof, "pprof"},
		{"empty", "", formatUnknown, "empty"},
		{"blank", "   \n", formatUnknown, "whitespace"},
		{"text", "hello", formatUnknown, "0x68"},
		{"binary", "\x00\x01", formatUnknown, "0x00"},
		{"half bom", "\xef\xbb", formatUnknown, "0xef"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sniff(bufio.NewReader(strings.NewReader(tc.in)))
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("sniff = %v, %v; want %v, error with %q", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestReadTrace(t *testing.T) {
	tr := synthTrace(2, 10, 3, nil)
	var js, pf bytes.Buffer
	if err := chrome.Write(&js, tr); err != nil {
		t.Fatal(err)
	}
	if err := perfetto.Write(&pf, tr); err != nil {
		t.Fatal(err)
	}
	gzip1 := func(b []byte) []byte {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(b)
		w.Close()
		return z.Bytes()
	}
	tests := []struct {
		name string
		in   []byte
		want traceFormat
		err  string
	}{
		{"chrome", js.Bytes(), formatChrome, ""},
		{"chrome gz", gzip1(js.Bytes()), formatChrome, ""},
		{"perfetto", pf.Bytes(), formatPerfetto, ""},
		{"perfetto gz", gzip1(pf.Bytes()), formatPerfetto, ""},
		{"chrome truncated", js.Bytes()[:js.Len()/2], formatChrome, "unexpected EOF"},
		{"perfetto truncated", pf.Bytes()[:pf.Len()/2+1], formatPerfetto, "perfetto"},
		{"gzip truncated", gzip1(js.Bytes())[:40], formatUnknown, "unexpected EOF"},
		{"gzip header only", []byte{0x1f, 0x8b}, formatUnknown, "gzip"},
		{"garbage", []byte("GIF89a"), formatUnknown, "not a Perfetto or Chrome"},
		{"json garbage", []byte("{nope"), formatChrome, "chrome trace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, f, err := readTrace(bytes.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || f != tc.want {
				t.Fatalf("format %v, error %v; want %v", f, err, tc.want)
			}
			if len(got.Spans) != len(tr.Spans) {
				t.Fatalf("%d spans, want %d", len(got.Spans), len(tr.Spans))
			}
		})
	}
	// Huge input, and a gzip bomb, stop at maxInput.
	defer func(old int64) { maxInput = old }(maxInput)
	maxInput = 1 << 10
	bomb := gzip1(append([]byte("["), bytes.Repeat([]byte(" "), 1<<20)...))
	for _, in := range [][]byte{bomb, js.Bytes(), pf.Bytes()} {
		if _, _, err := readTrace(bytes.NewReader(in)); err == nil || !strings.Contains(err.Error(), "too large") && !strings.Contains(err.Error(), "exceeds limits") {
			t.Errorf("input over maxInput: %v", err)
		}
	}
}

// FuzzReadTrace checks that no input makes the CLI's loader panic.
func FuzzReadTrace(f *testing.F) {
	tr := synthTrace(3, 2, 2, nil)
	var js, pf bytes.Buffer
	chrome.Write(&js, tr)
	perfetto.Write(&pf, tr)
	f.Add(js.Bytes())
	f.Add(pf.Bytes())
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add([]byte(" \n["))
	f.Fuzz(func(t *testing.T, data []byte) {
		readTrace(bytes.NewReader(data))
	})
}
