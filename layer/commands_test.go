package layer

import (
	"bytes"
	"os/exec"
	"regexp"
	"testing"

	"github.com/framescope/framescope/internal/testkit/loopcheck"
)

// vkCmdDrawMultiEXT is a draw for -draws (Mesa's zink draws so): shapes
// multidraw submits N render passes of one such call each, with the
// validation layer below the layer; each is a draw zone inside its
// render pass's.
func TestDrawMultiUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	if err := exec.Command(prog, "multidraw", "1").Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 4 {
			t.Skip("the device lacks VK_EXT_multi_draw")
		}
		t.Fatalf("shapes multidraw without the layer: %v", err)
	}
	const n = 20
	env := []string{"VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation", "VK_ADD_LAYER_PATH=" + validationDir()}
	tr, out := runShape(t, dir, env, prog, "multidraw", n, "-draws")
	if validationSpoke(out) {
		t.Errorf("the validation layer spoke:\n%s", lastOf(out))
	}
	byName := map[string]int{}
	for _, z := range loopcheck.GPUZones(tr) {
		byName[tr.Name(z.Name)]++
	}
	if byName["draw"] != n || byName["render pass"] != n {
		t.Errorf("zones %v, want %d draws and %d render passes", byName, n, n)
	}
	checkShapeZones(t, tr, 3*n)
}

// Labels through entry points the loader hands out for an extension the
// instance did not enable (mpv's libplacebo does this): the loader and the
// validation layer tolerate the calls, and so does the layer, which
// passes them on where the device below has them and times them as the
// program's zones either way. (Before, the layer called a null pointer.)
func TestUnenabledLabelsUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	if out, err := exec.Command(prog, "unenabled", "1").CombinedOutput(); err != nil {
		t.Fatalf("shapes unenabled without the layer: %v\n%s", err, out)
	}
	const n = 20
	tr, _ := runShape(t, dir, nil, prog, "unenabled", n)
	checkShapeZones(t, tr, 3*n)
}

// The calibrated-timestamps extension the layer enables on a device for
// its own clock model is not the program's: vkGetDeviceProcAddr answers
// its commands NULL under the layer as without it (before, it answered
// them, and a program that probes for an extension so saw one it did not
// enable), and the layer's zones are calibrated all the same.
func TestAddedExtensionHiddenUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	plain, err := exec.Command(prog, "procaddr", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("shapes procaddr without the layer: %v\n%s", err, plain)
	}
	answers := regexp.MustCompile(`vkGetCalibratedTimestampsEXT \d vkGetCalibratedTimestampsKHR \d`)
	const n = 5
	tr, out := runShape(t, dir, nil, prog, "procaddr", n)
	if a, b := answers.Find(plain), answers.Find(out); a == nil || !bytes.Equal(a, b) {
		t.Errorf("without the layer %q, under it %q", a, b)
	}
	if tr.Drops.Uncalibrated != 0 {
		t.Errorf("%d zones uncalibrated", tr.Drops.Uncalibrated)
	}
	checkShapeZones(t, tr, 3*n) // the command buffer's zone and two labels a submission
}
