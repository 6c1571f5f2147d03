package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/tracesplit"
)

// The layer cuts its trace into files by the limits framescope reads
// with (tracesplit's), which must be this command's, with a quarter of
// them to spare.
func TestLayerFilesWithinReaders(t *testing.T) {
	if os.Getenv(envMaxSpans) != "" || os.Getenv(envMaxInput) != "" {
		t.Skip("the limits are raised by the environment")
	}
	if maxSpans != tracesplit.ReaderSlices || maxInput != tracesplit.ReaderBytes {
		t.Fatalf("framescope reads %d spans and %d bytes; the layer cuts its files for %d and %d",
			maxSpans, maxInput, tracesplit.ReaderSlices, tracesplit.ReaderBytes)
	}
	if tracesplit.FileSlices > maxSpans*3/4 || tracesplit.FileBytes > maxInput*3/4 {
		t.Fatalf("a file holds %d slices and %d bytes: over three quarters of %d and %d", tracesplit.FileSlices, tracesplit.FileBytes, maxSpans, maxInput)
	}
}

// A record lists the files of a trace in several, after its first, in
// pairs of lines; a pair being written (the process killed mid-line) is
// left out, and at most tracesplit.MaxFiles files are read.
func TestReadRecordParts(t *testing.T) {
	dir := t.TempDir()
	rec := "/t/a.perfetto-trace\n/t/.a.perfetto-trace.tmp\nprog\n" +
		"/t/a.part2.perfetto-trace\n/t/.a.part2.perfetto-trace.tmp\n" +
		"/t/a.part3.perfetto-trace\n/t/.a.part3.perf"
	if err := os.WriteFile(filepath.Join(dir, "100"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	r, ok := readRecord(dir, "100")
	if !ok || r.path != "/t/a.perfetto-trace" || r.prog != "prog" || len(r.parts) != 1 ||
		r.parts[0] != (tracePart{"/t/a.part2.perfetto-trace", "/t/.a.part2.perfetto-trace.tmp"}) {
		t.Fatalf("readRecord = %+v, %v; want a.perfetto-trace and its part2 only", r, ok)
	}
	var b strings.Builder
	b.WriteString("/t/b.perfetto-trace\n/t/.b.tmp\nprog\n")
	for k := 2; k <= tracesplit.MaxFiles+5; k++ {
		fmt.Fprintf(&b, "/t/%s/b.part%d.perfetto-trace\n/t/%s/.b.part%d.perfetto-trace.tmp\n", strings.Repeat("d", 4000), k, strings.Repeat("d", 4000), k)
	}
	if err := os.WriteFile(filepath.Join(dir, "101"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r, ok = readRecord(dir, "101")
	if !ok || len(r.parts) != tracesplit.MaxFiles-1 || !strings.HasSuffix(r.parts[len(r.parts)-1].path, fmt.Sprintf("b.part%d.perfetto-trace", tracesplit.MaxFiles)) {
		t.Fatalf("a record of %d files of long paths read as %d parts, want %d", tracesplit.MaxFiles+5, len(r.parts), tracesplit.MaxFiles-1)
	}
}
