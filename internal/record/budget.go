package record

import "github.com/framescope/framescope/timeline"
import "time"

// Budget names one of the frame budgets of Options.
type Budget uint8

const (
	// BudgetCPU is Options.CPUBudget: a frame's CPU time, from BeginFrame
	// to EndFrame.
	BudgetCPU Budget = iota + 1
	// BudgetGPU is Options.GPUBudget: a frame's GPU time, as sampled on
	// "GPU time per frame".
	BudgetGPU
)

func (b Budget) String() string {
	switch b {
	case BudgetCPU:
		return "cpu"
	case BudgetGPU:
		return "gpu"
	}
	return "unknown"
}

// defaultBudgetEvery is Options.BudgetEvery without a frame window.
const defaultBudgetEvery = 60

// OverBudget is a frame found over one of its budgets, with the window
// the recorder dumped for it.
type OverBudget struct {
	Frame  uint64        // the frame over budget
	Budget Budget        // the budget it went over
	Limit  time.Duration // that budget
	Took   time.Duration // what the frame took: its CPU time or its GPU time
	// Trace is the recorder's Dump at the moment the frame was found over
	// budget: at its EndFrame for BudgetCPU, when its GPU time was
	// sampled (Options.SettleFrames frames later) for BudgetGPU. When
	// both budgets call OnBudget from one EndFrame, both calls get the
	// same Trace.
	Trace *timeline.Trace
}

// budgetState is the recorder's budget bookkeeping.
type budgetState struct {
	overs []OverBudget // found under mu, to call OnBudget with after
	// Per budget: frames ended before which the next call waits, what
	// the frame last passed to OnBudget took, and whether one was.
	budgetNext  [BudgetGPU + 1]uint64
	budgetTook  [BudgetGPU + 1]int64
	budgetSince [BudgetGPU + 1]bool
}

// checkBudget notes that frame took took against budget b. It is worth a
// call of OnBudget unless one was made for b less than BudgetEvery frames
// ago for a frame that took as long or longer: the wait never hides a
// frame worse than the one last passed. The first call for b starts no
// wait, since the first frame over budget is most often warm-up (pipeline
// compilation, first uploads), so that it does not hide the first frame
// over budget after it either. The caller holds mu.
func (r *Recorder) checkBudget(b Budget, frame uint64, took int64) {
	limit := r.opt.CPUBudget
	if b == BudgetGPU {
		limit = r.opt.GPUBudget
	}
	if r.opt.OnBudget == nil || limit <= 0 || took <= int64(limit) {
		return
	}
	r.stats.OverBudget++
	if r.ended < r.budgetNext[b] && took <= r.budgetTook[b] {
		r.stats.BudgetSkipped++
		return
	}
	if r.budgetSince[b] {
		r.budgetNext[b] = r.ended + uint64(r.opt.BudgetEvery)
	}
	r.budgetSince[b] = true
	r.budgetTook[b] = took
	r.overs = append(r.overs, OverBudget{Frame: frame, Budget: b, Limit: limit, Took: time.Duration(took)})
}

// dumpForBudgets dumps the window at now for the frames found over budget
// that have none yet, and returns them all, to be handed to OnBudget once
// mu is released. The caller holds mu.
func (r *Recorder) dumpForBudgets(now int64) []OverBudget {
	if len(r.overs) == 0 {
		return nil
	}
	var tr *timeline.Trace
	for i := range r.overs {
		if r.overs[i].Trace == nil {
			if tr == nil {
				tr = r.dumpAt(now)
			}
			r.overs[i].Trace = tr
		}
	}
	overs := r.overs
	r.overs = nil
	return overs
}

// callBudgets calls OnBudget for each of overs. The caller does not hold
// mu, so that OnBudget may call the recorder.
func (r *Recorder) callBudgets(overs []OverBudget) {
	for _, o := range overs {
		r.opt.OnBudget(o)
	}
}
