package chrome

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// traceFromBytes builds a batch from fuzz input: spans with any times,
// depths and tracks (some undefined) and any work (counts up to 2^64-1,
// any reason, bits past the last statistic), flows between any of them,
// samples with any values, names with any bytes, frames at any times
// (before the clock's zero, ending before they begin, an ID twice, ID 0).
// Nothing in it is promised to be well formed.
func traceFromBytes(data []byte) *timeline.Trace {
	t := &timeline.Trace{
		Names: []string{"", "a", "b\x00\"\\\n", "\xff\xfe", "ü"},
		Tracks: []timeline.Track{
			{ID: 1, Kind: timeline.TrackCPU, Name: "cpu"},
			{ID: 2, Kind: timeline.TrackGPUQueue, Name: "gpu"},
			{ID: 3, Kind: timeline.TrackGPULane, Name: "lane", Parent: 2, Lane: 1},
			{ID: 4, Kind: timeline.TrackCounter, Name: "counter"},
		},
	}
	for len(data) >= 8 {
		op, a, b, c := data[0], data[1], int64(binary.LittleEndian.Uint16(data[2:])), int64(binary.LittleEndian.Uint32(data[4:]))
		data = data[8:]
		switch op % 4 {
		case 0, 1:
			if op/16%4 == 3 {
				// A frame, open or not, overlapping others or not.
				f := timeline.Frame{ID: uint64(len(t.Frames) + 1), Start: b, End: b + c%1000}
				switch c % 7 {
				case 1:
					f.ID = uint64(max(len(t.Frames), 1)) // the last one's, or 1
				case 2:
					f.End = b - 1 - c%5 // before its start
				case 4:
					f.Start, f.End = -b-1, c%1000-b // before the clock's zero
				case 5:
					f.ID = 0
				}
				if c%3 == 0 {
					f.End = 0
				}
				t.Frames = append(t.Frames, f)
				continue
			}
			start := b
			if c%11 == 3 {
				start = -b - 1 // before the clock's zero
			}
			t.Spans = append(t.Spans, timeline.Span{
				Track: timeline.TrackID(a % 6), Name: timeline.NameID(a / 6 % 6),
				Start: start, End: start + c%1000 - 5, Depth: uint16(op / 4 % 4), Frame: uint64(a % 3),
				Work: workFromBytes(op/64, uint32(c)),
			})
		case 2:
			if n := len(t.Spans); n > 0 {
				t.Flows = append(t.Flows, timeline.Flow{From: int(a) % (n + 1), To: int(b) % (n + 1)})
			}
		case 3:
			v := float64(c) / 7
			switch a % 5 {
			case 0:
				v = math.NaN()
			case 1:
				v = math.Inf(-1)
			}
			t.Samples = append(t.Samples, timeline.Sample{Track: timeline.TrackID(a % 6), Time: b, Value: v})
		}
	}
	return t
}

// workFromBytes makes a span's work of kind k (0: none, 1: counted, 2:
// without counts, 3: with bits past the last statistic) from v: its
// statistics, its counts (each a multiple of v, up to 2^64-1) and its
// reason (which may be out of range).
func workFromBytes(k byte, v uint32) *timeline.Work {
	w := &timeline.Work{Stats: timeline.PipelineStats(v) & timeline.AllPipelineStats}
	switch k {
	case 0:
		return nil
	case 1:
		for i := range w.Count {
			w.Count[i] = uint64(v) * (1 << (i * 3)) // past 2^53 and 2^64
		}
	case 2:
		w.Missing = timeline.WorkMissing(1 + v>>28)
	case 3:
		w.Stats |= 1 << (11 + v>>28)
	}
	return w
}

// FuzzWriter checks that whatever a batch holds, the Writer writes valid
// JSON that reads back, and that every span is either written or counted
// as refused: nothing is lost silently and nothing written corrupts a
// track.
func FuzzWriter(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 10, 0, 0, 0, 4, 1, 2, 0, 3, 0, 0, 0})
	f.Add([]byte{0, 1, 0, 0, 10, 0, 0, 0, 0, 1, 5, 0, 10, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0, 3, 4, 1, 0, 1, 0, 0, 0})
	f.Add(bytes.Repeat([]byte{0, 2, 7, 0, 200, 1, 0, 0, 5, 2, 7, 0, 100, 0, 0, 0}, 8))
	f.Add([]byte{48, 1, 0, 0, 10, 0, 0, 0, 48, 1, 5, 0, 10, 0, 0, 0, 48, 1, 10, 0, 0, 0, 0, 0, 0, 1, 0, 0, 10, 0, 0, 0})
	// Work of each kind: counted, without counts (a reason out of range),
	// with bits past the last statistic, on a GPU queue and a CPU track.
	f.Add([]byte{64, 2, 0, 0, 0xff, 0x07, 0, 0xff, 128, 2, 0, 2, 10, 0, 0, 0x70, 192, 2, 0, 4, 10, 0, 0, 0, 64, 1, 0, 6, 10, 0, 0, 0})
	// Frames an ID twice, ending before they begin, before the clock's
	// zero, and of ID 0; a span before the clock's zero.
	f.Add([]byte{48, 1, 10, 0, 10, 0, 0, 0, 48, 1, 20, 0, 22, 0, 0, 0, 48, 1, 30, 0, 2, 0, 0, 0, 48, 1, 40, 0, 4, 0, 0, 0,
		48, 1, 45, 0, 5, 0, 0, 0, 0, 1, 50, 0, 14, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := traceFromBytes(data)
		var buf bytes.Buffer
		w := NewWriter(&buf)
		// One batch: across batches the Writer trusts the contract that
		// spans nest (TestStreaming covers that), within one it checks.
		crossing := 0
		if err := w.WriteBatch(tr); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("invalid JSON:\n%s", buf.Bytes())
		}
		got, err := Read(&buf)
		if err != nil {
			t.Fatalf("reading what the writer wrote: %v", err)
		}
		inv := w.Invalid()
		if len(got.Spans)+int(inv.Spans) != len(tr.Spans) {
			t.Fatalf("%d spans in, %d read back + %d refused", len(tr.Spans), len(got.Spans), inv.Spans)
		}
		if len(got.Samples)+int(inv.Samples) != len(tr.Samples) {
			t.Fatalf("%d samples in, %d read back + %d refused", len(tr.Samples), len(got.Samples), inv.Samples)
		}
		if len(got.Flows)+int(inv.Flows) != len(tr.Flows)-crossing {
			t.Fatalf("%d flows in, %d read back + %d refused", len(tr.Flows)-crossing, len(got.Flows), inv.Flows)
		}
		if len(got.Frames)+int(inv.Frames) != len(tr.Frames) || got.Drops.Frames != inv.Frames {
			t.Fatalf("%d frames in, %d read back + %d refused (drops say %d)", len(tr.Frames), len(got.Frames), inv.Frames, got.Drops.Frames)
		}
		if got.Drops.Spans != inv.Spans {
			t.Fatalf("drops %+v do not report the %d refused spans", got.Drops, inv.Spans)
		}
		// Every work read back is one that was written, whole (less
		// counts outside its Stats, which the writer leaves out); the
		// others were refused, or their spans were.
		wrote := map[string]int{}
		works, bad := 0, 0
		for _, s := range tr.Spans {
			if s.Work == nil {
				continue
			}
			works++
			if !s.Work.Valid() {
				bad++
				continue
			}
			n := timeline.Work{Stats: s.Work.Stats, Missing: s.Work.Missing}
			s.Work.Stats.Each(func(i int) { n.Count[i], _ = s.Work.Value(i) })
			wrote[workKey(&n)]++
		}
		read := 0
		for _, s := range got.Spans {
			if s.Work == nil {
				continue
			}
			read++
			if k := workKey(s.Work); wrote[k] == 0 {
				t.Fatalf("work%s read back, not written", k)
			} else {
				wrote[k]--
			}
		}
		if inv.Work > uint64(bad) || read+int(inv.Work) > works {
			t.Fatalf("%d works written (%d breaking the model), %d read back and %d refused", works, bad, read, inv.Work)
		}
	})
}
