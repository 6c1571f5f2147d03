package history

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// A run's points of one metric are kept as one row (run_values), its
// values packed, not a row a point: a check of 10,000 commits of 1,000
// zones reads 10,000 rows rather than 10 million, which a database
// hands over at some microseconds a row.
//
// The packing: a version byte (packVersion), the count of points, then
// for each point, in ascending order of series id: the id's difference
// from the previous one (from 0), the value's IEEE 754 bits (8 bytes,
// little-endian), the occurrences, and a byte 1 followed by the whole
// count where the value is an exact count, else a byte 0. Counts and
// differences are unsigned varints.
const packVersion = 1

// packedPoint is one point of a packed row: its series' id.
type packedPoint struct {
	series  int64
	value   float64
	n       int64
	whole   uint64
	isWhole bool
}

// pack packs points, which it sorts by series id; two of one series are
// an error.
func pack(points []packedPoint) ([]byte, error) {
	slices.SortFunc(points, func(a, b packedPoint) int { return cmp.Compare(a.series, b.series) })
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(points)*14)
	b = append(b, packVersion)
	b = binary.AppendUvarint(b, uint64(len(points)))
	prev := int64(0)
	for i, p := range points {
		if p.series < prev || i > 0 && p.series == prev {
			return nil, fmt.Errorf("two points of one series (id %d)", p.series)
		}
		b = binary.AppendUvarint(b, uint64(p.series-prev))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.value))
		b = binary.AppendUvarint(b, uint64(p.n))
		if p.isWhole {
			b = append(b, 1)
			b = binary.AppendUvarint(b, p.whole)
		} else {
			b = append(b, 0)
		}
		prev = p.series
	}
	return b, nil
}

var errPacked = errors.New("a packed row of values is damaged")

// unpack calls f with each point of a packed row, in order of series
// id, and checks that the row is whole: a count over the row's length, or
// bytes left over, are errPacked.
func unpack(b []byte, f func(packedPoint)) error {
	r, err := newPackedReader(b)
	for err == nil {
		var p packedPoint
		var ok bool
		if p, ok, err = r.next(math.MaxInt64); !ok {
			break
		}
		f(p)
	}
	if err == nil {
		err = r.end()
	}
	return err
}

// packedReader reads a packed row's points in order, stopping where
// asked: past a series id, so that a reader can take the points of some
// series from every row, then the next ones'.
type packedReader struct {
	b      []byte
	left   uint64 // points
	series int64  // the last one's
}

func newPackedReader(b []byte) (packedReader, error) {
	if len(b) == 0 || b[0] != packVersion {
		return packedReader{}, fmt.Errorf("%w: packing version %v, this framescope reads %d", errPacked, b[:min(len(b), 1)], packVersion)
	}
	r := packedReader{b: b[1:]}
	count, err := uvarint(&r.b)
	if err != nil || count > uint64(len(r.b))/11 { // a point is at least 11 bytes
		return packedReader{}, fmt.Errorf("%w: %d points in %d bytes", errPacked, count, len(r.b))
	}
	r.left = count
	return r, nil
}

// next reads the next point where its series' id is at most limit; ok
// is false at the row's end or a point past limit, which a next call
// with a higher limit reads.
func (r *packedReader) next(limit int64) (p packedPoint, ok bool, err error) {
	if r.left == 0 {
		return p, false, nil
	}
	d, n := binary.Uvarint(r.b)
	if n <= 0 || d > math.MaxInt64-uint64(r.series) {
		return p, false, errPacked
	}
	if p.series = r.series + int64(d); p.series > limit {
		return p, false, nil
	}
	b := r.b[n:]
	if len(b) < 8 {
		return p, false, errPacked
	}
	p.value = math.Float64frombits(binary.LittleEndian.Uint64(b))
	b = b[8:]
	occ, err := uvarint(&b)
	if err != nil || occ > math.MaxInt64 || len(b) == 0 || b[0] > 1 {
		return p, false, errPacked
	}
	p.n, p.isWhole = int64(occ), b[0] == 1
	b = b[1:]
	if p.isWhole {
		if p.whole, err = uvarint(&b); err != nil {
			return p, false, errPacked
		}
	}
	r.b, r.series = b, p.series
	r.left--
	return p, true, nil
}

// end checks that the row holds nothing past its points.
func (r *packedReader) end() error {
	if r.left != 0 || len(r.b) != 0 {
		return fmt.Errorf("%w: %d points and %d bytes left over", errPacked, r.left, len(r.b))
	}
	return nil
}

// uvarint reads an unsigned varint off the front of *b.
func uvarint(b *[]byte) (uint64, error) {
	v, n := binary.Uvarint(*b)
	if n <= 0 {
		return 0, errPacked
	}
	*b = (*b)[n:]
	return v, nil
}
