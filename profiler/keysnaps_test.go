package profiler

import (
	"testing"

	"github.com/framescope/framescope/clock"
)

// A submission's zones are converted with the model as it stood at its
// first zone's conversion, however many samples come between; a new
// submission takes the model as it is; before the first sample nothing
// is kept, and past keySnapsN later submissions a key takes the model
// anew.
func TestKeySnapsOneStateASubmission(t *testing.T) {
	now := int64(0)
	m, err := clock.New(clock.Options{PeriodNs: 1, ValidBits: 64, Now: func() int64 { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var k keySnaps
	if s := k.of(7, m); s != (clock.Snapshot{}) {
		t.Fatal("a state before any sample")
	}
	add := func(host int64, dev uint64) {
		now = host
		if err := m.Add(clock.Sample{Host: host, Device: dev, Deviation: 100}); err != nil {
			t.Fatal(err)
		}
	}
	add(1e9, 1e9)
	add(2e9, 2e9)
	at := func(s clock.Snapshot) int64 {
		v, _, _, ok := s.ConvertSpan(4.5e9, 4.5e9, 4.5e9) // past every sample: extrapolated
		if !ok {
			t.Fatal("not converted")
		}
		return v
	}
	first := at(k.of(7, m))
	add(3e9, 3e9+5000) // the device's clock runs 5 us ahead now
	add(4e9, 4e9+10000)
	if got := at(k.of(7, m)); got != first {
		t.Errorf("submission 7 converted at %d, then %d after later samples", first, got)
	}
	if got, now := at(k.of(8, m)), at(m.Snapshot()); got != now {
		t.Errorf("a new submission converted at %d, the model now at %d", got, now)
	}
	if at(m.Snapshot()) == first {
		t.Fatal("the samples did not move the model: the test proves nothing")
	}
	for key := uint64(100); key < 100+keySnapsN; key++ {
		k.of(key, m)
	}
	if got, now := at(k.of(7, m)), at(m.Snapshot()); got != now {
		t.Errorf("submission 7, %d submissions later, converted at %d, the model now at %d", keySnapsN, got, now)
	}
}
