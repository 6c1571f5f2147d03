package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tool finds an external program for a test: the path in env (set by make
// test, which then requires it), else name on PATH; the test is skipped
// when neither is there.
func tool(t *testing.T, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", env, p, err)
		}
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found (set %s): %v", name, env, err)
	}
	return p
}

// TestDiffHTMLInChromium renders the HTML report in headless Chromium:
// the screenshot must show the plots' two colours (solid box fills) and
// the DOM must hold every plot, with a hostile zone name as text, not as
// markup.
func TestDiffHTMLInChromium(t *testing.T) {
	chromium := tool(t, "FRAMESCOPE_CHROMIUM", "chromium")
	dir := t.TempDir()
	evil := `<script>document.title="pwned"</script><img src=x onerror="document.title='img'">`
	slow := map[string]float64{"z2": 1.5}
	base := runDir(t, dir, "base", 1, 5, 0.01, nil)
	cur := runDir(t, dir, "new", 500, 5, 0.01, slow)
	for _, d := range []string{base, cur} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			p := filepath.Join(d, e.Name())
			tr, err := loadTrace(p)
			if err != nil {
				t.Fatal(err)
			}
			tr.Names[len(tr.Names)-1] = evil // z3 renamed
			os.Remove(p)
			writeFile(t, d, e.Name(), tr, formatPerfetto, false)
		}
	}
	report := filepath.Join(dir, "report.html")
	code, out, errs := runCLI("diff", "--html", report, base, cur)
	if code != exitRegressed {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(html, []byte("<script")) || bytes.Contains(html, []byte("http")) && !bytes.Contains(html, []byte("http://www.w3.org/2000/svg")) {
		t.Fatalf("report has a script or an external reference")
	}
	shot := filepath.Join(dir, "shot.png")
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1000,1800"}
	run := func(extra ...string) []byte {
		cmd := exec.Command(chromium, append(append(args, extra...), "file://"+report)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
		}
		return stdout.Bytes()
	}
	run("--screenshot=" + shot)
	dom := string(run("--dump-dom"))
	if !strings.Contains(dom, "<title>Framescope diff</title>") {
		t.Errorf("the title changed: a name ran as script\n%.500s", dom)
	}
	if strings.Contains(dom, "<script") || strings.Contains(dom, `<img src="x"`) {
		t.Errorf("a zone name became markup")
	}
	if !strings.Contains(dom, "&lt;script&gt;document.title") {
		t.Errorf("the hostile name is not shown as text")
	}
	if n := strings.Count(dom, "<svg"); n < 1 {
		t.Errorf("%d plots in the DOM", n)
	}
	if !strings.Contains(dom, "<bdi>z2</bdi>: REGRESSED") {
		t.Errorf("no plot for the regressed zone z2")
	}

	counts := colourCounts(t, shot)
	t.Logf("screenshot: pixels %v", counts)
	if counts["base"] < 100 || counts["new"] < 100 {
		t.Errorf("the plots' colours are missing from the screenshot: %v", counts)
	}
	if counts["other"] < 1000 {
		t.Errorf("the screenshot is nearly blank: %v", counts)
	}
}

// TestBenchfmtInBenchstat writes two sides in the Go benchmark format and
// has benchstat compare them: it must read every run and find the 20%
// slow-down of z2 significant, and nothing else but the frames' GPU busy
// time, of which z2 is a part.
func TestBenchfmtInBenchstat(t *testing.T) {
	benchstat := tool(t, "FRAMESCOPE_BENCHSTAT", "benchstat")
	dir := t.TempDir()
	base := runDir(t, dir, "base", 1, 6, 0.01, nil)
	cur := runDir(t, dir, "new", 900, 6, 0.01, map[string]float64{"z2": 1.2})
	var files []string
	for _, d := range []string{base, cur} {
		code, out, errs := runCLI("benchfmt", d)
		if code != 0 {
			t.Fatalf("benchfmt %s: %d %s", d, code, errs)
		}
		p := d + ".txt"
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	cmd := exec.Command(benchstat, files...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("benchstat: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	t.Logf("benchstat:\n%s", out)
	if strings.Contains(out, "need >=") || stderr.Len() > 0 {
		t.Errorf("benchstat complained: %s", stderr.String())
	}
	// The first table is sec/op: the run medians.
	first := out[:max(strings.Index(out, "p95-sec"), 0)]
	rows := 0
	for _, line := range strings.Split(first, "\n") {
		if !strings.Contains(line, "zone=") {
			continue
		}
		rows++
		if !strings.Contains(line, "n=6") {
			t.Errorf("benchstat did not read 6 runs: %q", line)
		}
		changed := !strings.Contains(line, "~")
		if isZ2 := strings.Contains(line, "zone=z2 ") || strings.Contains(line, "zone=gpu%20busy "); isZ2 != changed {
			t.Errorf("benchstat: significant %v for %q", changed, line)
		}
	}
	if rows != 8 {
		t.Errorf("benchstat's sec/op table has %d zones (6 and the frames' interval and GPU busy), want 8:\n%s", rows, out)
	}
}
