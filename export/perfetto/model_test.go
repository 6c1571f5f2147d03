package perfetto

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// handTrace builds a Perfetto trace from track descriptions (uuid, name,
// description) and events (uuid, time, type, counter value).
type handTrace struct{ b []byte }

func (h *handTrace) packet(body []byte) {
	h.b = protowire.AppendTag(h.b, fTracePacket, protowire.BytesType)
	h.b = protowire.AppendBytes(h.b, body)
}

func (h *handTrace) track(uuid uint64, name, desc string) *handTrace {
	d := protowire.AppendTag(nil, fTDUuid, protowire.VarintType)
	d = protowire.AppendVarint(d, uuid)
	d = protowire.AppendTag(d, fTDName, protowire.BytesType)
	d = protowire.AppendString(d, name)
	d = protowire.AppendTag(d, fTDDescription, protowire.BytesType)
	d = protowire.AppendString(d, desc)
	p := protowire.AppendTag(nil, fPktTrackDescriptor, protowire.BytesType)
	h.packet(protowire.AppendBytes(p, d))
	return h
}

func (h *handTrace) event(uuid, ts, typ uint64, value float64) *handTrace {
	e := protowire.AppendTag(nil, fTEType, protowire.VarintType)
	e = protowire.AppendVarint(e, typ)
	e = protowire.AppendTag(e, fTETrackUuid, protowire.VarintType)
	e = protowire.AppendVarint(e, uuid)
	if typ == typeCounter {
		e = protowire.AppendTag(e, fTEDoubleCounter, protowire.Fixed64Type)
		e = protowire.AppendFixed64(e, math.Float64bits(value))
	}
	p := protowire.AppendTag(nil, fPktTimestamp, protowire.VarintType)
	p = protowire.AppendVarint(p, ts)
	p = protowire.AppendTag(p, fPktTrackEvent, protowire.BytesType)
	h.packet(protowire.AppendBytes(p, e))
	return h
}

// TestReadRefusesModelBreaks: traces that would break the timeline's
// model are refused with an error saying what (Read once accepted them,
// and convert wrote JSON that stats then refused).
func TestReadRefusesModelBreaks(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *handTrace
		want string
	}{
		{"own parent", new(handTrace).track(1, "q", "framescope kind=gpu-queue id=5 parent=5"), "its own parent"},
		{"lane without queue", new(handTrace).track(1, "l", "framescope kind=gpu-lane id=5 lane=1"), "lane track 5"},
		{"lane under cpu", new(handTrace).track(1, "c", "framescope kind=cpu id=4").track(2, "l", "framescope kind=gpu-lane id=5 parent=4 lane=1"), "want gpu-queue"},
		{"frame 0", new(handTrace).track(1, "Frames", "framescope kind=frames id=3").event(1, 10, typeSliceBegin, 0).event(1, 20, typeSliceEnd, 0), "frame 0 has ID 0"},
		{"calibration of no track", new(handTrace).track(1, "c", "framescope kind=calibration of=99 field=0").event(1, 10, typeCounter, 5), "calibration 0 is on track 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Read(bytes.NewReader(tc.h.b))
			if err == nil || !strings.Contains(err.Error(), "breaks Framescope's model") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error about %q", tr, err, tc.want)
			}
		})
	}
}
