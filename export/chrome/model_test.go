package chrome

import (
	"strings"
	"testing"
)

// TestReadRefusesModelBreaks: Framescope's own metadata that would break
// the timeline's model is refused with an error saying what, as the
// Perfetto reader refuses it.
func TestReadRefusesModelBreaks(t *testing.T) {
	const track = `{"ph":"M","pid":1,"tid":%s,"name":"framescope_track","args":%s}`
	tr := func(tid, args string) string {
		return strings.Replace(strings.Replace(track, "%s", tid, 1), "%s", args, 1)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"own parent", `[` + tr("5", `{"id":5,"kind":"gpu-queue","parent":5}`) + `]`, "its own parent"},
		{"lane without queue", `[` + tr("5", `{"id":5,"kind":"gpu-lane","lane":1}`) + `]`, "lane track 5"},
		{"frame 0", `[{"ph":"M","pid":1,"name":"framescope_frame","args":{"id":0,"start":1,"end":2}}]`, "frame 0 has ID 0"},
		{"calibration of no track", `[{"ph":"M","pid":1,"name":"framescope_calibration","args":{"track":99,"time":1,"err_ns":5}}]`, "calibration 0 is on track 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), "breaks Framescope's model") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error about %q", got, err, tc.want)
			}
		})
	}
}
