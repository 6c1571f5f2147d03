package chrome

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// TestReadLongWhitespace: whitespace between events costs neither memory
// nor time in proportion to its square: encoding/json's Decoder keeps and
// rescans the whitespace it has buffered, so 2 GiB of spaces once ran
// past a minute; the reader now passes one byte of each run.
func TestReadLongWhitespace(t *testing.T) {
	n := 64 << 20
	if testing.Short() {
		n = 16 << 20
	}
	in := io.MultiReader(strings.NewReader(`[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"a"},`),
		io.LimitReader(spaces{}, int64(n)), strings.NewReader(`{"ph":"X","pid":1,"tid":1,"ts":3,"dur":1,"name":"b"}]`))
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	tr, err := Read(in)
	runtime.ReadMemStats(&b)
	if err != nil || len(tr.Spans) != 2 {
		t.Fatalf("%v, %v", tr, err)
	}
	if got := b.TotalAlloc - a.TotalAlloc; got > 4<<20 {
		t.Errorf("%d MB of spaces: %d MB allocated, want at most 4", n>>20, got>>20)
	}
}

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestReadObjectTooLarge: an event longer than maxObjectBytes fails with
// an error naming the limit, before it is buffered whole; whitespace in
// strings is kept.
func TestReadObjectTooLarge(t *testing.T) {
	defer func(l int64) { objectLimit = l }(objectLimit)
	objectLimit = 1 << 20 // the same code, at a lower bound
	in := io.MultiReader(strings.NewReader(`[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"`),
		io.LimitReader(spaces{}, objectLimit+1), strings.NewReader(`"}]`))
	_, err := Read(in)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "limit on one object") {
		t.Errorf("got %v, want an error naming the limit on one object", err)
	}
	tr, err := Read(strings.NewReader("[ {\"ph\":\"X\",  \"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"a  \\\"  b\\\\\"}\n\n ]"))
	if err != nil || tr.Name(tr.Spans[0].Name) != `a  "  b\` {
		t.Errorf("%v, %v", tr, err)
	}
}
