package profiler

import "github.com/framescope/framescope/clock"

// keySnaps are the states of the clock model the recent submissions'
// zones were converted with, by submission key: a submission's zones may
// be read back in different collections (a primary command buffer's and
// each secondary's are recordings of their own, read when each is
// recorded again), and converted with the model of each moment they
// could cross by the change between two fits (on an H100, 3 zones in 100
// of a secondary's lane lay outside their primary's). Converted with one
// state, a submission's zones keep the order of their ticks. The last
// keySnapsN submissions are kept, so the memory is bounded; a
// submission's zones read back after that many later ones were converted
// take the model as it is then. Used under handMu.
type keySnaps struct {
	at    map[uint64]int // key -> index in ring
	ring  [keySnapsN]keySnap
	next  int
	last  uint64 // the key looked up last: zones come in runs of one submission
	lastS clock.Snapshot
}

type keySnap struct {
	key  uint64
	snap clock.Snapshot
}

const keySnapsN = 1024

// of returns the state to convert submission key's zones with: the one
// its first zone took, or, for a key not seen (or 0: no submission
// known), the model's now. Before the model's first sample, nothing is
// kept.
func (k *keySnaps) of(key uint64, m *clock.Model) clock.Snapshot {
	if key == 0 {
		return m.Snapshot()
	}
	if key == k.last {
		return k.lastS
	}
	if k.at == nil {
		k.at = make(map[uint64]int, keySnapsN)
	}
	i, ok := k.at[key]
	if !ok {
		now := m.Snapshot()
		if now == (clock.Snapshot{}) {
			return now // no calibration yet: the next zone of the key may have one
		}
		i = k.next
		k.next = (k.next + 1) % keySnapsN
		if old := k.ring[i].key; old != 0 {
			delete(k.at, old)
		}
		k.ring[i] = keySnap{key: key, snap: now}
		k.at[key] = i
	}
	k.last, k.lastS = key, k.ring[i].snap
	return k.lastS
}
