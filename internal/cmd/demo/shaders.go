package demo

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
)

// The compiled shaders, rebuilt from shaders/*.{vert,frag} by go generate.
var (
	//go:embed shaders/triangle.vert.spv
	triangleVert []byte
	//go:embed shaders/triangle.frag.spv
	triangleFrag []byte
	//go:embed shaders/load.vert.spv
	loadVert []byte
	//go:embed shaders/load.frag.spv
	loadFrag []byte
	//go:embed shaders/count.comp.spv
	countComp []byte
)

// spirvMagic is the first word of every SPIR-V module.
const spirvMagic = 0x07230203

// spirvHeaderWords is the length of a module's header: magic, version,
// generator, bound, schema.
const spirvHeaderWords = 5

var errSPIRV = errors.New("not a SPIR-V module")

// spirvWords checks that b is a SPIR-V module and returns it as 32-bit
// words in host order, as vkCreateShaderModule wants them. A module written
// in the other byte order is swapped.
func spirvWords(b []byte) ([]uint32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of words", errSPIRV, len(b))
	}
	n := len(b) / 4
	if n < spirvHeaderWords {
		return nil, fmt.Errorf("%w: %d words, shorter than the %d-word header", errSPIRV, n, spirvHeaderWords)
	}
	var order binary.ByteOrder
	switch {
	case binary.LittleEndian.Uint32(b) == spirvMagic:
		order = binary.LittleEndian
	case binary.BigEndian.Uint32(b) == spirvMagic:
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("%w: magic %#08x, want %#08x", errSPIRV, binary.LittleEndian.Uint32(b), spirvMagic)
	}
	words := make([]uint32, n)
	for i := range words {
		words[i] = order.Uint32(b[4*i:])
	}
	if v := words[1]; v>>24 != 0 || v&0xff != 0 || (v>>16)&0xff != 1 {
		return nil, fmt.Errorf("%w: version word %#08x is not 1.x", errSPIRV, v)
	}
	if words[3] == 0 {
		return nil, fmt.Errorf("%w: id bound 0", errSPIRV)
	}
	// Every instruction's word count must be at least 1 and the last one
	// must end at the end of the module.
	for i := spirvHeaderWords; i < n; {
		wc := int(words[i] >> 16)
		if wc == 0 {
			return nil, fmt.Errorf("%w: instruction at word %d has word count 0", errSPIRV, i)
		}
		if i+wc > n {
			return nil, fmt.Errorf("%w: instruction at word %d runs %d words past the end", errSPIRV, i, i+wc-n)
		}
		i += wc
	}
	return words, nil
}
