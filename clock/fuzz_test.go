package clock

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
	"time"
)

// fuzzRecord is the size of one sample in FuzzModel's input: device
// tick (8 bytes), host time step (4, signed, x1024 ns), deviation (2,
// signed, x16 ns), delay of the publication after the sample (1, x1 ms).
const fuzzRecord = 15

func fuzzEncode(head [4]byte, samples []Sample, delays []byte) []byte {
	b := head[:]
	var prev int64
	for i, s := range samples {
		var r [fuzzRecord]byte
		binary.LittleEndian.PutUint64(r[0:], s.Device)
		binary.LittleEndian.PutUint32(r[8:], uint32(int32((s.Host-prev)/1024)))
		binary.LittleEndian.PutUint16(r[12:], uint16(int16(s.Deviation/16)))
		r[14] = delays[i%len(delays)]
		prev = s.Host
		b = append(b, r[:]...)
	}
	return b
}

// FuzzModel feeds random configurations and sample streams to the
// model. Whatever the input: no panic; each published snapshot is
// monotonic over a grid spanning its whole chain and far beyond; a refit
// (other than a counted reset) never changes a tick at or before its
// freeze point; quality figures are numbers.
func FuzzModel(f *testing.F) {
	clk := lineClock{period: 1, rate: 1 + 10e-6, tick0: 1 << 40}
	var ss []Sample
	for i := 1; i <= 40; i++ {
		h := float64(i) * 1e9
		s := Sample{Device: uint64(clk.tick(h)), Host: int64(h) + int64(i*i%7-3)*500, Deviation: 2600}
		if i == 20 {
			s.Host += 300e3
		}
		ss = append(ss, s)
	}
	f.Add(fuzzEncode([4]byte{0, 63, 30, 1}, ss, []byte{1, 0, 200}))
	f.Add(fuzzEncode([4]byte{0, 31, 6, 0}, ss, []byte{3}))
	intel := lineClock{period: 52.08, rate: 1 - 20e-6, tick0: 1 << 35}
	ss = ss[:0]
	for i := 1; i <= 30; i++ {
		h := float64(i) * 2e9
		ss = append(ss, Sample{Device: uint64(intel.tick(h)) & (1<<36 - 1), Host: int64(h), Deviation: 12000})
	}
	f.Add(fuzzEncode([4]byte{1, 35, 8, 2}, ss, []byte{0}))
	f.Add(fuzzEncode([4]byte{5, 0, 0, 3}, []Sample{{1, 1, 1}, {1, 1, 1}, {0, -5, -1}, {math.MaxUint64, 1 << 40, 1 << 20}}, []byte{255}))
	f.Add([]byte{2, 7, 1})
	// Found by fuzzing: a slew whose bound overflows int64.
	f.Add([]byte("0?0000000000000000000000\x00\x00\x0000000000000\t\x01\x00\x0000000000007\t0\x00\x000000000"))

	periods := []float64{1, 52.08, 0.5, 83.333, 1e-3, 1e6, 3.7}
	durs := []time.Duration{0, time.Second, time.Minute, time.Millisecond}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		now := int64(0)
		m, err := New(Options{
			PeriodNs:  periods[int(data[0])%len(periods)],
			ValidBits: 1 + uint(data[1])%64,
			Window:    2 + int(data[2])%40,
			WindowDur: durs[int(data[3])%len(durs)],
			Now:       func() int64 { return now },
		})
		if err != nil {
			t.Fatal(err)
		}
		data = data[4:]
		if len(data) > 400*fuzzRecord {
			data = data[:400*fuzzRecord] // keep each run short
		}
		host := int64(1e12)
		var grid []int64
		var hs []int64
		for len(data) >= fuzzRecord {
			r := data[:fuzzRecord]
			data = data[fuzzRecord:]
			dev := int64(int16(binary.LittleEndian.Uint16(r[12:]))) * 16
			host += int64(int32(binary.LittleEndian.Uint32(r[8:]))) * 1024
			now = host + int64(r[14])*1e6
			s := Sample{Device: binary.LittleEndian.Uint64(r), Host: host, Deviation: dev}

			old := m.snap.Load()
			resets := m.Quality().Resets
			grid, hs = grid[:0], hs[:0]
			if old != nil {
				grid = fuzzGrid(grid, old)
				for _, x := range grid {
					h, _, _ := old.at(x)
					hs = append(hs, h)
				}
			}
			if err := m.Add(s); err != nil {
				if dev >= 1 && s.Host > m.lastHost {
					t.Fatalf("valid sample %+v refused: %v", s, err)
				}
				continue
			}
			m.Convert(s.Device, s.Host)
			m.Convert(s.Device^0x5555, s.Host-int64(dev)*1000)
			fuzzSpan(t, m, s.Device, s.Device+uint64(r[14])*1e5, s.Host)
			fuzzSpan(t, m, s.Device^0x5555, s.Device, s.Host-int64(dev)*1000)
			m.ConvertBits(s.Device, uint(r[14]%70), s.Host+int64(dev))
			q := m.Quality()
			if math.IsNaN(q.ErrNs) || math.IsNaN(q.DriftPPM) || q.ErrNs < 0 {
				t.Fatalf("quality %+v", q)
			}
			snap := m.snap.Load()
			fuzzMonotonic(t, snap)
			if old == nil || snap == old || q.Resets != resets {
				continue
			}
			for i, x := range grid {
				if x > m.freeze {
					continue
				}
				if h, _, _ := snap.at(x); h != hs[i] {
					t.Fatalf("refit moved tick %d at or before the freeze point %d: %d -> %d", x, m.freeze, hs[i], h)
				}
			}
		}
	})
}

// fuzzSpan checks that ConvertSpan returns what two Converts with the same
// hint do.
func fuzzSpan(t *testing.T, m *Model, begin, end uint64, hint int64) {
	t.Helper()
	s, e1, ok1 := m.Convert(begin, hint)
	e, e2, ok2 := m.Convert(end, hint)
	start, stop, errNs, ok := m.ConvertSpan(begin, end, hint)
	if ok != (ok1 && ok2) || ok && (start != s || stop != e || errNs != max(e1, e2)) {
		t.Fatalf("ConvertSpan(%d, %d, %d) = %d, %d, %d, %v; Convert gives %d, %d (%v), %d, %d (%v)",
			begin, end, hint, start, stop, errNs, ok, s, e1, ok1, e, e2, ok2)
	}
}

// fuzzGrid returns sorted ticks covering snap's chain: the start of its
// first and last 64 segments and their neighbours, points in between, and
// far outside.
func fuzzGrid(grid []int64, s *clockSnap) []int64 {
	grid = append(grid, math.MinInt64, -1<<62, -1, 0, 1, 1<<62, math.MaxInt64)
	for i, g := range s.segs {
		if i >= 64 && i < len(s.segs)-64 {
			continue
		}
		grid = append(grid, g.x0-1, g.x0, g.x0+1, g.x0-1e6, g.x0+1e9)
		if i+1 < len(s.segs) {
			next := s.segs[i+1].x0
			grid = append(grid, g.x0/2+next/2, next-2)
		}
	}
	slices.Sort(grid)
	return slices.Compact(grid)
}

func fuzzMonotonic(t *testing.T, s *clockSnap) {
	t.Helper()
	var prev int64
	have := false
	for _, x := range fuzzGrid(nil, s) {
		h, e, ok := s.at(x)
		if !ok {
			continue
		}
		if e < 1 {
			t.Fatalf("tick %d: bound %d", x, e)
		}
		if have && h < prev {
			t.Fatalf("not monotonic at tick %d: %d after %d", x, h, prev)
		}
		prev, have = h, true
	}
}
