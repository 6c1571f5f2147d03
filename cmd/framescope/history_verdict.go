package main

import (
	"context"

	"github.com/framescope/framescope/cmd/framescope/history"
)

// checkLast is the window check judges by default, the newest 30
// commits, and show's: so that show's -md and -html say, unless given
// another -last, what check found.
const checkLast = 30

// historyVerdict loads the window c names (the newest c.last commits of
// its testbed and branch) from s, a reader's store (opened with
// history.Options{ReadOnly: true}), and checks it: what check gates on,
// and what show's -md and -html report; h holds the series of its
// findings alone. Load's errors come back as they are: a testbed or branch of no commit is history.ErrUnknown, listing
// what there is.
func historyVerdict(ctx context.Context, s history.Store, c historyCheckOptions) (history.History, history.CheckResult, error) {
	return history.CheckStore(ctx, s, c.testbed, c.branch, c.last, c.o)
}

// windowText names the commits a verdict is over, h's: the newest c.last
// of the branch, or all of them where it has fewer. Where show's window
// is, or may be, another than check's by default, it says so. It holds
// no name, only counts and sequence numbers, but is a phrase all the
// same, spliced into the headline as its names are.
func windowText(c historyCheckOptions, h history.History) phrase {
	n := len(h.Commits)
	if n == 0 {
		return phrasef("no commits")
	}
	which := "the newest"
	if n < c.last {
		which = "all"
	}
	w := phrasef("%s %d commits (seq %d to %d)", which, n, h.Commits[0].Seq, h.Commits[n-1].Seq)
	if c.show && (n > checkLast || n == c.last && c.last != checkLast) {
		w = phrasef("%s (show -last %d: check looks at the newest %d unless given -last %d)", w, c.last, checkLast, c.last)
	}
	return w
}
