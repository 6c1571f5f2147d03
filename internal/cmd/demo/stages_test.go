package demo

import (
	"fmt"
	"testing"

	vkg "github.com/vulkan-go/vulkan"
)

func TestParseStages(t *testing.T) {
	for _, tc := range []struct {
		in         string
		begin, end vkg.PipelineStageFlagBits
		err        bool
	}{
		{in: "top-bottom", begin: vkg.PipelineStageTopOfPipeBit, end: vkg.PipelineStageBottomOfPipeBit},
		{in: "top-top", begin: vkg.PipelineStageTopOfPipeBit, end: vkg.PipelineStageTopOfPipeBit},
		{in: "bottom-bottom", begin: vkg.PipelineStageBottomOfPipeBit, end: vkg.PipelineStageBottomOfPipeBit},
		{in: "all-all", begin: vkg.PipelineStageAllCommandsBit, end: vkg.PipelineStageAllCommandsBit},
		{in: " All-Color ", begin: vkg.PipelineStageAllCommandsBit, end: vkg.PipelineStageColorAttachmentOutputBit},
		{in: "fragment", begin: vkg.PipelineStageFragmentShaderBit, end: vkg.PipelineStageFragmentShaderBit},
		{in: "transfer-graphics", begin: vkg.PipelineStageTransferBit, end: vkg.PipelineStageAllGraphicsBit},
		{in: "", err: true},
		{in: "-", err: true},
		{in: "top-", err: true},
		{in: "top-bottom-all", err: true},
		{in: "host-top", err: true},
		{in: "top_bottom", err: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			st, err := parseStages(tc.in)
			if tc.err {
				if err == nil {
					t.Fatalf("parseStages(%q) = %v, want an error", tc.in, st)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.begin != tc.begin || st.end != tc.end {
				t.Errorf("parseStages(%q) = %#x-%#x, want %#x-%#x", tc.in, st.begin, st.end, tc.begin, tc.end)
			}
		})
	}
}

// FuzzParseStages: whatever the input, parseStages returns an error or
// stages that print as a string it parses back to the same stages.
func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"top-bottom", "all-all", "top", "Bottom-TOP", "x-y", "", "--", "top-bottom-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := parseStages(s)
		if err != nil {
			return
		}
		back, err := parseStages(st.String())
		if err != nil || back != st {
			t.Fatalf("%q parsed to %v, which parses back to %v, %v", s, st, back, err)
		}
	})
}

func Example_stages() {
	st, err := parseStages("all-bottom")
	fmt.Println(st, err)
	_, err = parseStages("top-host")
	fmt.Println(err != nil)
	// Output:
	// all-bottom <nil>
	// true
}
