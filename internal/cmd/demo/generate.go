package demo

// The SPIR-V next to each GLSL source in shaders/ is committed and embedded
// (see shaders.go); `go generate ./internal/cmd/demo` rebuilds it with
// glslc (Debian package glslc).
//go:generate glslc -O --target-env=vulkan1.0 -o shaders/triangle.vert.spv shaders/triangle.vert
//go:generate glslc -O --target-env=vulkan1.0 -o shaders/triangle.frag.spv shaders/triangle.frag
//go:generate glslc -O --target-env=vulkan1.0 -o shaders/load.vert.spv shaders/load.vert
//go:generate glslc -O --target-env=vulkan1.0 -o shaders/load.frag.spv shaders/load.frag
//go:generate glslc -O --target-env=vulkan1.0 -o shaders/count.comp.spv shaders/count.comp
