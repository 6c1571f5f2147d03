package main

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/stats"
)

// runCLI runs the command line in-process and returns its exit code and
// output.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestDiffExitCodes(t *testing.T) {
	dir := t.TempDir()
	base := writeFile(t, dir, "base.json", synthTrace(1, 120, 4, nil), formatChrome, false)
	same := writeFile(t, dir, "same.pftrace", synthTrace(2, 120, 4, nil), formatPerfetto, false)
	slow := writeFile(t, dir, "slow.json.gz", synthTrace(3, 120, 4, map[string]float64{"z2": 1.10}), formatChrome, true)
	garbage := textFile(t, dir, "garbage.json", "{not json")
	numbers := textFile(t, dir, "numbers.json", "[1, 2, 3]")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"no change", []string{"diff", base, same}, 0, []string{"0 regressed"}, ""},
		{"10% slower", []string{"diff", base, slow}, 1, []string{"z2", "REGRESSED", "1 regressed"}, ""},
		{"flags after args", []string{"diff", base, slow, "--threshold", "15%"}, 0, []string{"0 regressed"}, ""},
		{"markdown", []string{"diff", "--markdown", base, slow}, 1, []string{"| gpu | z2 |", "**REGRESSED**", ":x:"}, ""},
		{"json", []string{"diff", "--json", base, slow}, 1, []string{`"zone": "z2"`, `"regressed": true`, `"regressions": 1`}, ""},
		{"json and markdown", []string{"diff", "--json", "--markdown", base, slow}, 2, nil, "exclude"},
		{"budget ok", []string{"diff", "--budget", "z0=1ms", base, same}, 0, nil, ""},
		{"budget exceeded", []string{"diff", "--budget", "gpu:z3=500us", base, same}, 1, []string{"OVER BUDGET"}, ""},
		{"budget unknown zone", []string{"diff", "--budget", "nope=1ms", base, same}, 2, nil, "nope"},
		{"bad budget", []string{"diff", "--budget", "z0=fast", base, same}, 2, nil, "bad duration"},
		{"bad threshold", []string{"diff", "--threshold", "x", base, same}, 2, nil, "bad fraction"},
		{"bad alpha", []string{"diff", "--alpha", "2", base, same}, 2, nil, "alpha"},
		{"one arg", []string{"diff", base}, 2, nil, "usage"},
		{"missing file", []string{"diff", base, dir + "/none.json"}, 2, nil, "no such file"},
		{"garbage", []string{"diff", garbage, base}, 2, nil, "garbage.json"},
		{"events not objects", []string{"diff", numbers, base}, 2, nil, "numbers.json: chrome trace: chrome: event 0: a JSON number, not an object"},
		{"directory", []string{"diff", dir, base}, 2, nil, "directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if !strings.Contains(errs, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, errs)
			}
		})
	}
}

// TestDiffFindsShift checks that a 10% slower zone is flagged, and only it.
func TestDiffFindsShift(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		base := synthTrace(seed*2, 60, 5, nil)
		cur := synthTrace(seed*2+1, 60, 5, map[string]float64{"z3": 1.10})
		r := compare(base, cur, diffOptions{threshold: 0.05, alpha: 0.01})
		for _, d := range r.zones {
			if want := d.zone == (zone{"gpu", "z3"}); d.regressed != want {
				t.Errorf("seed %d: %v regressed=%v (change %.3f, p %.2g)", seed, d.zone, d.regressed, d.change, d.p)
			}
		}
	}
}

// TestDiffFalseAlarms runs diff on pairs of traces of pure noise (same
// distributions, different seeds). Each of the Z = 6 zones (5 GPU, 1 CPU,
// plus the nested CPU zone: 7) is tested at alpha, so a run has a false
// alarm with probability at most 1-(1-alpha)^7 (the threshold only lowers
// it). Over 200 runs the count of runs with any false alarm must stay
// under the binomial upper limit of that rate at the 0.1% level. With
// threshold 0 the rank test alone is on trial, and each zone must also
// keep its own rate within alpha: its count of false alarms over the runs
// must stay under the binomial upper limit of alpha, at a level of 0.1%
// shared among the zones (0.1%/7 each), so that a zone whose test is too
// eager fails even when the family rate hides it.
func TestDiffFalseAlarms(t *testing.T) {
	const runs, zones, alpha, level = 200, 7, 0.01, 0.001
	perRun := 1 - pow(1-alpha, zones)
	limit := stats.BinomialUpper(runs, perRun, level)
	zoneLimit := stats.BinomialUpper(runs, alpha, level/zones)
	for _, threshold := range []float64{0, 0.05} {
		alarms := 0
		perZone := map[zone]int{}
		for seed := uint64(0); seed < runs; seed++ {
			base := synthTrace(1000+seed*2, 40, 5, nil)
			cur := synthTrace(1001+seed*2, 40, 5, nil)
			r := compare(base, cur, diffOptions{threshold: threshold, alpha: alpha})
			if len(r.zones) != zones {
				t.Fatalf("%d zones, want %d", len(r.zones), zones)
			}
			if r.regressions > 0 {
				alarms++
			}
			for _, d := range r.zones {
				n := perZone[d.zone]
				if d.regressed {
					n++
				}
				perZone[d.zone] = n
			}
		}
		t.Logf("threshold %v: %d of %d noise runs raised an alarm (limit %d, expected <= %.1f)", threshold, alarms, runs, limit, perRun*runs)
		if alarms > limit {
			t.Errorf("threshold %v: %d of %d noise runs raised a false alarm; limit %d", threshold, alarms, runs, limit)
		}
		if threshold != 0 {
			continue
		}
		if len(perZone) != zones {
			t.Fatalf("%d zones tested, want %d", len(perZone), zones)
		}
		for _, z := range slices.SortedFunc(maps.Keys(perZone), func(a, b zone) int { return strings.Compare(a.String(), b.String()) }) {
			n := perZone[z]
			t.Logf("threshold 0: zone %v: %d false alarms in %d runs (limit %d, expected <= %.1f)", z, n, runs, zoneLimit, alpha*runs)
			if n > zoneLimit {
				t.Errorf("threshold 0: zone %v raised %d false alarms in %d noise runs; at alpha %v the limit is %d", z, n, runs, alpha, zoneLimit)
			}
		}
	}
}

// FuzzDiffFlags checks the parsers of --threshold and --budget: no input
// panics, and what they accept is usable.
func FuzzDiffFlags(f *testing.F) {
	for _, s := range []string{"5%", "0.05", "1e-3", "-1", "NaN", "inf%", "z=1ms", "gpu:a=b=2us", "=1ms", "z=-1s", "z="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var th float64
		if err := (percentValue{&th}).Set(s); err == nil && (th < 0 || th != th || th > 1e308) {
			t.Fatalf("--threshold %q gave %v", s, th)
		}
		var bs []budget
		if err := (budgetValue{&bs}).Set(s); err == nil {
			if len(bs) != 1 || bs[0].max <= 0 || bs[0].zone == "" {
				t.Fatalf("--budget %q gave %+v", s, bs)
			}
		}
	})
}

func pow(x float64, n int) float64 {
	r := 1.0
	for range n {
		r *= x
	}
	return r
}
