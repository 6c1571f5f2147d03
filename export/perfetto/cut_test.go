package perfetto

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/framescope/framescope/timeline"
	"google.golang.org/protobuf/encoding/protowire"
)

// cutCase is a trace of several batches written by the Writer, with
// where each batch ends.
type cutCase struct {
	data    []byte
	ends    []int // ends[k]: the bytes of the first k+1 batches
	batches []*timeline.Trace
}

// writeCutCase writes late GPU results (batches reaching back, on two
// packet sequences) with drops and ledger counts that change every
// batch, flushing inside batches too.
func writeCutCase(t testing.TB) cutCase {
	var c cutCase
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{FlushBytes: 1 << 10})
	c.batches = lateBatches(4, 2)
	for i, b := range c.batches {
		b.Drops.Evicted = uint64(i + 1)
		b.Ledger.Zones.Issued, b.Ledger.Zones.Delivered = uint64(10*i+10), uint64(10*i+7)
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		c.ends = append(c.ends, buf.Len())
	}
	c.data = buf.Bytes()
	return c
}

// packetEnds lists where each top-level record of data ends.
func packetEnds(t testing.TB, data []byte) []int {
	var ends []int
	for off := 0; off < len(data); {
		_, _, n := protowire.ConsumeField(data[off:])
		if n < 0 {
			t.Fatalf("bad record at byte %d", off)
		}
		off += n
		ends = append(ends, off)
	}
	return ends
}

// lastAtOrBefore is the largest of ends (ascending) at most c, and how
// many are; 0, 0 when none is.
func lastAtOrBefore(ends []int, c int) (end, k int) {
	for k < len(ends) && ends[k] <= c {
		end = ends[k]
		k++
	}
	return end, k
}

// cutsOf are the cuts TestCutAtEveryByte reads, which every byte would
// make too slow (a quarter of a millisecond a read): where each packet
// ends and the next one's first two bytes (its tag, its length), every
// byte of each batch's last 64 (its books and its mark), and every 11th
// byte (inside packets).
func cutsOf(n int, pkts, batchEnds []int) []int {
	at := make([]bool, n+1)
	for i := 0; i <= n; i += 11 {
		at[i] = true
	}
	for _, p := range pkts {
		for d := 0; d <= 2; d++ {
			at[min(n, max(0, p+d))] = true
		}
	}
	for _, e := range batchEnds {
		for i := max(0, e-64); i <= min(n, e+2); i++ {
			at[i] = true
		}
	}
	var cuts []int
	for i, ok := range at {
		if ok {
			cuts = append(cuts, i)
		}
	}
	return cuts
}

// TestCutAtEveryByte cuts a trace of several batches at every byte that
// matters, as a writer killed mid-write or a full disk does: each cut reads back
// exactly what the trace up to its last whole batch before the cut reads
// back (never a partial batch, never a value that differs), with a
// CutError that says where the trace was cut and where what is read
// ends; a cut at a batch's end is a whole trace.
func TestCutAtEveryByte(t *testing.T) {
	c := writeCutCase(t)
	want := make([]*timeline.Trace, len(c.ends)+1)
	want[0], _ = Read(bytes.NewReader(nil))
	for k, end := range c.ends {
		tr, err := Read(bytes.NewReader(c.data[:end]))
		if err != nil {
			t.Fatalf("the first %d batches: %v", k+1, err)
		}
		if got, n := len(tr.Frames), framesIn(c.batches[:k+1]); got != n {
			t.Fatalf("the first %d batches read back %d frames, want %d", k+1, got, n)
		}
		want[k+1] = tr
	}
	pkts := packetEnds(t, c.data)
	declared := pkts[1] // the batches counter is described in the second packet
	cuts := cutsOf(len(c.data), pkts, c.ends)
	for _, cut := range cuts {
		got, err := Read(bytes.NewReader(c.data[:cut]))
		end, k := lastAtOrBefore(c.ends, cut)
		checkCut(t, cut, got, err, want[k], end, k, cut >= declared, pkts)
		if t.Failed() {
			t.Fatalf("%d batches end at %v, %d bytes in all", len(c.ends), c.ends, len(c.data))
		}
	}
	t.Logf("%d cuts of a trace of %d bytes, %d batches, %d packets", len(cuts), len(c.data), len(c.ends), len(pkts))
}

// checkCut checks what Read made of the first cut bytes of a trace: the
// trace want, the first k batches, which end at byte end.
func checkCut(t *testing.T, cut int, got *timeline.Trace, err error, want *timeline.Trace, end, k int, marked bool, pkts []int) {
	t.Helper()
	if got == nil {
		t.Errorf("cut at byte %d: no trace: %v", cut, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cut at byte %d: read back %d spans, %d frames, drops %+v; the first %d batches read back %d, %d, %+v",
			cut, len(got.Spans), len(got.Frames), got.Drops, k, len(want.Spans), len(want.Frames), want.Drops)
	}
	whole, _ := lastAtOrBefore(pkts, cut)
	var ce *CutError
	switch {
	case cut == end || (!marked && cut == whole):
		if err != nil {
			t.Errorf("cut at byte %d, the end of a batch: %v", cut, err)
		}
	case !errors.As(err, &ce) || !errors.Is(err, io.ErrUnexpectedEOF):
		t.Errorf("cut at byte %d: got error %v, want a CutError", cut, err)
	case marked && *ce != (CutError{Size: int64(cut), Read: int64(end), Batches: uint64(k), Marked: true, Frame: lastFrame(want)}):
		t.Errorf("cut at byte %d, after %d batches (%d bytes): %+v", cut, k, end, *ce)
	case !marked && *ce != (CutError{Size: int64(cut), Read: int64(whole)}):
		t.Errorf("cut at byte %d, before the trace says it marks its batches (packet end %d): %+v", cut, whole, *ce)
	}
}

func framesIn(bs []*timeline.Trace) int {
	n := 0
	for _, b := range bs {
		n += len(b.Frames)
	}
	return n
}

// TestCutUnmarkedTrace reads a trace written before the Writer marked its
// batches (testdata/unmarked.pftrace: three batches of one frame) whole,
// and cut (at cutsOf's bytes) up to its last whole packet, with a
// CutError saying so.
func TestCutUnmarkedTrace(t *testing.T) {
	data, err := os.ReadFile("testdata/unmarked.pftrace")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Read(bytes.NewReader(data))
	if err != nil || len(tr.Frames) != 3 || tr.Drops.Evicted != 3 || tr.Ledger.Zones.Issued != 120 {
		t.Fatalf("the whole trace: %v, %d frames, drops %+v", err, len(tr.Frames), tr.Drops)
	}
	pkts := packetEnds(t, data)
	for _, cut := range cutsOf(len(data), pkts, nil) {
		got, err := Read(bytes.NewReader(data[:cut]))
		whole, _ := lastAtOrBefore(pkts, cut)
		var ce *CutError
		switch {
		case got == nil:
			t.Fatalf("cut at byte %d: no trace: %v", cut, err)
		case cut == whole && err != nil && cut < len(data):
			t.Fatalf("cut at byte %d, a packet's end: %v", cut, err)
		case cut != whole && (!errors.As(err, &ce) || *ce != CutError{Size: int64(cut), Read: int64(whole), Frame: lastFrame(got)}):
			t.Fatalf("cut at byte %d, after the packet ending at %d: %v", cut, whole, err)
		case len(got.Frames) > len(tr.Frames) || len(got.Spans) > len(tr.Spans):
			t.Fatalf("cut at byte %d: more than the whole trace", cut)
		}
	}
}
