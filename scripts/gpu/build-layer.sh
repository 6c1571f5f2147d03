#!/usr/bin/env bash
# Builds, here, the layer as the GPU-machine scripts run it, into
# .gpubin/layer-NAME/ (NAME: $1, default new): the layer's two libraries,
# its manifest and framescope (stripped), beside the layer tests' C
# programs (testdata's programs, liblocklayer.so, the checker's bare),
# and .gpubin/layer.test. The machine there has no compiler: tests find
# these through FRAMESCOPE_LAYER_BUILT.
set -eu
dir=.gpubin/layer-${1:-new}
mkdir -p "$dir"
cc="gcc -std=gnu11 -Wall -Werror -O2" # as the tests build them
$cc -Wextra -flto -fPIC -shared -fvisibility=hidden -Iprofiler -o "$dir/libVkLayer_framescope.so" layer/shim/*.c -ldl -lpthread
go build -ldflags='-s -w' -buildmode=c-shared -o "$dir/libframescope_go.so" ./layer/lib
rm -f "$dir/libframescope_go.h"
go build -ldflags='-s -w' -o "$dir/framescope" ./cmd/framescope
cp layer/VkLayer_framescope.json "$dir/"
for p in lifecycle shapes procs drawn boundary bound tris; do
	$cc -o "$dir/$p" "layer/testdata/$p.c" -lvulkan
done
$cc -fPIC -shared -fvisibility=hidden -o "$dir/liblocklayer.so" layer/testdata/locklayer.c -lpthread
lc=internal/testkit/loopcheck
$cc -I$lc -o "$dir/bare" $lc/bare/bare.c $lc/app.c $lc/submit.c $lc/twin.c $lc/render.c -lvulkan -lpthread
go test -c -ldflags='-s -w' -o .gpubin/layer.test ./layer
du -sh .gpubin
