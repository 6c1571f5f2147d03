package pprof

import (
	"math"
	"math/bits"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/framescope/framescope/timeline"
)

// WorkUnit is the unit of the work sample types, one per pipeline
// statistic, named by its key (timeline.StatKey).
const WorkUnit = "count"

// owners are, for each statistic, the sample of the innermost zone with a
// count of it among a span and its ancestors: the sample from which the
// counts of the zones inside are taken back. A span without counts shares
// its parent's.
type owners [timeline.NumPipelineStats]*profile.Sample

// sampleWork is a sample's work as it is summed: the counts of its
// zones, and the counts of the zones inside them that it gives up. Both
// are sums of counts, which do not depend on their order even where
// they stop at 2^64-1.
type sampleWork struct {
	add, sub [timeline.NumPipelineStats]uint64
}

// counted returns the statistics w has counts of, or 0.
func counted(w *timeline.Work) timeline.PipelineStats {
	if w == nil || w.Missing != timeline.WorkCounted {
		return 0
	}
	return w.Stats & timeline.AllPipelineStats
}

// addUint is a + b, or 2^64-1 past it.
func addUint(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

func (b *builder) sampleWork(smp *profile.Sample) *sampleWork {
	w := b.work[smp]
	if w == nil {
		if b.work == nil {
			b.work = map[*profile.Sample]*sampleWork{}
		}
		w = &sampleWork{}
		b.work[smp] = w
	}
	return w
}

// countWork adds the counts of a zone whose sample is smp to smp, takes
// them back from the samples of parent (the owners of the zone's
// parent, nil for none) and returns the owners of the zone. stats are
// the zone's counted statistics, not 0.
func (b *builder) countWork(smp *profile.Sample, w *timeline.Work, stats timeline.PipelineStats, parent *owners) *owners {
	own := &owners{}
	if parent != nil {
		*own = *parent
	}
	sw := b.sampleWork(smp)
	for v := uint32(stats); v != 0; v &= v - 1 {
		i := bits.TrailingZeros32(v)
		sw.add[i] = addUint(sw.add[i], w.Count[i])
		if p := own[i]; p != nil {
			pw := b.sampleWork(p)
			pw.sub[i] = addUint(pw.sub[i], w.Count[i])
		}
		own[i] = smp
	}
	return own
}

// finishWork adds a sample type per statistic in b.stats, in bit order,
// and each sample's value of it: its zones' counts less those of the
// zones inside them that they gave up, 0 where that is less than 0,
// 2^63-1 where it is more. It then drops the samples with no value,
// which a zone with counts and no time leaves when the zones inside it
// counted all it did.
func (b *builder) finishWork() {
	if b.stats == 0 {
		return
	}
	var idx []int
	b.stats.Each(func(i int) {
		idx = append(idx, i)
		b.p.SampleType = append(b.p.SampleType, &profile.ValueType{Type: timeline.StatKey(i), Unit: WorkUnit})
	})
	for _, smp := range b.p.Sample {
		sw := b.work[smp]
		for _, i := range idx {
			var v int64
			switch {
			case sw == nil:
			case sw.add[i] < sw.sub[i]:
				b.overcounted++
			case sw.add[i]-sw.sub[i] > math.MaxInt64:
				v = math.MaxInt64
				b.capped++
			default:
				v = int64(sw.add[i] - sw.sub[i])
			}
			smp.Value = append(smp.Value, v)
		}
	}
	b.p.Sample = slices.DeleteFunc(b.p.Sample, func(s *profile.Sample) bool {
		return !slices.ContainsFunc(s.Value, func(v int64) bool { return v != 0 })
	})
	b.work = nil
}
