package loopcheck

import "testing"

// TestBareScriptsFitLines draws the scripts of many seeds, as on the GPU
// machine's device (five queues, every feature), and on one queue: each
// line must fit bare's (op panics on one that does not). H200 seed 125
// marked a slot's 15 submissions done on one line, and bare refused it.
func TestBareScriptsFitLines(t *testing.T) {
	nvidia := BareDevice{Name: "NVIDIA H200", hostReset: true, calibrated: true, stats: true, timeline: true, sync2: true, rend: true,
		queues: []appQueue{{family: 0, index: 0, flags: queueGraphics | queueCompute, validBits: 64}, {family: 0, index: 1, flags: queueGraphics | queueCompute, validBits: 64}, {family: 1, index: 0, flags: queueTransfer, validBits: 64},
			{family: 1, index: 1, flags: queueTransfer, validBits: 64}, {family: 2, index: 0, flags: queueCompute, validBits: 64}}}
	lavapipe := BareDevice{Name: "llvmpipe", hostReset: true, calibrated: true, timeline: true, sync2: true, rend: true,
		queues: []appQueue{{family: 0, index: 0, flags: queueGraphics | queueCompute, validBits: 64}}}
	seeds := uint64(400)
	if testing.Short() {
		seeds = 100
	}
	for _, d := range []BareDevice{nvidia, lavapipe} {
		for seed := uint64(1); seed <= seeds; seed++ {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s seed %d: %v", d.Name, seed, r)
					}
				}()
				NewBare(seed, d, true)
			}()
		}
	}
}
