package main

import (
	"encoding/json"
	"fmt"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/pgtest"
)

// framescope history add records a directory of runs and a file, by the
// traces' digests: again, it adds nothing; a commit again with another
// -seq is refused; show -json gives back each run's zone summaries as
// diff computes them, work counts exact.
func TestHistoryAddShow(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "h.db")
	runs := runDir(t, dir, "runs", 1, 3, 0.02, nil)
	one := filepath.Join(dir, "one.pftrace")
	writeFile(t, dir, "one.pftrace", workRun(99, baseWork), formatPerfetto, false)
	add := func(commit string, seq int, paths ...string) (int, string, string) {
		return runCLI(append([]string{"history", "add", "-db", db, "-commit", commit, "-seq", fmt.Sprint(seq), "-testbed", "synth"}, paths...)...)
	}
	if code, out, errs := add("a1", 1, runs); code != 0 || !strings.Contains(out, "3 of 3 runs added (0 recorded before)") {
		t.Fatalf("add: %d %q %q", code, out, errs)
	}
	if code, out, errs := add("a1", 1, runs, one); code != 0 || !strings.Contains(out, "1 of 4 runs added (3 recorded before)") {
		t.Fatalf("add again with one more: %d %q %q", code, out, errs)
	}
	if code, _, errs := add("a1", 2, one); code != exitBadInput || !strings.Contains(errs, "sequence number 1, not 2") {
		t.Fatalf("a commit again with another -seq: %d %q", code, errs)
	}
	if code, _, errs := add("a2", 2, filepath.Join(dir, "missing")); code != exitBadInput || !strings.Contains(errs, "missing") {
		t.Fatalf("a run that is not there: %d %q", code, errs)
	}
	code, out, errs := runCLI("history", "show", "-db", db, "-testbed", "synth", "-json")
	if code != 0 {
		t.Fatalf("show: %d %q", code, errs)
	}
	var h historyJSON
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Commits) != 1 || len(h.Commits[0].Runs) != 4 {
		t.Fatalf("commits %+v, want a1 with 4 runs", h.Commits)
	}
	sd, err := loadSide(one)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := historyPoints(sd.Runs[0])
	found := 0
	for _, p := range want {
		for _, s := range h.Series {
			if s.Kind != p.Kind || s.Track != p.Track || s.Name != p.Name || s.Metric != p.Metric {
				continue
			}
			for _, v := range s.Values {
				if v.Run != 3 {
					continue
				}
				found++
				if v.Value != p.Value || (v.Whole != "") != p.IsWhole || p.IsWhole && v.Whole != fmt.Sprint(p.Whole) {
					t.Errorf("%s %s: %+v, want %+v", p.Name, p.Metric, v, p)
				}
			}
		}
	}
	if found != len(want) || len(want) == 0 {
		t.Errorf("found %d of the run's %d points", found, len(want))
	}
}

// framescope history check on a history of one run a commit: a zone 20%
// slower from commit 8 of 12 exits 1, naming commit c08 in its text, its
// JSON and its markdown; a flat history exits 0; a short one exits 3.
func TestHistoryCheck(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		commits int
		slowAt  int
		code    int
	}{{"step", 12, 8, exitRegressed}, {"flat", 12, -1, exitUnchanged}, {"short", 5, -1, exitInconclusive}} {
		t.Run(c.name, func(t *testing.T) {
			db := "sqlite:" + filepath.Join(dir, c.name+".db")
			for i := range c.commits {
				var slow map[string]float64
				if c.slowAt >= 0 && i >= c.slowAt {
					slow = map[string]float64{"z1": 1.2}
				}
				runs := runDir(t, dir, fmt.Sprintf("%s-%02d", c.name, i), uint64(100+i), 1, 0.01, slow)
				if code, _, errs := runCLI("history", "add", "-db", db, "-commit", fmt.Sprintf("c%02d", i), "-seq", fmt.Sprint(i), runs); code != 0 {
					t.Fatalf("add: %s", errs)
				}
			}
			md := filepath.Join(dir, c.name+".md")
			code, out, errs := runCLI("history", "check", "-db", db, "-testbed", "synthetic", "-md", md)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errs)
			}
			if c.code != exitRegressed {
				return
			}
			if !strings.Contains(out, "REGRESSED gpu:graphics queue 0.0/z1 p50: +") || !strings.Contains(out, "at commit c08 (seq 8)") {
				t.Errorf("the text does not name the step:\n%s", out)
			}
			_, js, _ := runCLI("history", "check", "-db", db, "-testbed", "synthetic", "-json")
			var r checkJSONOut
			if err := json.Unmarshal([]byte(js), &r); err != nil {
				t.Fatal(err)
			}
			if r.Verdict != "regressed" || len(r.Findings) == 0 || r.Findings[0].Commit != "c08" || !r.Findings[0].Regression {
				t.Errorf("JSON %+v", r)
			}
			b, err := os.ReadFile(md)
			if err != nil || !strings.Contains(string(b), "**regressed** | `gpu:graphics queue 0.0/z1` | `p50` |") || !strings.Contains(string(b), "`c08` (seq 8)") {
				t.Errorf("markdown (%v):\n%s", err, b)
			}
		})
	}
}

// framescope history show -html renders in headless Chromium: a plot of
// the series that stepped, both colours in the screenshot (the commits
// before the step and from it on), and a hostile zone name as text.
func TestHistoryHTMLInChromium(t *testing.T) {
	chromium := tool(t, "FRAMESCOPE_CHROMIUM", "chromium")
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "h.db")
	evil := `<script>document.title="pwned"</script><img src=x onerror="document.title='img'">`
	for i := range 12 {
		var slow map[string]float64
		if i >= 8 {
			slow = map[string]float64{"z3": 1.3}
		}
		runs := runDir(t, dir, fmt.Sprintf("c%02d", i), uint64(300+i), 1, 0.01, slow)
		p := filepath.Join(runs, "run00.pftrace")
		tr, err := loadTrace(p)
		if err != nil {
			t.Fatal(err)
		}
		tr.Names[len(tr.Names)-1] = evil // z3, the zone that steps
		os.Remove(p)
		writeFile(t, runs, "run00.pftrace", tr, formatPerfetto, false)
		if code, _, errs := runCLI("history", "add", "-db", db, "-commit", fmt.Sprintf("c%02d", i), "-seq", fmt.Sprint(i), runs); code != 0 {
			t.Fatal(errs)
		}
	}
	report := filepath.Join(dir, "history.html")
	if code, out, errs := runCLI("history", "show", "-db", db, "-testbed", "synthetic", "-html", report); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(html), "<script") {
		t.Fatalf("the page has a script")
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=900,900"}
	run := func(extra ...string) string {
		out, err := exec.Command(chromium, append(append(args, extra...), "file://"+report)...).Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", extra, err)
		}
		return string(out)
	}
	shot := filepath.Join(dir, "shot.png")
	run("--screenshot=" + shot)
	dom := run("--dump-dom")
	if !strings.Contains(dom, "<title>Framescope history</title>") || strings.Contains(dom, `<img src="x"`) {
		t.Errorf("a zone name ran as markup:\n%.600s", dom)
	}
	if !strings.Contains(dom, "&lt;script&gt;document.title") || strings.Count(dom, "<svg") != 1 || !strings.Contains(dom, ">c08<") {
		t.Errorf("want one plot, of the hostile zone's series, its step at c08:\n%.2000s", dom)
	}
	counts := colourCounts(t, shot)
	t.Logf("screenshot pixels %v", counts)
	if counts["base"] < 50 || counts["new"] < 20 {
		t.Errorf("the plot's colours are missing from the screenshot: %v", counts)
	}
}

// colourCounts counts a screenshot's pixels: of the two sides' colours
// (base, new), white, and the rest (other).
func colourCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			switch [3]uint32{r >> 8, g >> 8, bl >> 8} {
			case [3]uint32{0x1f, 0x5f, 0xbf}:
				counts["base"]++
			case [3]uint32{0xd8, 0x30, 0x1e}:
				counts["new"]++
			case [3]uint32{0xff, 0xff, 0xff}:
				counts["white"]++
			default:
				counts["other"]++
			}
		}
	}
	return counts
}

// A trace given twice to one history add (the file again, a copy of it,
// or a file of a directory given too) is refused, exit 2, naming both
// paths, and nothing is recorded: not "1 of 2 runs added (1 recorded
// before)", which reads as a retry.
func TestHistoryAddSameTraceTwice(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	runs := runDir(t, dir, "runs", 1, 2, 0.02, nil)
	one := writeFile(t, dir, "one.pftrace", workRun(99, baseWork), formatPerfetto, false)
	data, err := os.ReadFile(one)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "copy.pftrace")
	if err := os.WriteFile(copied, data, 0o644); err != nil {
		t.Fatal(err)
	}
	inDir, err := filepath.Glob(filepath.Join(runs, "*"))
	if err != nil || len(inDir) == 0 {
		t.Fatalf("runs: %v %v", inDir, err)
	}
	for what, paths := range map[string][]string{
		"a file twice":             {one, one},
		"a file and its copy":      {one, copied},
		"a directory and its file": {runs, inDir[0]},
	} {
		args := append([]string{"history", "add", "-db", "sqlite:" + db, "-commit", "a1", "-seq", "1", "-testbed", "synth"}, paths...)
		code, out, errs := runCLI(args...)
		if code != exitBadInput || !strings.Contains(errs, paths[1]) || !strings.Contains(errs, "same trace") {
			t.Errorf("%s: exit %d, want %d naming %s as the same trace\n%s%s", what, code, exitBadInput, paths[1], out, errs)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused add made %s: %v", db, err)
	}
}

// A -commit, -branch or -testbed given as white space alone (or empty)
// is refused, exit 2, naming the flag, and nothing is recorded: such a
// name would read as none in every report.
func TestHistoryAddBlankNames(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	runs := runDir(t, dir, "runs", 1, 1, 0.02, nil)
	for _, c := range []struct{ flag, value string }{
		{"commit", "   "}, {"commit", "\t"}, {"branch", " "}, {"branch", ""}, {"testbed", " \n "}, {"testbed", ""},
	} {
		args := map[string]string{"commit": "a1", "branch": "main", "testbed": "synth"}
		args[c.flag] = c.value
		code, out, errs := runCLI("history", "add", "-db", "sqlite:"+db, "-seq", "1", "-commit", args["commit"],
			"-branch", args["branch"], "-testbed", args["testbed"], runs)
		if code != exitBadInput || !strings.Contains(errs, "-"+c.flag+" is blank") {
			t.Errorf("-%s %q: exit %d, want %d saying -%s is blank\n%s%s", c.flag, c.value, code, exitBadInput, c.flag, out, errs)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused add made %s: %v", db, err)
	}
}

// Each history subcommand's help gives each flag's default once: the
// flag package adds "(default X)" to a usage string, which must not say
// it again.
func TestHistoryHelpDefaultsOnce(t *testing.T) {
	for _, sub := range []string{"add", "check", "show"} {
		code, out, errs := runCLI("history", sub, "-h")
		help := out + errs
		if code != exitBadInput || !strings.Contains(help, "-min-effect") && sub != "add" {
			t.Fatalf("%s -h: exit %d\n%s", sub, code, help)
		}
		// A flag's entry is its "  -name" line and the indented lines under it.
		for _, entry := range strings.Split(help, "\n  -")[1:] {
			if n := strings.Count(entry, "default"); n > 1 {
				t.Errorf("%s -h: -%s names its default %d times", sub, entry, n)
			}
		}
	}
}

// A zone whose name the history cannot hold (over 1,024 bytes, not
// UTF-8, a NUL) costs its own series, not the commit: add records the
// run's other zones, exit 0, and says on stderr and in its summary how
// many it left out and why. On SQLite and PostgreSQL.
func TestHistoryAddLeavesOutBadNames(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			db := "sqlite:" + filepath.Join(dir, "h.db")
			if store == "postgres" {
				db = pgtest.Start(t)
			}
			tr := synthRun(5, 0.01, nil)
			long := strings.Repeat("é", 600) // 1,200 bytes
			tr.Names[3], tr.Names[4], tr.Names[5] = long, "z\xff1", "z\x002"
			run := writeFile(t, dir, "r.pftrace", tr, formatPerfetto, false)
			code, out, errs := runCLI("history", "add", "-db", db, "-commit", "a1", "-seq", "1", "-testbed", "synth", run)
			if code != 0 || !strings.Contains(out, "1 of 1 runs added") || !strings.Contains(out, "3 zones not stored") {
				t.Fatalf("add: exit %d\n%s%s", code, out, errs)
			}
			for _, want := range []string{"r.pftrace: 3 zones not stored", "1 whose name is over the limit of 1024 bytes",
				"1 whose name is not UTF-8 text", `1 whose name holds a NUL (\x00)`} {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr does not say %q:\n%s", want, errs)
				}
			}
			code, out, errs = runCLI("history", "show", "-db", db, "-testbed", "synth", "-json")
			if code != 0 {
				t.Fatalf("show: exit %d %s", code, errs)
			}
			var h historyJSON
			if err := json.Unmarshal([]byte(out), &h); err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, s := range h.Series {
				if s.Kind != frameKind { // the frames' own series
					names[s.Name] = true
				}
			}
			if !names["z3"] || names[long] || len(names) != len(tr.Names)-1-3 { // not "", nor the three
				t.Errorf("stored zones %v, want all but the three", slices.Sorted(maps.Keys(names)))
			}
		})
	}
}

// history add's -seq has no default: its help names none (no sentinel
// "(default -1)"), and an add without it, or with a negative one, is
// refused, exit 2, saying so, nothing recorded.
func TestHistoryAddSeqRequired(t *testing.T) {
	_, out, errs := runCLI("history", "add", "-h")
	help := out + errs
	entry, _, _ := strings.Cut(help[strings.Index(help, "  -seq"):], "\n  -testbed")
	if !strings.Contains(entry, "-seq N") || strings.Contains(entry, "default") || strings.Contains(help, "-1") {
		t.Errorf("the help of -seq:\n%s", entry)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	runs := runDir(t, dir, "runs", 1, 1, 0.02, nil)
	for what, c := range map[string]struct {
		seq  []string
		says string
	}{
		"missing":      {nil, "-seq is missing"},
		"negative":     {[]string{"-seq", "-1"}, `bad sequence number "-1"`},
		"not a number": {[]string{"-seq", "x1"}, `bad sequence number "x1"`},
	} {
		args := append([]string{"history", "add", "-db", "sqlite:" + db, "-commit", "a1", "-testbed", "synth"}, c.seq...)
		code, out, errs := runCLI(append(args, runs)...)
		if code != exitBadInput || !strings.Contains(errs, c.says) {
			t.Errorf("-seq %s: exit %d, want %d saying %q\n%s%s", what, code, exitBadInput, c.says, out, errs)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused add made %s: %v", db, err)
	}
}
