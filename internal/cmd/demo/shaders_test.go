package demo

import (
	"encoding/binary"
	"errors"
	"testing"
)

// module returns a minimal valid module: the header and one OpNop-sized
// instruction of the given word count.
func module(order binary.ByteOrder, words ...uint32) []byte {
	b := make([]byte, 4*len(words))
	for i, w := range words {
		order.PutUint32(b[4*i:], w)
	}
	return b
}

func TestSPIRVWords(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	hdr := []uint32{spirvMagic, 0x00010000, 0, 8, 0}
	ins := uint32(1 << 16) // OpNop (opcode 0), one word
	for _, tc := range []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"triangle.vert", triangleVert, true},
		{"triangle.frag", triangleFrag, true},
		{"load.vert", loadVert, true},
		{"load.frag", loadFrag, true},
		{"header only", module(le, hdr...), true},
		{"one instruction", module(le, append(hdr, ins)...), true},
		{"big endian", module(be, append(hdr, ins)...), true},
		{"empty", nil, false},
		{"not words", append(module(le, hdr...), 1), false},
		{"short", module(le, hdr[:4]...), false},
		{"bad magic", module(le, 0x12345678, 0x00010000, 0, 8, 0), false},
		{"version 2", module(le, spirvMagic, 0x00020000, 0, 8, 0), false},
		{"bound 0", module(le, spirvMagic, 0x00010000, 0, 0, 0), false},
		{"word count 0", module(le, append(hdr, 0)...), false},
		{"runs past the end", module(le, append(hdr, 3<<16|0x11, 0)...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			words, err := spirvWords(tc.in)
			if !tc.ok {
				if err == nil || !errors.Is(err, errSPIRV) {
					t.Fatalf("spirvWords = %d words, %v; want an errSPIRV", len(words), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(words)*4 != len(tc.in) || words[0] != spirvMagic {
				t.Fatalf("%d words from %d bytes, first %#x", len(words), len(tc.in), words[0])
			}
		})
	}
}

func FuzzSPIRVWords(f *testing.F) {
	for _, b := range [][]byte{triangleVert, loadFrag, nil, {3, 2, 0x23, 7}, module(binary.BigEndian, spirvMagic, 0x10000, 0, 1, 0, 1<<16)} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		words, err := spirvWords(b)
		if err != nil {
			if !errors.Is(err, errSPIRV) {
				t.Fatalf("error %v does not wrap errSPIRV", err)
			}
			return
		}
		if len(words)*4 != len(b) || words[0] != spirvMagic {
			t.Fatalf("%d words from %d bytes, first %#x", len(words), len(b), words[0])
		}
	})
}
