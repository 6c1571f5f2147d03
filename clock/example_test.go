package clock_test

import (
	"fmt"
	"math"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/timeline"
)

// A device clock with Intel's 52.08 ns period and 36 valid bits, running
// 10 ppm fast, calibrated once a second. A background goroutine would call
// Add; the render thread calls Convert.
func Example() {
	const period, fast = 52.08, 1 + 10e-6
	tickAt := func(host float64) uint64 { // the device counter, wrapping
		return uint64(math.Floor(host*fast/period)) & (1<<36 - 1)
	}
	var now int64
	m, err := clock.New(clock.Options{
		PeriodNs:  period,
		ValidBits: 36,
		Now:       func() int64 { return now }, // omit to read the host clock
	})
	if err != nil {
		panic(err)
	}
	if _, _, ok := m.Convert(tickAt(0.5e9), 0.5e9); !ok {
		fmt.Println("no calibration yet: count it as Drops.Unconverted")
	}
	for i := int64(1); i <= 30; i++ {
		host := i * 1e9
		now = host + 50e3
		// vkGetCalibratedTimestamps: maxDeviation 2.6 us, this sample
		// off by up to 2 us.
		err := m.Add(clock.Sample{
			Device:    tickAt(float64(host)),
			Host:      host + (i%5-2)*1000,
			Deviation: 2600,
		})
		if err != nil {
			panic(err)
		}
	}
	// A GPU timestamp written at 30.25 s, read back at 30.26 s.
	host, errNs, ok := m.Convert(tickAt(30.25e9), 30.26e9)
	fmt.Printf("ok %v, host %.3f ms (true 30250.000), within ±%.0f us\n", ok, float64(host)/1e6, math.Ceil(float64(errNs)/1e3))
	q := m.Quality()
	fmt.Printf("drift %+.1f ppm over %d samples\n", q.DriftPPM, q.Samples)
	// Output:
	// no calibration yet: count it as Drops.Unconverted
	// ok true, host 30250.000 ms (true 30250.000), within ±5 us
	// drift +10.0 ppm over 21 samples
}

// The model's quality goes into the trace with the GPU spans it placed.
func ExampleModel_Calibration() {
	m, _ := clock.New(clock.Options{PeriodNs: 1, ValidBits: 64})
	for i := int64(1); i <= 10; i++ {
		// A device clock running 20 ppm slow, samples within 3 us.
		m.Add(clock.Sample{Device: uint64(i * 999_980_000), Host: i * 1e9, Deviation: 3000})
	}
	var tr timeline.Trace
	c := m.Calibration(1) // for GPU queue track 1
	tr.Calibrations = append(tr.Calibrations, c)
	fmt.Printf("track %d at %d s: %.1f ppm, %d samples, bound %.0f us\n",
		c.Track, c.Time/1e9, c.DriftPPM, c.Samples, math.Ceil(c.ErrNs/1e3))
	// Output:
	// track 1 at 10 s: -20.0 ppm, 10 samples, bound 5 us
}

// A GPU zone's two timestamps, converted together: one snapshot of the
// model for both, so a calibration published meanwhile cannot split them.
func ExampleModel_ConvertSpan() {
	m, _ := clock.New(clock.Options{PeriodNs: 1, ValidBits: 32})
	for i := int64(1); i <= 10; i++ {
		// A device clock running 20 ppm slow, 32 bits wide (it wraps
		// every 4.3 s), samples within 3 us.
		m.Add(clock.Sample{Device: uint64(i*999_980_000) & (1<<32 - 1), Host: i * 1e9, Deviation: 3000})
	}
	tick := func(host float64) uint64 { return uint64(host*0.99998) & (1<<32 - 1) }
	// A zone from 10.0001 s to 10.0003 s, read back at 10.001 s.
	start, stop, errNs, ok := m.ConvertSpan(tick(10.0001e9), tick(10.0003e9), 10.001e9)
	fmt.Printf("ok %v, %.1f us long, starting at %.1f us past 10 s, within ±%.0f us\n",
		ok, float64(stop-start)/1e3, float64(start-10e9)/1e3, math.Ceil(float64(errNs)/1e3))
	// Output:
	// ok true, 200.0 us long, starting at 100.0 us past 10 s, within ±6 us
}
