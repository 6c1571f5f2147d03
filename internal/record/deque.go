package record

import "sort"

// blockLen is the number of items in one block of a deque.
const blockLen = 1024

// deque is a queue held in fixed blocks of blockLen items: a push at the
// back, a pop at the front and an index in between each take constant
// time, and growing never copies what the queue holds, so no single call
// does work in proportion to its length. A block emptied at the front is
// kept for the next block the back needs, so that a queue of steady length
// allocates nothing.
//
// An item's absolute index, its place among all the items ever pushed,
// stays the same as items before it are popped.
type deque[T any] struct {
	blocks []*[blockLen]T
	head   int    // index of the front item in blocks[0]
	n      int    // items held
	base   uint64 // absolute index of the front item
	spare  *[blockLen]T
}

// len returns the number of items held.
func (q *deque[T]) len() int { return q.n }

// end returns the absolute index the next push gets.
func (q *deque[T]) end() uint64 { return q.base + uint64(q.n) }

// at returns the item i places from the front.
func (q *deque[T]) at(i int) *T {
	j := q.head + i
	return &q.blocks[j/blockLen][j%blockLen]
}

// abs returns the item with absolute index a, which must be held.
func (q *deque[T]) abs(a uint64) *T { return q.at(int(a - q.base)) }

// last returns the item at the back; the deque must not be empty.
func (q *deque[T]) last() *T { return q.at(q.n - 1) }

// push appends v at the back.
func (q *deque[T]) push(v T) { *q.pushSlot() = v }

// pushSlot appends a zero item at the back and returns it, for the
// caller to set field by field.
func (q *deque[T]) pushSlot() *T {
	j := q.head + q.n
	if j/blockLen == len(q.blocks) {
		b := q.spare
		q.spare = nil
		if b == nil {
			b = new([blockLen]T)
		}
		q.blocks = append(q.blocks, b)
	}
	q.n++
	return &q.blocks[j/blockLen][j%blockLen]
}

// popFront removes the front item; the deque must not be empty.
func (q *deque[T]) popFront() {
	var zero T
	q.blocks[0][q.head] = zero
	q.head++
	q.n--
	q.base++
	if q.head == blockLen {
		// Shift the block pointers down rather than reslice, so that
		// the slice keeps its capacity and a queue of steady length
		// never grows it again: a copy of len/blockLen pointers.
		q.spare = q.blocks[0]
		n := copy(q.blocks, q.blocks[1:])
		q.blocks[n] = nil
		q.blocks = q.blocks[:n]
		q.head = 0
	}
}

// truncate keeps the first m items and lets the rest go.
func (q *deque[T]) truncate(m int) {
	var zero T
	for i := m; i < q.n; i++ {
		*q.at(i) = zero
	}
	q.n = m
	keep := (q.head + m + blockLen - 1) / blockLen
	if keep < len(q.blocks) {
		q.spare = q.blocks[keep]
		clear(q.blocks[keep:])
		q.blocks = q.blocks[:keep]
	}
}

// search returns the smallest i at which f is true, as sort.Search, for
// an f that is false and then true from front to back.
func (q *deque[T]) search(f func(*T) bool) int {
	return sort.Search(q.n, func(i int) bool { return f(q.at(i)) })
}
