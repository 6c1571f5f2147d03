package perfetto

import (
	"bytes"
	"testing"

	"github.com/framescope/framescope/timeline"
	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzRead feeds Read garbage, truncated and hostile traces: it must return
// an error or a well-formed timeline, never panic, and use memory in
// proportion to its input.
func FuzzRead(f *testing.F) {
	for _, c := range cases() {
		if c.name == "realistic frames" || c.name == "deep nesting" {
			continue // large; the small cases cover the same packets
		}
		data := write(f, c)
		f.Add(data)
		f.Add(data[:len(data)/2])
		if c.name == "gpu work" || c.name == "work sums" {
			f.Add(writeOpt(f, c, Options{RenderStages: true}))
		}
	}
	f.Add([]byte{})
	f.Add([]byte("garbage"))
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})       // a packet claiming 4 GiB
	f.Add([]byte{0x0b, 0x0c})                               // groups
	f.Add(protowire.AppendTag(nil, 1, protowire.BytesType)) // a tag and nothing
	// A packet with a track event on an undeclared track and an end with
	// no begin.
	ev := protowire.AppendTag(nil, fTEType, protowire.VarintType)
	ev = protowire.AppendVarint(ev, typeSliceEnd)
	pkt := protowire.AppendTag(nil, fPktTimestamp, protowire.VarintType)
	pkt = protowire.AppendVarint(pkt, 1)
	pkt = protowire.AppendTag(pkt, fPktTrackEvent, protowire.BytesType)
	pkt = protowire.AppendBytes(pkt, ev)
	f.Add(protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), pkt))

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		tr, err := Read(bytes.NewReader(data))
		if err != nil && tr == nil {
			return
		}
		if tr == nil {
			t.Fatal("nil trace without an error")
		}
		wellFormed(t, tr)
		if len(tr.Spans)+len(tr.Samples)+len(tr.Tracks)+len(tr.Names) > 4*len(data)+8 {
			t.Fatalf("%d bytes made %d spans, %d samples, %d tracks, %d names", len(data), len(tr.Spans), len(tr.Samples), len(tr.Tracks), len(tr.Names))
		}
	})
}

// wellFormed checks what every Trace from Read promises.
func wellFormed(t *testing.T, tr *timeline.Trace) {
	t.Helper()
	if len(tr.Names) == 0 || tr.Names[0] != "" {
		t.Fatal("Names[0] is not the empty name")
	}
	ids := map[timeline.TrackID]bool{}
	for _, k := range tr.Tracks {
		if k.ID == 0 || ids[k.ID] {
			t.Fatalf("bad or duplicate track id %d", k.ID)
		}
		ids[k.ID] = true
	}
	for _, s := range tr.Spans {
		if !ids[s.Track] || int(s.Name) >= len(tr.Names) || s.End < s.Start || s.Start < 0 {
			t.Fatalf("bad span %+v", s)
		}
	}
	for _, fl := range tr.Flows {
		if fl.From < 0 || fl.From >= len(tr.Spans) || fl.To < 0 || fl.To >= len(tr.Spans) {
			t.Fatalf("bad flow %+v", fl)
		}
	}
	for _, s := range tr.Samples {
		if !ids[s.Track] {
			t.Fatalf("sample on unknown track %+v", s)
		}
	}
}

// FuzzParseDescription: a track description never panics the parser, and
// what description writes parses back to the same track.
func FuzzParseDescription(f *testing.F) {
	f.Add("framescope kind=cpu id=1 order=0", "main", "", uint32(0))
	f.Add(`framescope kind=gpu-queue id=3 order=-2 lane=0 family=1 index=2 flags="graphics" device="NVIDIA \"H200\""`, "q", "x y", uint32(7))
	f.Add(`framescope kind="unterminated`, "", "\xff", uint32(1))
	f.Fuzz(func(t *testing.T, desc, name, device string, family uint32) {
		if attrs, ok := parseDescription(desc); ok {
			if k := attrs["kind"]; k != "" {
				trackFromAttrs(k, name, attrs)
			}
		}
		tr := timeline.Track{ID: 5, Kind: timeline.TrackGPULane, Name: name, Parent: 4, Order: -3, Lane: 2,
			Queue: timeline.Queue{Device: device, Family: family, Index: 1, Flags: device + "+x"}}
		attrs, ok := parseDescription(description(&tr))
		if !ok {
			t.Fatalf("description of %+v does not parse", tr)
		}
		back, err := trackFromAttrs(attrs["kind"], name, attrs)
		if err != nil || back != tr {
			t.Fatalf("got %+v, %v; want %+v", back, err, tr)
		}
	})
}
