package layer

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/testkit/loopcheck"
	"github.com/framescope/framescope/timeline"
)

// The books hold every execution the GPU ran, past the layer's limits.

// runShapeValidated runs a shape under the layer, a frame a submission,
// with the validation layer below it, which must stay silent; the books
// must balance.
func runShapeValidated(t *testing.T, dir, prog, mode string, n int, flags ...string) *timeline.Trace {
	t.Helper()
	env := []string{"VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation", "VK_ADD_LAYER_PATH=" + validationDir()}
	tr, out := runShape(t, dir, env, prog, mode, n, append([]string{"-frame-every", "1"}, flags...)...)
	if validationSpoke(out) {
		t.Errorf("the validation layer spoke:\n%s", lastOf(out))
	}
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	return tr
}

// 300 command buffers recorded once and submitted together 20 times: the
// layer keeps 256 recordings, and the zones of the other 44 are refused,
// at each of their executions (no_frame), not once. The GPU ran 12,000
// zones; before, the books said 10,328 issued.
func TestManyRecordingsUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const n, cmds, recordings = 20, 300, 256
	tr, _ := runShape(t, dir, nil, prog, "many", n, "-frame-every", "1")
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	z := tr.Ledger.Zones
	if want := uint64(2 * cmds * n); z.Issued != want {
		t.Errorf("%d zones issued, want %d (2 a command buffer, %d command buffers, %d submissions)", z.Issued, want, cmds, n)
	}
	if want := uint64(2 * recordings * n); z.Delivered != want {
		t.Errorf("%d zones delivered, want %d", z.Delivered, want)
	}
	if want := uint64(2 * (cmds - recordings) * n); tr.Drops.NoFrame != want || tr.Drops.Total() != want {
		t.Errorf("drops %+v, want %d no_frame alone", tr.Drops, want)
	}
}

// A program that resets its command pool every frame and allocates that
// frame's command buffers afresh, never freeing the old ones (seed 2116
// of the layer's checker did): 40 frames of 8, 320 command buffers, 8
// recorded at once. The layer keeps 256 recordings; a recording begun
// past them takes the slot of a command buffer its pool reset, so every
// zone is timed. Before, the 64 last were refused (no_frame).
func TestPoolResetFreesRecordingsUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const frames, each = 40, 8
	tr, _ := runShape(t, dir, nil, prog, "leak", frames, "-frame-every", "1")
	want := 2 * frames * each // a label and the command buffer's own zone
	if z := tr.Ledger.Zones; z.Issued != uint64(want) {
		t.Errorf("%d zones issued, want %d", z.Issued, want)
	}
	checkShapeZones(t, tr, want) // every one delivered, none lost
}

// Past the 4,096 label names the layer registers, later labels share one
// name, and the layer's own zones keep theirs: a render pass first seen
// after 5,000 distinct labels is still "render pass" (before, it was one
// of the "(other labels)").
func TestOwnNamesPastLabelCapUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const n, labels = 5000, 4096
	tr, _ := runShape(t, dir, nil, prog, "names", n)
	byName := map[string]int{}
	for _, z := range loopcheck.GPUZones(tr) {
		byName[tr.Name(z.Name)]++
	}
	const cmds = n/100 + 1 // 100 labels a command buffer, then the render pass's
	if byName["render pass"] != 1 || byName["command buffer"] != cmds || byName["(other labels)"] != n-labels {
		t.Errorf("%d render pass, %d command buffer, %d (other labels) zones, want 1, %d, %d", byName["render pass"],
			byName["command buffer"], byName["(other labels)"], cmds, n-labels)
	}
	checkShapeZones(t, tr, n+cmds+1)
}

// A secondary that continues a render pass, recorded once and executed by
// two primaries at each of 30 submissions: its zones cannot be timed (no
// query may be reset inside a render pass), and are counted no_frame at
// each of its 60 executions. Before, they were counted once: 2 zones in
// all, of the 120 the GPU ran.
func TestContinuingSecondaryCountedEachRunUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const n = 30
	tr := runShapeValidated(t, dir, prog, "continue", n)
	// Each submission: two primaries' command buffer and render pass
	// zones timed; the secondary's own zone and its label, twice, not.
	checkDelivered(t, tr, 4*n, timeline.Drops{NoFrame: 4 * n})
}

// checkDelivered holds tr to delivering delivered zones and losing
// exactly drops.
func checkDelivered(t *testing.T, tr *timeline.Trace, delivered uint64, drops timeline.Drops) {
	t.Helper()
	if tr.Drops != drops {
		t.Errorf("drops %+v, want %+v", tr.Drops, drops)
	}
	if tr.Ledger.Zones.Delivered != delivered {
		t.Errorf("%d zones delivered, want %d", tr.Ledger.Zones.Delivered, delivered)
	}
}

// Labels nested about the layer's stack of 64 open zones (60 to 67 deep,
// with the command buffer's own zone), the innermost ended inside a render
// pass begun after it: each label and render pass is timed where it was
// recorded. Before, at 63 labels the render pass went past the stack and
// the label's end, past it too by count, was taken for the render pass's:
// the render pass lasted to the command buffer's end, the innermost label
// was counted unended and "L0" ended a label of an earlier command buffer.
// With -work, the label ended inside the render pass has no counts
// (render_pass): no statistics query begun outside a render pass may end
// inside it (before, the layer ended one there).
func TestDeepLabelsAroundRenderPassUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const n = 16
	for _, work := range []bool{false, true} {
		t.Run(fmt.Sprintf("work %t", work), func(t *testing.T) {
			var flags []string
			if work {
				flags = append(flags, "-work")
			}
			tr := runShapeValidated(t, dir, prog, "deep", n, flags...)
			rest := tr.Drops
			rest.Work = 0 // with -work: zones without counts
			if d := rest.Total(); d != 0 {
				t.Errorf("dropped %d: %+v", d, tr.Drops)
			}
			deepZones(t, tr, n, work)
		})
	}
}

// deepZones checks the zones of shapes deep's n submissions.
func deepZones(t *testing.T, tr *timeline.Trace, n int, work bool) {
	want, zones := map[string]int{"render pass": n, "command buffer": n}, 0
	for k := range n {
		for j := range 60 + k%8 {
			want[fmt.Sprintf("L%d", j)]++
		}
	}
	got := map[string]int{}
	byFrame := map[uint64]map[string]timeline.Span{}
	for _, z := range loopcheck.GPUZones(tr) {
		name := tr.Name(z.Name)
		got[name]++
		zones++
		if byFrame[z.Frame] == nil {
			byFrame[z.Frame] = map[string]timeline.Span{}
		}
		byFrame[z.Frame][name] = z
	}
	if !maps.Equal(got, want) {
		t.Errorf("zones by name %v, want %v", got, want)
	}
	// The render pass ends before the label ended right after it (the
	// second innermost) ends.
	for f, zs := range byFrame {
		rp, ok := zs["render pass"]
		depth := 0
		for zs[fmt.Sprintf("L%d", depth)].End != 0 {
			depth++
		}
		next, ok2 := zs[fmt.Sprintf("L%d", depth-2)]
		if ok && ok2 && rp.End > next.End {
			t.Errorf("frame %d (%d labels): the render pass ends %d ns after L%d, which was ended after it", f, depth, rp.End-next.End, depth-2)
		}
		for name, z := range zs {
			inner := name == fmt.Sprintf("L%d", depth-1)
			if work && (z.Work == nil || (z.Work.Missing == timeline.WorkRenderPass) != inner) {
				t.Errorf("frame %d: zone %q work %+v; want render_pass for the label ended inside the render pass alone", f, name, z.Work)
			}
		}
	}
}

// A command buffer reset before it ends (its pool reset, or begun again),
// as Mesa's zink does once a frame: its zones can never run, and are
// counted abandoned, not unended (the cause of labels left open).
func TestResetBeforeEndUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const n = 50
	tr := runShapeValidated(t, dir, prog, "reset", n)
	// Each round: two recordings abandoned, a zone for the command buffer
	// and one for its label each; one kept, the same two zones.
	checkDelivered(t, tr, 2*n, timeline.Drops{Abandoned: 4 * n})
}

// A program that never presents nor marks a frame (16 threads submitting
// labelled regions): its frames end by time, so that the trace streams
// while it runs (a kill leaves one that reads back) and its spans and
// arrows all reach it. Before, it was one frame, written at exit, and
// lost spans and arrows past the recorder's bounds.
func TestNeverPresentsUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	t.Run("whole", func(t *testing.T) {
		// The first frame ends 1 ms after the start, not 1 s: on the H100
		// the submissions take tens of milliseconds (1 frame with 50 ms).
		const n = 1000
		tr, out := runShape(t, dir, []string{"FRAMESCOPE_TEST_FIRST_TIMED=1ms"}, prog, "mt", n)
		if len(tr.Frames) < 2 {
			t.Errorf("%d frames, want the run cut by time:\n%s", len(tr.Frames), lastOf(out))
		}
		if !bytes.Contains(out, []byte("never presented")) {
			t.Errorf("framescope run did not say how frames were made:\n%s", lastOf(out))
		}
		checkShapeZones(t, tr, 16*3*n)
	})
	t.Run("killed", func(t *testing.T) {
		trace := filepath.Join(t.TempDir(), "killed.perfetto-trace")
		cmd := exec.Command(filepath.Join(dir, "framescope"), "run", "-o", trace, "--", prog, "mt", "1000000")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		deadline := time.Now().Add(2 * time.Minute)
		for { // the trace appears at -o with its first batch
			if _, err := os.Stat(trace); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no batch written within 2 minutes:\n%s", lastOf(out.Bytes()))
			}
			time.Sleep(50 * time.Millisecond)
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		f, err := os.Open(trace)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tr, err := perfetto.Read(f) // cut in a batch, it reads back to the last whole one
		if tr == nil {
			t.Fatalf("the killed run's trace does not read back: %v", err)
		}
		if len(tr.Frames) == 0 || len(loopcheck.GPUZones(tr)) == 0 {
			t.Errorf("%d frames, %d zones read back, want some", len(tr.Frames), len(loopcheck.GPUZones(tr)))
		}
	})
}
