package layer

import (
	"os/exec"
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
