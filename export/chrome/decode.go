package chrome

import (
	"encoding/json"
	"fmt"
)

// rawEvent is one trace event as decoded; args stay raw until needed.
type rawEvent struct {
	Ph   string          `json:"ph"`
	Name text            `json:"name"`
	Pid  scalar          `json:"pid"`
	Tid  scalar          `json:"tid"`
	Ts   scalar          `json:"ts"`
	Dur  scalar          `json:"dur"`
	ID   scalar          `json:"id"`
	ID2  scalar          `json:"id2"`
	Bp   string          `json:"bp"`
	Args json.RawMessage `json:"args"`
}

// scalar is a JSON number or string (pid, tid, id, ts, dur) kept as its
// text, in place when short, so that decoding an event does not allocate
// for each of them.
type scalar struct {
	n    int
	in   [40]byte
	long []byte
}

// UnmarshalJSON keeps the raw text; the decoder has checked it is JSON.
func (v *scalar) UnmarshalJSON(b []byte) error {
	v.long = nil
	v.n = len(b)
	if len(b) <= len(v.in) {
		copy(v.in[:], b)
	} else {
		v.long = append([]byte(nil), b...)
	}
	return nil
}

func (v *scalar) raw() []byte {
	if v.long != nil {
		return v.long
	}
	return v.in[:v.n]
}

func (v *scalar) empty() bool {
	r := v.raw()
	return len(r) == 0 || string(r) == "null"
}

// numberText returns the text of a JSON number, or of the number in a
// JSON string (some writers quote times).
func (v *scalar) numberText() []byte {
	r := v.raw()
	if len(r) >= 2 && r[0] == '"' && r[len(r)-1] == '"' {
		return r[1 : len(r)-1]
	}
	return r
}

func (v *scalar) String() string { return string(v.raw()) }

// micros reads a time in microseconds as nanoseconds.
func (v *scalar) micros() (int64, error) { return parseMicros(string(v.numberText())) }

// text is a JSON string decoded without allocating when it is short and
// plain (ASCII without escapes); others go through encoding/json, which
// also turns invalid UTF-8 into U+FFFD.
type text struct {
	n    int
	in   [64]byte
	long []byte
}

func (v *text) UnmarshalJSON(b []byte) error {
	v.n, v.long = 0, nil
	if string(b) == "null" {
		return nil
	}
	if len(b) < 2 || b[0] != '"' {
		return fmt.Errorf("name %s is not a string", b)
	}
	body := b[1 : len(b)-1]
	plain := len(body) <= len(v.in)
	for _, c := range body {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		v.n = copy(v.in[:], body)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v.long = []byte(s)
	return nil
}

func (v *text) bytes() []byte {
	if v.long != nil {
		return v.long
	}
	return v.in[:v.n]
}
