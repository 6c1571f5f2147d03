package profiler

import (
	"strconv"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// A queue's track is keyed by its device's identity, not its name alone:
// two GPUs of one model ("NVIDIA H100 80GB HBM3" both) and two logical
// devices alive at once on one GPU each get their own tracks, while a
// device closed and made again continues its tracks.
//
// The physical device's name is the model's, with "(GPU i)", its index in
// the instance's list, where the instance has several of that model; the
// seats are kept by that name, which the tracks take (a UUID, which only a
// Vulkan 1.1 instance reads, would tell the same GPU apart from itself). A logical device takes the lowest seat on its
// physical device that no other logical device with an open context
// holds: seat 0 keeps the plain name, seat k "(device k+1)".

// seat is a logical device's place among those alive at once on one
// physical device.
type seat struct {
	device vkg.Device // the logical device sitting there
	open   int        // its contexts open on this profiler
}

// seatFor seats d's logical device and returns the name its queues' tracks
// take, and the seat. The caller holds p.mu.
func (p *Profiler) seatFor(d *vk.Device) (string, *seat) {
	base := d.Caps.Name
	if d.Twins > 1 {
		base += " (GPU " + strconv.Itoa(d.Caps.Index) + ")"
	}
	// Seats by the name the tracks take, not by physicalID: a device of a
	// Vulkan 1.0 instance has no UUID, and one of a 1.2 instance on the
	// same GPU, alive at once, took seat 0 of another group, and the same
	// tracks (the layer's checker, a thread making devices).
	id := base
	if p.seats == nil {
		p.seats = map[string][]*seat{}
	}
	seats := p.seats[id]
	var s *seat
	k := 0
	for i, x := range seats {
		if x.open > 0 && x.device == d.Handle {
			s, k = x, i
			break
		}
		if s == nil && x.open == 0 {
			s, k = x, i
		}
	}
	if s == nil {
		s, k = &seat{}, len(seats)
		p.seats[id] = append(seats, s)
	}
	s.device = d.Handle
	s.open++
	name := base
	if k > 0 {
		name += " (device " + strconv.Itoa(k+1) + ")"
	}
	return name, s
}

// unseat gives the place of a context that was never made back.
func (p *Profiler) unseat(s *seat) {
	p.mu.Lock()
	s.unseat()
	p.mu.Unlock()
}

// unseat gives a closed context's place back. The caller holds p.mu.
func (s *seat) unseat() {
	if s != nil && s.open > 0 {
		s.open--
	}
}
