package layer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/tracesplit"
	"github.com/framescope/framescope/timeline"
)

// A run longer than a file of the trace holds goes on in more files,
// each a whole trace that framescope reads, within its budget of spans
// and frames (lowered for the test, FRAMESCOPE_TEST_FILE_SPANS, where a
// real run's is 3 Mi of the readers' 4 Mi): `framescope run` lists every
// one, `framescope stats` reads each (exit 0), the books of each balance,
// a closed file holds nothing open, and the zones of all add up to the
// program's. Past the bound of files, the rest of the run is counted
// lost to the sink in the last file's books, and said. Before, a run of
// more than 4 Mi spans wrote one trace that every reader refused.
func TestLongRunInFilesUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const n = 1000 // 16 threads, 3 zones a submission
	t.Run("files", func(t *testing.T) {
		const budget = 20000 // about 4 batches of 60 frames of 16 submissions
		files, out := runInFiles(t, dir, prog, budget, "16", n)
		if len(files) < 3 {
			t.Fatalf("%d files, want the run in several:\n%s", len(files), lastOf(out))
		}
		trs := checkFiles(t, dir, files, out, 16*3*n)
		for i, tr := range trs {
			if got := len(tr.Spans) + len(tr.Frames); got > budget {
				t.Errorf("%s: %d spans and frames, over the budget of %d", files[i], got, budget)
			}
		}
		if last := trs[len(trs)-1]; last.Drops.Sink != 0 {
			t.Errorf("%s: %d lost to the sink, under the bound of files", files[len(files)-1], last.Drops.Sink)
		}
	})
	t.Run("bound", func(t *testing.T) {
		files, out := runInFiles(t, dir, prog, 1000, "1", n)
		if len(files) != tracesplit.MaxFiles {
			t.Fatalf("%d files, want the bound, %d:\n%s", len(files), tracesplit.MaxFiles, lastOf(out))
		}
		trs := checkFiles(t, dir, files, out, 16*3*n)
		last := trs[len(trs)-1]
		if last.Drops.Sink == 0 || last.Ledger.Zones.Sink+last.Ledger.Spans.Sink == 0 {
			t.Errorf("the last file counts nothing lost to the sink past the bound: %+v, %+v", last.Ledger, last.Drops)
		}
		if !bytes.Contains(out, []byte("the most it is cut into")) {
			t.Errorf("the layer did not say that the rest of the run is not written:\n%s", lastOf(out))
		}
	})
}

// runInFiles runs shapes mt n under `framescope run`, a frame every
// frameEvery submissions, with the budget of spans and frames a file,
// and returns the files of its trace as run lists them, with its output.
// No other file of the trace is on disk.
func runInFiles(t *testing.T, dir, prog string, budget int, frameEvery string, n int) ([]string, []byte) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "mt.perfetto-trace")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "framescope"), "run", "-frame-every", frameEvery, "-o", trace, "--", prog, "mt", fmt.Sprint(n))
	cmd.Env = append(os.Environ(), fmt.Sprintf("FRAMESCOPE_TEST_FILE_SPANS=%d", budget))
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("ok\n")) {
		t.Fatalf("shapes mt %d under the layer: %v\n%s", n, err, lastOf(out))
	}
	var files []string
	for _, line := range strings.Split(string(out), "\n") {
		var k, of int
		var path string
		if c, _ := fmt.Sscanf(line, "file %d of %d: %s", &k, &of, &path); c == 3 {
			if k != len(files)+1 {
				t.Fatalf("framescope run listed file %d after %d:\n%s", k, len(files), lastOf(out))
			}
			files = append(files, path)
		}
	}
	if len(files) == 0 {
		files = []string{trace} // one file: run summarizes it as before
	}
	for k, f := range files {
		want := trace
		if k > 0 {
			want = strings.TrimSuffix(trace, ".perfetto-trace") + fmt.Sprintf(".part%d.perfetto-trace", k+1)
		}
		if f != want {
			t.Errorf("file %d is %s, want %s", k+1, f, want)
		}
	}
	all, err := filepath.Glob(filepath.Join(filepath.Dir(trace), "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(files) {
		t.Errorf("%d files beside the trace, %d listed: %v", len(all), len(files), all)
	}
	return files, out
}

// checkFiles checks that every file reads with `framescope stats` (exit
// 0) and alone, that the books of each balance, that a file before the
// last holds nothing open, and that the zones of all add up to issued:
// those in the files are those delivered, and the rest lost under a
// cause. It returns the traces.
func checkFiles(t *testing.T, dir string, files []string, out []byte, issued uint64) []*timeline.Trace {
	t.Helper()
	var trs []*timeline.Trace
	var sum timeline.Book
	var lost uint64
	inFiles := 0
	for i, f := range files {
		if st, err := exec.Command(filepath.Join(dir, "framescope"), "stats", f).CombinedOutput(); err != nil {
			t.Errorf("framescope stats %s: %v\n%s", f, err, lastOf(st))
		}
		tr := readTrace(t, f)
		trs = append(trs, tr)
		if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
			t.Errorf("%s: books %v do not balance: %+v against %+v", f, k, tr.Ledger, tr.Drops)
		}
		z := tr.Ledger.Zones
		if i < len(files)-1 && (z.Open|tr.Ledger.Spans.Open|tr.Ledger.Flows.Open) != 0 {
			t.Errorf("%s, closed, holds open items: %+v", f, tr.Ledger)
		}
		zones := 0
		for _, s := range tr.Spans {
			if k := tr.Track(s.Track); k != nil && k.Kind == timeline.TrackGPUQueue {
				zones++
			}
		}
		if uint64(zones) != z.Delivered {
			t.Errorf("%s: %d GPU zones, its books say %d delivered", f, zones, z.Delivered)
		}
		inFiles += zones
		sum.Issued += z.Issued
		sum.Delivered += z.Delivered
		sum.Open += z.Open
		lost += books.GPUZones(tr.Drops) + z.Evicted + z.Sink
	}
	if sum.Issued != issued || sum.Delivered+sum.Open+lost != issued || uint64(inFiles) != sum.Delivered {
		t.Errorf("over the %d files: %d zones issued = %d delivered (%d in the files) + %d open + %d lost; the program issued %d:\n%s",
			len(files), sum.Issued, sum.Delivered, inFiles, sum.Open, lost, issued, lastOf(out))
	}
	return trs
}
