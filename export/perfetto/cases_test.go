package perfetto

import (
	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

// A conformance case: batches written, in order, by one Writer.
type tcase struct {
	name    string
	batches []*timeline.Trace
}

// cases are the cases of package tracecases, shared with the Chrome JSON
// writer's tests.
func cases() []tcase {
	var out []tcase
	for _, c := range tracecases.All() {
		out = append(out, tcase{c.Name, c.Batches})
	}
	return out
}

const t0 = tracecases.T0

var names = tracecases.Names

var sp = tracecases.Span

var lateBatches = tracecases.LateBatches
