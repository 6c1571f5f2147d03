package main

import (
	"slices"
	"testing"
)

// TestLayerEnv: framescope run adds the layer to what the program's
// environment already asks of the loader, its directory and its name
// first (the loader orders layers as it finds them, and the layer must be
// the outermost), and replaces every FRAMESCOPE_ variable but
// FRAMESCOPE_LAYER with its own.
func TestLayerEnv(t *testing.T) {
	got := layerEnv([]string{"HOME=/root", "VK_ADD_LAYER_PATH=/vl", "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
		"FRAMESCOPE_OUT=old", "FRAMESCOPE_WINDOW=9", "FRAMESCOPE_LAYER=/l"}, "/fs", []string{"FRAMESCOPE_OUT=new"})
	want := []string{"HOME=/root", "VK_ADD_LAYER_PATH=/fs:/vl", "VK_INSTANCE_LAYERS=VK_LAYER_FRAMESCOPE_profile:VK_LAYER_KHRONOS_validation",
		"FRAMESCOPE_LAYER=/l", "VK_LOADER_LAYERS_ENABLE=VK_LAYER_FRAMESCOPE_profile", "FRAMESCOPE_OUT=new"}
	if !slices.Equal(got, want) {
		t.Errorf("layerEnv:\ngot  %q\nwant %q", got, want)
	}
	got = layerEnv([]string{"VK_LOADER_LAYERS_ENABLE=*validation"}, "/fs", nil)
	want = []string{"VK_LOADER_LAYERS_ENABLE=VK_LAYER_FRAMESCOPE_profile,*validation", "VK_ADD_LAYER_PATH=/fs", "VK_INSTANCE_LAYERS=VK_LAYER_FRAMESCOPE_profile"}
	if !slices.Equal(got, want) {
		t.Errorf("layerEnv with VK_LOADER_LAYERS_ENABLE:\ngot  %q\nwant %q", got, want)
	}
}
