package demo

import (
	"fmt"
	"testing"
)

// TestSpread checks, for each shape, that every draw is recorded once, in
// order; that zones and pairs begin and end once each, in order, never
// nested in one another; and that each covers its share of the draws.
func TestSpread(t *testing.T) {
	for _, tc := range []struct{ l, z, r int }{
		{0, 0, 0}, {0, 3, 0}, {0, 0, 2}, {1, 1, 1}, {5, 0, 0}, {5, 5, 5},
		{10, 3, 4}, {3, 10, 7}, {7, 2, 0}, {0, 4, 4}, {600, 1000, 1000}, {1000, 7, 13},
	} {
		t.Run(fmt.Sprintf("load%d_zones%d_raw%d", tc.l, tc.z, tc.r), func(t *testing.T) {
			draws, zb, ze, rb, re := 0, 0, 0, 0, 0
			zOpen, rOpen := -1, -1
			zDraws := make([]int, tc.z)
			rDraws := make([]int, tc.r)
			spread(tc.l, tc.z, tc.r, func(ev event, k int) {
				switch ev {
				case draw:
					if k != draws {
						t.Fatalf("draw %d recorded as draw %d", draws, k)
					}
					draws++
					if zOpen >= 0 {
						zDraws[zOpen]++
					}
					if rOpen >= 0 {
						rDraws[rOpen]++
					}
				case zoneBegin:
					if zOpen >= 0 || k != zb {
						t.Fatalf("zone %d begins with zone %d open, after %d begun", k, zOpen, zb)
					}
					zOpen = k
					zb++
				case zoneEnd:
					if zOpen != k {
						t.Fatalf("zone %d ends while zone %d is open", k, zOpen)
					}
					zOpen = -1
					ze++
				case rawBegin:
					if rOpen >= 0 || k != rb {
						t.Fatalf("pair %d begins with pair %d open, after %d begun", k, rOpen, rb)
					}
					rOpen = k
					rb++
				case rawEnd:
					if rOpen != k {
						t.Fatalf("pair %d ends while pair %d is open", k, rOpen)
					}
					rOpen = -1
					re++
				}
			})
			if draws != tc.l || zb != tc.z || ze != tc.z || rb != tc.r || re != tc.r {
				t.Fatalf("%d draws, zones %d/%d, pairs %d/%d begun/ended; want %d draws, %d zones, %d pairs",
					draws, zb, ze, rb, re, tc.l, tc.z, tc.r)
			}
			if zOpen >= 0 || rOpen >= 0 {
				t.Fatalf("zone %d or pair %d left open", zOpen, rOpen)
			}
			for k, n := range zDraws {
				if want := (k+1)*tc.l/tc.z - k*tc.l/tc.z; n != want {
					t.Errorf("zone %d covers %d draws, want %d", k, n, want)
				}
			}
			for k, n := range rDraws {
				if want := (k+1)*tc.l/tc.r - k*tc.l/tc.r; n != want {
					t.Errorf("pair %d covers %d draws, want %d", k, n, want)
				}
			}
		})
	}
}
