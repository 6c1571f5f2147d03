package chrome

import (
	"fmt"
	"io"
)

// maxObjectBytes bounds one JSON object inside the trace's top-level array
// or object (an event, or a top-level value such as "metadata"):
// encoding/json buffers a whole value before it decodes it.
const maxObjectBytes = 64 << 20

// objectLimit is maxObjectBytes, lowered by tests.
var objectLimit int64 = maxObjectBytes

// squeezer passes JSON through with every run of whitespace outside
// strings cut to one byte, and fails on an object over maxObjectBytes.
// encoding/json's Decoder rescans the whitespace it has buffered each
// time it reads more, so a gigabyte of spaces between two events took it
// time quadratic in their length.
type squeezer struct {
	r        io.Reader
	buf      []byte
	inString bool
	escaped  bool
	space    bool  // the last byte passed was whitespace outside strings
	depth    int   // open objects and arrays
	objDepth int   // the depth the measured object opened at; 0: none
	objStart int64 // where it opened
	off      int64 // bytes read
}

func (s *squeezer) Read(p []byte) (int, error) {
	p = p[:min(len(p), 64<<10)] // its scratch is as long
	for {
		if cap(s.buf) < len(p) {
			s.buf = make([]byte, len(p))
		}
		n, err := s.r.Read(s.buf[:len(p)])
		w := 0
		for _, c := range s.buf[:n] {
			s.off++
			if s.inString {
				switch {
				case s.escaped:
					s.escaped = false
				case c == '\\':
					s.escaped = true
				case c == '"':
					s.inString = false
				}
			} else {
				switch c {
				case ' ', '\t', '\r', '\n':
					if s.space {
						continue
					}
					s.space = true
					p[w] = c
					w++
					continue
				case '"':
					s.inString = true
				case '{', '[':
					s.depth++
					if c == '{' && s.depth >= 2 && s.objDepth == 0 {
						s.objDepth, s.objStart = s.depth, s.off
					}
				case '}', ']':
					if s.depth == s.objDepth {
						s.objDepth = 0
					}
					s.depth--
				}
			}
			s.space = false
			p[w] = c
			w++
		}
		if s.objDepth != 0 && s.off-s.objStart > objectLimit {
			return w, fmt.Errorf("%w: a JSON object at byte %d longer than %d bytes, the reader's limit on one object", ErrTooLarge, s.objStart, objectLimit)
		}
		if w > 0 || err != nil {
			return w, err
		}
	}
}
