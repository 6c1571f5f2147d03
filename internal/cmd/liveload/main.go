// Command liveload measures what the live view costs a running
// application: it runs the demo (examples/triangle -frames 0 -http) in
// alternating runs, without viewers and with -viewers clients polling the
// page's JSON twice a second (and fetching the page every tenth time) plus
// -captures clients taking trace?seconds=2 and gpu?seconds=2 captures back
// to back, for -seconds each, and compares the demo's CPU and GPU frame
// time p95 and its heap (sampled every 250 ms) between the two. Every
// answer is counted by status: 200, and 429 when a client is over the
// handler's limits, are expected; anything else is an error. Each
// capture is read back, and what it counted as lost is summed.
//
//	go build -o /tmp/ ./examples/triangle ./internal/cmd/liveload
//	/tmp/liveload -demo /tmp/triangle -runs 3 -seconds 10
//	/tmp/liveload -pool out1.txt out2.txt   # the runs of earlier outputs, pooled
//
// The unit of replication is the run: for each figure it prints the
// median of each side, their ratio, and the Hodges-Lehmann estimate of
// the ratio (loaded over not, on the log scale) with its 95% interval
// from the Mann-Whitney test, and that test's one-sided p-value of
// "loaded is larger".
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/pprof/profile"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/stats"
	"github.com/framescope/framescope/timeline"
)

// runText is the line printed for run i, which readRuns reads back.
func runText(i int, r result) string {
	return fmt.Sprintf("run %d loaded=%v frames=%d cpu_p50_ms=%.4f cpu_p95_ms=%.4f gpu_p95_ms=%.4f heap_max_mb=%.1f heap_mean_mb=%.1f live_max_mb=%.1f live_mean_mb=%.1f alloc_mb_s=%.1f gcs=%.0f answers=%v errors=%d traces=%d spans=%d lost=%d profiles=%d profiles_with_drops=%d unreadable=%d",
		i, r.loaded, r.sum.Frames, r.sum.FrameCPU.P50, r.sum.FrameCPU.P95, r.sum.FrameGPU.P95, r.sum.HeapMaxMB, r.sum.HeapMeanMB,
		r.sum.HeapLiveMaxMB, r.sum.HeapLiveMeanMB, r.sum.AllocMBPerS, r.sum.GCCycles, r.codes, r.errs,
		r.traces, r.spans, r.lost, r.profiles, r.lostProfiles, r.bad)
}

// runLine matches runText's lines.
var runLine = regexp.MustCompile(`^run \d+ loaded=(true|false) frames=(\d+) cpu_p50_ms=(\S+) cpu_p95_ms=(\S+) gpu_p95_ms=(\S+) ` +
	`heap_max_mb=(\S+) heap_mean_mb=(\S+) live_max_mb=(\S+) live_mean_mb=(\S+) alloc_mb_s=(\S+) gcs=(\S+) ` +
	`answers=map\[([^\]]*)\] errors=(\d+) traces=(\d+) spans=(\d+) lost=(\d+) profiles=(\d+) profiles_with_drops=(\d+) unreadable=(\d+)$`)

// readRuns reads the runs of earlier outputs of liveload.
func readRuns(files []string) ([]result, error) {
	var all []result
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			m := runLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			f := make([]float64, len(m))
			for i := 2; i < len(m); i++ {
				if i != 12 {
					f[i], _ = strconv.ParseFloat(m[i], 64)
				}
			}
			r := result{loaded: m[1] == "true", codes: map[int]int{}}
			r.sum.Frames = int(f[2])
			r.sum.FrameCPU.P50, r.sum.FrameCPU.P95, r.sum.FrameGPU.P95 = f[3], f[4], f[5]
			r.sum.HeapMaxMB, r.sum.HeapMeanMB, r.sum.HeapLiveMaxMB, r.sum.HeapLiveMeanMB = f[6], f[7], f[8], f[9]
			r.sum.AllocMBPerS, r.sum.GCCycles = f[10], f[11]
			for _, kv := range strings.Fields(m[12]) {
				k, v, _ := strings.Cut(kv, ":")
				code, _ := strconv.Atoi(k)
				n, _ := strconv.Atoi(v)
				r.codes[code] = n
			}
			r.errs, r.traces, r.spans = int(f[13]), int(f[14]), int(f[15])
			r.lost, r.profiles, r.lostProfiles, r.bad = uint64(f[16]), int(f[17]), int(f[18]), int(f[19])
			all = append(all, r)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no runs in %v", files)
	}
	return all, nil
}

// tail keeps the last 4 MiB written to it.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - 4<<20; over > 0 {
		t.b = t.b[:copy(t.b, t.b[over:])]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// ratio estimates how many times larger y is than x: the Hodges-Lehmann
// shift of log y against log x, as a ratio, with its 95% interval (the
// order statistics of the pairwise differences that the Mann-Whitney
// test's critical value names, from its normal approximation), and the
// test's one-sided p-value of "y is larger". Values of 0 or less are
// left out; NaN when a side has none.
func ratio(x, y []float64) (hl, lo, hi, p float64) {
	logs := func(v []float64) []float64 {
		var out []float64
		for _, a := range v {
			if a > 0 {
				out = append(out, math.Log(a))
			}
		}
		return out
	}
	lx, ly := logs(x), logs(y)
	if len(lx) == 0 || len(ly) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	var d []float64
	for _, b := range ly {
		for _, a := range lx {
			d = append(d, b-a)
		}
	}
	slices.Sort(d)
	n1, n2 := float64(len(lx)), float64(len(ly))
	k := int(math.Floor(n1*n2/2 - 1.96*math.Sqrt(n1*n2*(n1+n2+1)/12)))
	k = max(0, min(k, len(d)-1))
	t, err := stats.MannWhitney(x, y)
	p = t.P
	if err != nil {
		p = math.NaN()
	}
	return math.Exp(stats.HodgesLehmann(lx, ly)), math.Exp(d[k]), math.Exp(d[len(d)-1-k]), p
}

type summary struct {
	Frames   int `json:"frames"`
	FrameCPU struct {
		P50 float64 `json:"p50"`
		P95 float64 `json:"p95"`
	} `json:"frame_cpu_ms"`
	FrameGPU struct {
		P95 float64 `json:"p95"`
	} `json:"frame_gpu_ms"`
	HeapMaxMB      float64 `json:"heap_max_mb"`
	HeapMeanMB     float64 `json:"heap_mean_mb"`
	HeapLiveMaxMB  float64 `json:"heap_live_max_mb"`
	HeapLiveMeanMB float64 `json:"heap_live_mean_mb"`
	AllocMBPerS    float64 `json:"alloc_mb_per_s"`
	GCCycles       float64 `json:"gc_cycles"`
}

type result struct {
	loaded bool
	sum    summary
	codes  map[int]int
	errs   int
	// What the captures held: traces and profiles read back, their spans,
	// and what they counted as lost (Drops.Total of each trace, and the
	// profiles whose comments name drops).
	traces, profiles, spans int
	lost                    uint64
	drops                   timeline.Drops // of the traces, by cause
	lostProfiles            int
	bad                     int // captures that did not read back
	// The view's own counts at the end: spans it copied too late, spans
	// of batches captures had no room for.
	missed, capLost uint64
}

func main() {
	demo := flag.String("demo", "triangle", "the demo binary")
	args := flag.String("args", "-warmup 300", "more flags for the demo")
	runs := flag.Int("runs", 3, "pairs of runs (one without viewers, one with)")
	seconds := flag.Float64("seconds", 10, "length of a run after its warm-up")
	viewers := flag.Int("viewers", 50, "concurrent viewers in a loaded run")
	captures := flag.Int("captures", 10, "concurrent capture clients in a loaded run")
	pool := flag.Bool("pool", false, "run nothing: pool the runs of earlier outputs, the files named after the flags")
	flag.Parse()
	if *pool {
		all, err := readRuns(flag.Args())
		if err != nil {
			fmt.Fprintln(os.Stderr, "liveload:", err)
			os.Exit(1)
		}
		report(all)
		return
	}
	if *runs < 1 || *runs > 20 || *seconds <= 0 || *seconds > 120 || *viewers < 0 || *viewers > 500 || *captures < 0 || *captures > 100 {
		fmt.Fprintln(os.Stderr, "liveload: -runs 1..20, -seconds 0..120, -viewers 0..500, -captures 0..100")
		os.Exit(2)
	}
	var all []result
	for i := 0; i < 2**runs; i++ {
		loaded := i%2 == 1
		r, err := run(*demo, strings.Fields(*args), time.Duration(*seconds*float64(time.Second)), loaded, *viewers, *captures)
		if err != nil {
			fmt.Fprintln(os.Stderr, "liveload:", err)
			os.Exit(1)
		}
		fmt.Println(runText(i+1, r))
		if r.lost > 0 || r.missed > 0 || r.capLost > 0 {
			fmt.Printf("run %d view missed %d, capture queues full %d; lost by cause:", i+1, r.missed, r.capLost)
			for c := range books.NumCauses {
				if n := *books.Count(&r.drops, c); n > 0 {
					fmt.Printf(" %s %d", c, n)
				}
			}
			fmt.Println()
		}
		all = append(all, r)
	}
	report(all)
}

// report prints, for each figure, the two sides and their ratio, and the
// requests and captures that went wrong.
func report(all []result) {
	side := func(loaded bool, f func(summary) float64) []float64 {
		var v []float64
		for _, r := range all {
			if r.loaded == loaded {
				v = append(v, f(r.sum))
			}
		}
		return v
	}
	bad, lost := 0, uint64(0)
	for _, r := range all {
		bad += r.errs + r.bad
		lost += r.lost + uint64(r.lostProfiles)
		for c, n := range r.codes {
			if c != 200 && c != 429 {
				bad += n
			}
		}
	}
	fmt.Printf("%-19s %11s %11s %8s %8s %17s %8s\n", "figure", "no viewers", "loaded", "ratio", "HL", "95% interval", "p")
	for _, m := range []struct {
		name string
		f    func(summary) float64
	}{
		{"frame CPU p50 ms", func(s summary) float64 { return s.FrameCPU.P50 }},
		{"frame CPU p95 ms", func(s summary) float64 { return s.FrameCPU.P95 }},
		{"frame GPU p95 ms", func(s summary) float64 { return s.FrameGPU.P95 }},
		{"heap max MiB", func(s summary) float64 { return s.HeapMaxMB }},
		{"heap mean MiB", func(s summary) float64 { return s.HeapMeanMB }},
		{"live heap max MiB", func(s summary) float64 { return s.HeapLiveMaxMB }},
		{"live heap mean MiB", func(s summary) float64 { return s.HeapLiveMeanMB }},
		{"alloc MiB/s", func(s summary) float64 { return s.AllocMBPerS }},
		{"GC cycles", func(s summary) float64 { return s.GCCycles }},
	} {
		x, y := side(false, m.f), side(true, m.f)
		a, b := stats.MedianFloat(x), stats.MedianFloat(y)
		hl, lo, hi, p := ratio(x, y)
		fmt.Printf("%-19s %11.4f %11.4f %8.3f %8.3f   [%6.3f, %6.3f] %8.4f\n", m.name, a, b, b/a, hl, lo, hi, p)
	}
	fmt.Printf("unexpected answers, request errors and unreadable captures: %d\n", bad)
	fmt.Printf("spans the captures counted as lost, and profiles with drops: %d\n", lost)
}

// run runs the demo once, loaded or not, and returns its summary and the
// answers its clients got.
func run(demo string, args []string, d time.Duration, loaded bool, viewers, captures int) (result, error) {
	r := result{loaded: loaded, codes: map[int]int{}}
	out, err := os.MkdirTemp("", "liveload")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(out)
	cmd := exec.Command(demo, append([]string{"-frames", "0", "-http", "127.0.0.1:0", "-json", "-out", out}, args...)...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return r, err
	}
	if err := cmd.Start(); err != nil {
		return r, err
	}
	sc := bufio.NewScanner(stderr)
	var base string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "live view: "); ok {
			base = u
			break
		}
	}
	var errTail tail // the demo's stderr, for a goroutine dump if it hangs
	copied := make(chan struct{})
	go func() { io.Copy(&errTail, stderr); close(copied) }()
	if base == "" {
		cmd.Process.Kill()
		cmd.Wait()
		return r, fmt.Errorf("the demo named no live view address")
	}
	time.Sleep(2 * time.Second) // the warm-up frames
	ctx, cancel := context.WithTimeout(context.Background(), d)
	var mu sync.Mutex
	var wg sync.WaitGroup
	count := func(code int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if ctx.Err() == nil {
				r.errs++
			}
			return
		}
		r.codes[code]++
	}
	// check reads a capture back and counts what it holds.
	check := func(u string, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(u, "/gpu?") {
			p, err := profile.Parse(bytes.NewReader(body))
			if err != nil {
				r.bad++
				return
			}
			r.profiles++
			for _, c := range p.Comments {
				if strings.HasPrefix(c, "framescope dropped") {
					r.lostProfiles++
				}
			}
			return
		}
		t, err := perfetto.Read(bytes.NewReader(body))
		if err != nil {
			r.bad++
			return
		}
		r.traces++
		r.spans += len(t.Spans)
		r.lost += t.Drops.Total()
		r.drops = books.Add(r.drops, t.Drops)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	get := func(u string) {
		req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
		resp, err := client.Do(req)
		if err != nil {
			count(0, err)
			return
		}
		capture := strings.Contains(u, "seconds=")
		var body []byte
		if capture && resp.StatusCode == 200 {
			body, err = io.ReadAll(resp.Body)
		} else {
			_, err = io.Copy(io.Discard, resp.Body)
		}
		resp.Body.Close()
		count(resp.StatusCode, err)
		if err == nil && body != nil {
			check(u, body)
		}
	}
	if loaded {
		for v := 0; v < viewers; v++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ctx.Err() == nil; i++ {
					if i%10 == 0 {
						get(base)
					}
					get(base + "json")
					select {
					case <-ctx.Done():
					case <-time.After(500 * time.Millisecond):
					}
				}
			}()
		}
		for c := 0; c < captures; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ctx.Err() == nil; i++ {
					if (i+c)%2 == 0 {
						get(base + "trace?seconds=2")
					} else {
						get(base + "gpu?seconds=2")
					}
					if ctx.Err() == nil {
						time.Sleep(100 * time.Millisecond) // after a 429, not at once again
					}
				}
			}()
		}
	}
	<-ctx.Done()
	cancel()
	wg.Wait()
	if loaded {
		// What the view says it lost itself: spans copied too late, and
		// batches captures had no room for.
		if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(base + "json"); err == nil {
			var v struct {
				Missed      uint64 `json:"missed"`
				CaptureLost uint64 `json:"capture_lost"`
			}
			json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			r.missed, r.capLost = v.Missed, v.CaptureLost
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			return r, fmt.Errorf("the demo: %v", err)
		}
	case <-time.After(60 * time.Second):
		// Hung: its goroutines, as the Go runtime dumps them on SIGQUIT.
		cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		<-copied
		return r, fmt.Errorf("the demo did not exit within 60 s of SIGINT; its stderr ends:\n%s", errTail.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &r.sum); err != nil {
		return r, fmt.Errorf("the demo's summary: %v: %s", err, stdout.String())
	}
	return r, nil
}
