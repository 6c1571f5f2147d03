package loopcheck

import (
	"bytes"
	"os"
	"testing"
)

// TestCountShaderIsTheDemos: the checker's copy of count.comp's SPIR-V is
// the demo's, which its GLSL source and go generate keep current.
func TestCountShaderIsTheDemos(t *testing.T) {
	demo, err := os.ReadFile("../../cmd/demo/shaders/count.comp.spv")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(demo, countSPIRV) {
		t.Error("internal/testkit/loopcheck/count.comp.spv differs from internal/cmd/demo/shaders/count.comp.spv: copy the demo's")
	}
}
