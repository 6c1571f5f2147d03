package perfetto

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/timeline"
)

// TestReadersAgreeOnWork draws slices with work args from seeds, each
// written both as Chrome JSON and as Perfetto annotations of the same
// keys and values (an integer as uint_value or int_value, a fraction as
// double_value, a string), and holds the two readers to one answer: both
// refuse, or both read the same work (issue 38: the Perfetto reader took
// what the Chrome reader refused, and invented counts). A failing seed
// prints itself.
func TestReadersAgreeOnWork(t *testing.T) {
	for seed := uint64(1); seed <= 3000; seed++ {
		slices := drawWorkSlices(seed)
		js, pb := chromeWorkSlices(slices), workSlices(slices...)
		ct, cerr := chrome.Read(strings.NewReader(js))
		pt, perr := readBytes(pb)
		switch {
		case (cerr == nil) != (perr == nil):
			t.Fatalf("seed %d: Chrome %v, Perfetto %v, for %+v", seed, cerr, perr, slices)
		case cerr != nil:
			continue
		}
		cw, pw := worksOf(ct), worksOf(pt)
		if !reflect.DeepEqual(cw, pw) {
			t.Fatalf("seed %d: Chrome read %+v, Perfetto %+v, for %+v", seed, cw, pw, slices)
		}
	}
}

// worksOf lists the work of a trace's spans in time order.
func worksOf(tr *timeline.Trace) []*timeline.Work {
	var out []*timeline.Work
	for _, s := range tr.Spans {
		if s.Name != 0 && tr.Name(s.Name) == "z" {
			out = append(out, s.Work)
		}
	}
	return out
}

// drawWorkSlices draws 1 to 3 slices of distinct work keys with values of
// every kind a format can carry, most of them sound.
func drawWorkSlices(seed uint64) [][]ann {
	rng := rand.New(rand.NewPCG(seed, 0x38))
	var out [][]ann
	for range 1 + rng.IntN(3) {
		var as []ann
		keys := rng.Perm(timeline.NumPipelineStats + 2)[:rng.IntN(4)]
		for _, k := range keys {
			var a ann
			switch {
			case k < timeline.NumPipelineStats:
				a.name = timeline.StatKey(k)
			case k == timeline.NumPipelineStats:
				a.name = timeline.KeyWorkMissing
			default:
				a.name = timeline.KeyWorkStats
			}
			switch r := rng.IntN(10); {
			case r < 5 && k < timeline.NumPipelineStats:
				a.u = []uint64{0, 7, 1 << 53, math.MaxUint64}[rng.IntN(4)]
			case r < 5 && k == timeline.NumPipelineStats:
				a.s, a.str = []string{"spent", "render_pass", "counted", "lost"}[rng.IntN(4)], true
			case r < 5:
				a.s, a.str = []string{"", "fragment_shader_invocations", "clipping_primitives+fragment_shader_invocations", "pixels"}[rng.IntN(4)], true
			case r == 5:
				a.i, a.isInt = -1-rng.Int64N(1000), true
			case r == 6:
				a.d, a.isDouble = float64(rng.IntN(100))+0.5, true
			case r == 7:
				a.s, a.str = strconv.Itoa(rng.IntN(9)), true
			default:
				a.u = uint64(rng.IntN(9))
			}
			as = append(as, a)
		}
		out = append(out, as)
	}
	return out
}

// chromeWorkSlices writes the slices as Chrome JSON: X events 10 µs long,
// each with its annotations as args, in workSlices' times.
func chromeWorkSlices(slices [][]ann) string {
	var b strings.Builder
	b.WriteString("[")
	for i, as := range slices {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":1,"name":"z","args":{`, 100+20*i)
		for j, a := range as {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.Quote(a.name) + ":")
			switch {
			case a.str:
				b.WriteString(strconv.Quote(a.s))
			case a.isInt:
				b.WriteString(strconv.FormatInt(a.i, 10))
			case a.isDouble:
				b.WriteString(strconv.FormatFloat(a.d, 'f', 1, 64))
			default:
				b.WriteString(strconv.FormatUint(a.u, 10))
			}
		}
		b.WriteString("}}")
	}
	b.WriteString("]")
	return b.String()
}
