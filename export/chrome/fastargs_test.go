package chrome

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

var (
	fastArgsSeeds = flag.Int("fastargs.seeds", 20000, "TestFastArgs: how many seeds")
	fastArgsSeed  = flag.Uint64("fastargs.seed", 0, "TestFastArgs: replay this seed only")
)

// TestFastArgs draws args objects from seeds (the keys the reader reads,
// in other cases and with escapes, others; values of every JSON type,
// integers at the ends of their ranges, nested values, whitespace) and
// holds the hand reader to encoding/json's result: the same error or none,
// and the same fields. It also checks that the hand reader took the
// writer's own shape, so that the comparison is not all fallbacks.
func TestFastArgs(t *testing.T) {
	first, last := uint64(1), uint64(*fastArgsSeeds)
	if *fastArgsSeed != 0 {
		first, last = *fastArgsSeed, *fastArgsSeed
	}
	took := 0
	for seed := first; seed <= last; seed++ {
		b := drawArgs(seed)
		var want sliceArgs
		wantErr := json.Unmarshal(b, &want)
		var got, fast sliceArgs
		gotErr := got.decode(b)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("seed %d: %s: error %v, encoding/json %v (-fastargs.seed=%d replays it)", seed, b, gotErr, wantErr, seed)
		}
		if !reflect.DeepEqual(norm(got), norm(want)) {
			t.Fatalf("seed %d: %s: read\n%+v\nencoding/json\n%+v (-fastargs.seed=%d replays it)", seed, b, norm(got), norm(want), seed)
		}
		fast.reset()
		if fast.fast(b) {
			took++
		}
	}
	if *fastArgsSeed == 0 && took < int(last)/4 {
		t.Errorf("the hand reader took %d of %d args objects: the comparison is mostly fallbacks", took, last)
	}
	var a sliceArgs
	if w := `{"frame":7,"queue":"q 0.0 (graphics)","err_ns":100,"input_assembly_vertices":18446744073709551615,"work_missing":"spent","work_stats":"clipping_primitives"}`; !a.fast([]byte(w)) {
		t.Errorf("the hand reader refused the writer's shape %s", w)
	}
}

// norm is a's fields with raw buffers of unset args left out.
func norm(a sliceArgs) sliceArgs {
	stats := a.stats()
	for _, r := range append(stats[:], &a.WorkMissing, &a.WorkStats) {
		if !r.set || len(r.raw) == 0 {
			r.raw = nil
		}
	}
	return a
}

// drawArgs draws one args object.
func drawArgs(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0xa565))
	keys := append([]string{"queue", "name", "Frame", "ERR_NS", `fr\u0061me`, "fragment_Shader_invocations", "work_missinG", "ß"}, foldKeys...)
	values := []string{`0`, `7`, `4294967295`, `4294967296`, `18446744073709551615`, `18446744073709551616`,
		`-1`, `-0`, `1.5`, `1e3`, `1E3`, `0.0`, `null`, `true`, `false`, `""`, `"spent"`, `"counted"`,
		`"clipping_primitives+fragment_shader_invocations"`, `"a\"b"`, `"\u00e9\\"`, `"ü"`, `{}`, `{"a":[1,{"b":null}]}`,
		`[]`, `[1,"x",null]`, `"7"`}
	space := func() string { return []string{"", "", "", " ", "\n\t ", "\r\n"}[rng.IntN(6)] }
	var sb strings.Builder
	sb.WriteString(space() + "{" + space())
	for i := range rng.IntN(6) {
		if i > 0 {
			sb.WriteString(space() + "," + space())
		}
		key := keys[rng.IntN(len(keys))]
		if rng.IntN(3) == 0 { // frame or err_ns, often twice
			key = foldKeys[rng.IntN(2)]
		}
		sb.WriteString(`"` + key + `"` + space() + ":" + space() + values[rng.IntN(len(values))])
	}
	sb.WriteString(space() + "}" + space())
	return []byte(sb.String())
}
