package tpcheck_test

import (
	"fmt"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tpcheck"
)

// How a test checks a trace it wrote. (Compiled, not run: it needs a
// test's own *testing.T.)
func ExampleCheck() {
	var t *testing.T                                // the test's own
	s := tpcheck.Check(t, "testdata/trace.pftrace") // fails t on import errors or data loss
	rows := s.MustQuery("select name, ts, dur, depth from slice order by ts")
	for _, r := range rows {
		fmt.Println(r["name"], r["ts"].(int64), r["dur"].(int64), r["depth"].(int64))
	}
}
