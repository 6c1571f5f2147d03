package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
)

// build builds pkg (a path from the module root) into dir, without the
// race detector, and returns the binary.
func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(gobin, "build", "-o", bin, "./"+pkg)
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	return bin
}

func fetch(t *testing.T, url string) (int, []byte) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return r.StatusCode, b
}

// TestLiveView runs the demo as a user would, with -frames 0 -http
// 127.0.0.1:0 on the default device (lavapipe in CI), and uses every
// endpoint of its live view: the traces load in Perfetto's trace
// processor with GPU slices and no import error, go tool pprof reads the
// profile, framescope capture saves a trace, bad parameters get 400,
// headless Chromium shows frames on the page's graph, their verdicts and
// zones of a frame (a screenshot goes to out/live.png at the repository
// root), and SIGINT ends the run with its trace files written and exit
// status 0.
func TestLiveView(t *testing.T) {
	vktest.OpenUnchecked(t, vk.Config{}) // skips, or fails under FRAMESCOPE_REQUIRE_VULKAN, without a device
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	dir := t.TempDir()
	tri := build(t, dir, "examples/triangle")
	cli := build(t, dir, "cmd/framescope")
	out := filepath.Join(dir, "out")
	cmd := exec.Command(tri, "-frames", "0", "-http", "127.0.0.1:0", "-out", out, "-json", "-size", "64", "-fps", "300")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	ended := false // exited has been received from
	defer func() {
		if !ended {
			cmd.Process.Kill()
			<-exited
		}
	}()
	lines := bufio.NewScanner(stderr)
	var base string
	for lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "live view: "); ok {
			base = u
			break
		}
		t.Logf("demo: %s", lines.Text())
	}
	if base == "" {
		cmd.Process.Kill()
		cmd.Wait()
		ended = true
		t.Fatal("the demo named no live view address")
	}
	go func() {
		for lines.Scan() {
			t.Logf("demo: %s", lines.Text())
		}
		exited <- cmd.Wait()
	}()

	// The view fills: settled frames with GPU time.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, b := fetch(t, base+"json")
		var v struct {
			Frames []struct {
				GPUMs float64 `json:"gpu_ms"`
			} `json:"frames"`
			Zones  []struct{ Kind string }  `json:"zones"`
			Clocks []struct{ Queue string } `json:"clocks"`
			Books  map[string]struct {
				Issued   uint64
				Balanced bool
			} `json:"books"`
		}
		if code != 200 || json.Unmarshal(b, &v) != nil {
			t.Fatalf("json: %d %.200s", code, b)
		}
		gpu := 0
		for _, f := range v.Frames {
			if f.GPUMs > 0 {
				gpu++
			}
		}
		if gpu >= 60 && len(v.Zones) > 0 && len(v.Clocks) == 1 {
			// The recorder's books, live: each balances, however much is
			// in flight or held.
			for _, k := range []string{"zones", "spans", "flows"} {
				if b, ok := v.Books[k]; !ok || !b.Balanced || b.Issued == 0 {
					t.Errorf("the view's %s book: %+v (present %v), want one that balances", k, b, ok)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the view has %d frames, %d with GPU time: %.300s", len(v.Frames), gpu, b)
		}
		time.Sleep(100 * time.Millisecond)
	}

	save := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, q := range []string{"trace?frames=60", "trace?seconds=1"} {
		code, b := fetch(t, base+q)
		if code != 200 {
			t.Fatalf("%s: %d %s", q, code, b)
		}
		s := tpcheck.Check(t, save("live.perfetto-trace", b))
		rows := s.MustQuery(`select count(*) as n from slice s join track t on s.track_id = t.id
			join track p on t.parent_id = p.id where p.name = 'GPU'`)
		if n := rows[0]["n"].(int64); n < 60 {
			t.Errorf("%s: %d GPU slices in the trace processor", q, n)
		}
	}
	code, b := fetch(t, base+"gpu?seconds=1")
	if code != 200 {
		t.Fatalf("gpu: %d %s", code, b)
	}
	top, err := exec.Command("go", "tool", "pprof", "-top", save("gpu.pb.gz", b)).CombinedOutput()
	if err != nil || !bytes.Contains(top, []byte("render pass")) || !bytes.Contains(top, []byte("gpu_time")) {
		t.Errorf("go tool pprof -top: %v\n%s", err, top)
	}
	for _, q := range []string{"trace?frames=0", "trace?frames=100000", "trace?seconds=61", "trace?frames=1&seconds=1", "gpu?seconds=x"} {
		if code, b := fetch(t, base+q); code != 400 {
			t.Errorf("%s: %d %s", q, code, b)
		}
	}
	capt := filepath.Join(dir, "captured.perfetto-trace")
	if out, err := exec.Command(cli, "capture", "-frames", "30", "-o", capt, base).CombinedOutput(); err != nil ||
		!bytes.Contains(out, []byte("30 frames")) {
		t.Errorf("framescope capture: %v\n%s", err, out)
	}

	checkPage(t, dir, base)

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		ended = true
		if err != nil {
			t.Fatalf("the demo, interrupted: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the demo did not end within 60 s of SIGINT")
	}
	var sum struct {
		Frames int      `json:"frames"`
		Files  []string `json:"files"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || sum.Frames < 60 || len(sum.Files) != 3 {
		t.Fatalf("summary %+v (%v): %s", sum, err, stdout.String())
	}
	for _, f := range sum.Files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	tpcheck.Check(t, sum.Files[0])
}

// checkPage opens the live view in headless Chromium: the graph must
// draw frames, the readout their verdicts, and the zone list hold zones.
// The screenshot goes to out/live.png at the repository root.
func checkPage(t *testing.T, dir, base string) {
	chromium := os.Getenv("FRAMESCOPE_CHROMIUM")
	if chromium == "" {
		var err error
		if chromium, err = exec.LookPath("chromium"); err != nil {
			if os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") == "1" {
				t.Fatal("chromium not found (make deps installs it; FRAMESCOPE_CHROMIUM names it)")
			}
			t.Skip("chromium not found (set FRAMESCOPE_CHROMIUM)")
		}
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "chromium"), "--window-size=1200,900",
		"--virtual-time-budget=4000"}
	run := func(extra string) []byte {
		out, err := exec.Command(chromium, append(args, extra, base)...).Output()
		if err != nil {
			t.Fatalf("chromium %s: %v", extra, err)
		}
		return out
	}
	dom := run("--dump-dom")
	m := regexp.MustCompile(`id="graph" data-frames="(\d+)"|data-frames="(\d+)"[^>]*id="graph"`).FindSubmatch(dom)
	frames := 0
	if m != nil {
		frames, _ = strconv.Atoi(string(append(m[1], m[2]...)))
	}
	if frames < 60 {
		t.Errorf("the page's graph shows %d frames", frames)
	}
	if n := bytes.Count(dom, []byte(`class="zone `)); n < 5 {
		t.Errorf("the page lists %d zones of the selected frame", n)
	}
	// What limits the frames: the window's share of a verdict first (the
	// demo's frames read CPU-bound or GPU-bound, by how fast lavapipe
	// draws them against -fps), and the selected frame's verdict.
	if !regexp.MustCompile(`<b>Limited by: </b>(CPU|GPU)-bound \d+%`).Match(dom) || !bytes.Contains(dom, []byte(`<div id="frame-limit"><div>`)) {
		t.Errorf("the page reads no verdicts of the demo's frames, or none of the selected one")
	}
	if n := bytes.Count(dom, []byte(">balances<")); n != 3 || bytes.Contains(dom, []byte(">DOES NOT BALANCE<")) {
		t.Errorf("the page's books: %d balance, want all 3", n)
	}
	shots := filepath.Join("..", "..", "out")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	shot, _ := filepath.Abs(filepath.Join(shots, "live.png"))
	run("--screenshot=" + shot)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
}
