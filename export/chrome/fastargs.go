package chrome

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/framescope/framescope/timeline"
)

// statKeys are the statistics' keys by bit position, and foldKeys every
// key sliceArgs reads.
var statKeys, foldKeys = func() ([]string, []string) {
	var stats []string
	for i := range timeline.NumPipelineStats {
		stats = append(stats, timeline.StatKey(i))
	}
	return stats, append([]string{"frame", "err_ns", argWorkMissing, argWorkStats}, stats...)
}()

// decode reads a slice's args b (valid JSON: the event they came in was
// decoded) into a, reset, as json.Unmarshal would, and returns its error.
// Args of the shape writers make, a flat object of plain keys and scalar
// values, are read by hand: through encoding/json they were a third of
// the time to read a trace whose zones carry work (its validity check,
// then reflection, for each event's dozen args). Any other shape goes to
// encoding/json. TestFastArgs holds the two to one result.
func (a *sliceArgs) decode(b []byte) error {
	a.reset()
	if a.fast(b) {
		return nil
	}
	a.reset()
	return json.Unmarshal(b, a)
}

// fast reads b when it is a flat object of keys without escapes and
// scalar values of the types the fields take, and reports false, leaving
// a half read, on anything else.
func (a *sliceArgs) fast(b []byte) bool {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i == len(b) || b[i] != '"' {
			return false
		}
		j := i + 1
		for j < len(b) && b[j] != '"' {
			if b[j] == '\\' || b[j] >= 0x80 {
				return false
			}
			j++
		}
		if j == len(b) {
			return false
		}
		key := b[i+1 : j]
		i = skipSpace(b, j+1)
		if i == len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		end, ok := scalarEnd(b, i)
		if !ok || !a.set(key, b[i:end]) {
			return false
		}
		i = skipSpace(b, end)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// set stores one arg as json.Unmarshal would, or reports false where that
// takes more than this reader knows: a key that matches a field only
// without regard to case, a frame or err_ns that is no plain integer in
// range (an error there is encoding/json's to give).
func (a *sliceArgs) set(key, v []byte) bool {
	switch string(key) {
	case "frame":
		return setUint(&a.Frame, v, 64)
	case "err_ns":
		var n uint64
		if !setUint(&n, v, 32) {
			return false
		}
		if string(v) != "null" {
			a.ErrNs = uint32(n)
		}
		return true
	case argWorkMissing:
		return a.WorkMissing.UnmarshalJSON(v) == nil
	case argWorkStats:
		return a.WorkStats.UnmarshalJSON(v) == nil
	}
	for i, r := range a.stats() {
		if string(key) == statKeys[i] {
			return r.UnmarshalJSON(v) == nil
		}
	}
	for _, k := range foldKeys {
		if bytes.EqualFold(key, []byte(k)) {
			return false
		}
	}
	return true // an arg the reader does not read
}

// setUint stores an unsigned integer of bits bits, leaves *dst as it is
// for null, and reports false for any other value.
func setUint(dst *uint64, v []byte, bits int) bool {
	if string(v) == "null" {
		return true
	}
	if len(v) == 0 || v[0] < '0' || v[0] > '9' {
		return false
	}
	n, err := strconv.ParseUint(string(v), 10, bits)
	if err != nil {
		return false
	}
	*dst = n
	return true
}

// scalarEnd returns where the string, number, true, false or null at
// b[i] ends, or false for an object, an array or nothing.
func scalarEnd(b []byte, i int) (int, bool) {
	if i == len(b) {
		return 0, false
	}
	if b[i] == '"' {
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] >= 'a' && b[j] <= 'z' || b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] == 'E') {
		j++
	}
	return j, j > i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
