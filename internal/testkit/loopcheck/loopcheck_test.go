package loopcheck

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tpcheck"
)

var (
	flagSeeds      = flag.Int("loops.seeds", 0, "how many seeds to run from -loops.first (0: the fixed set make test runs)")
	flagFirst      = flag.Uint64("loops.first", 1, "the first seed of -loops.seeds")
	flagSeed       = flag.Uint64("loops.seed", 0, "run this seed alone")
	flagDevice     = flag.String("loops.device", "", "a substring of the Vulkan device's name")
	flagTP         = flag.Bool("loops.tp", true, "load each trace into Perfetto's trace processor")
	flagValidation = flag.Bool("loops.validation", true, "the Khronos validation layer, which must say nothing")
	flagLog        = flag.Bool("loops.log", false, "log every seed's loop and result")
)

// fixedSeeds is what make test runs: 9, 20, 61 and 110 reach together
// every feature and every way a zone ends that lavapipe allows (seeds
// 1-300 scanned, a greedy cover), and the others spread the loops.
var fixedSeeds = func() []uint64 {
	s := []uint64{9, 20, 61, 110}
	for i := uint64(1); len(s) < 50; i++ {
		if i != 9 && i != 20 && i != 61 && i != 110 {
			s = append(s, i)
		}
	}
	return s
}()

// TestLoops runs random render loops through the public API and checks
// each (see the package doc). A failing seed prints itself, and
// go test ./internal/testkit/loopcheck -run TestLoops -loops.seed=N replays it.
func TestLoops(t *testing.T) {
	seeds := fixedSeeds
	switch {
	case *flagSeed != 0:
		seeds = []uint64{*flagSeed}
	case *flagSeeds > 0:
		seeds = nil
		for i := range uint64(*flagSeeds) {
			seeds = append(seeds, *flagFirst+i)
		}
	}
	o := Options{Dir: t.TempDir(), Device: *flagDevice, Validation: *flagValidation}
	if *flagTP {
		o.TraceProcessor = func(path string) ([]string, int, int) { return traceProcessor(t, path) }
		// The trace processor runs as long as the test binary: started
		// now, its goroutines are there before any run's are counted.
		empty := filepath.Join(o.Dir, "empty.perfetto-trace")
		if err := os.WriteFile(empty, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		tpcheck.Load(t, empty)
	}
	var failed, ran, queues int
	var runAgain, unseen uint64 // zones run again by command buffers submitted again, and of them not seen
	reached := Reached{}
	for _, seed := range seeds {
		res, err := Check(seed, o)
		if err != nil {
			if os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") != "1" {
				t.Skipf("no Vulkan device: %v", err)
			}
			t.Fatal(err)
		}
		ran++
		runAgain += res.RunAgain
		unseen += res.RunAgain - min(res.RunAgain, res.Drops.RunAgain)
		reached.Add(res.Reach)
		queues = res.Queues
		if *flagLog || len(res.Problems) > 0 {
			t.Logf("%s\n  on %s: %d zones asked, %d slices, %d flows, drops %+v, %d validation messages, %d zones run again (%d unseen)",
				res.Loop, res.Device, res.Zones, res.Slices, res.Flows, res.Drops, res.Messages, res.RunAgain, res.RunAgain-min(res.RunAgain, res.Drops.RunAgain))
		}
		if len(res.Problems) > 0 {
			failed++
			t.Errorf("%s\n  %s\n  replay: go test ./internal/testkit/loopcheck -run TestLoops -loops.seed=%d", res.Loop, strings.Join(res.Problems, "\n  "), seed)
			if failed >= 5 {
				t.Fatalf("%d of %d seeds failed; stopping", failed, ran)
			}
		}
	}
	t.Logf("%d seeds ran, %d failed; %d zones run again without Record, %d of them unseen; reached: %s", ran, failed, runAgain, unseen, reached)
	if *flagSeed == 0 && *flagSeeds == 0 {
		// The fixed set must reach everything the device allows.
		if missed := reached.Missed("", queues); len(missed) > 0 {
			t.Errorf("the fixed seeds reach none of: %v", missed)
		}
	}
}

// traceProcessor loads a trace into Perfetto's trace processor.
func traceProcessor(t *testing.T, path string) (problems []string, gpu, flows int) {
	s := tpcheck.Load(t, path)
	for _, r := range s.MustQuery(tpcheck.StatsSQL) {
		problems = append(problems, fmt.Sprintf("%v[%v] %v = %v", r["name"], r["idx"], r["severity"], r["value"]))
	}
	gpu = int(s.MustQuery(`select count(*) as n from slice where category = 'gpu'`)[0]["n"].(int64))
	flows = int(s.MustQuery(`select count(*) as n from flow`)[0]["n"].(int64))
	return problems, gpu, flows
}
