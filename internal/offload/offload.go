// Package offload decides when work is worth handing to another
// goroutine: when it is expected to cost the caller more than the hand-off
// itself, at the cost per unit measured so far. The recorder places GPU
// spans on its own goroutine by it, and the query pool resets its queries
// on its own by it; work under the line is done in place.
package offload

import "sync/atomic"

// Ns is about what handing work to another goroutine costs the caller,
// all told: waking it wakes a thread (a few µs of the caller's own), and
// the two then share the cores and any lock (on the 2-core CI machine, a
// frame of 10 zones took 6 µs longer with its work handed off at 5 µs).
const Ns = 20_000

// Cost is the measured cost of one kind of work: its time and units in
// all, for the owner to report, and their ratio for any goroutine to read.
// Add is called by one goroutine at a time (the owner's lock).
type Cost struct {
	ns, units uint64
	per       atomic.Uint64 // ns a unit, in 1/256 ns
}

// Add counts units of work done in ns.
func (c *Cost) Add(ns, units uint64) {
	c.ns += ns
	c.units += units
	if c.units > 0 {
		c.per.Store(c.ns * 256 / c.units)
	}
}

// Totals returns the time and units counted so far; the caller holds the
// owner's lock, as for Add.
func (c *Cost) Totals() (ns, units uint64) { return c.ns, c.units }

// Worth reports whether units of the work are expected to cost more than
// handing them off (Ns). Before any is measured, it says no: the first
// work is done in place, and measured.
func (c *Cost) Worth(units uint64) bool { return c.per.Load()*units >= Ns*256 }
