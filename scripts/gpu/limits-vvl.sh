#!/usr/bin/env bash
# One GPU-machine call: the library's frames of known limit (examples/wrap
# -bound, TestBoundFramesKnownLimit) with 1 GiB fills, then the Khronos
# validation layer alone (no Framescope) under threads that make and
# destroy instances and devices while one queries its physical device
# (scripts/gpu/vvl-race.c), up to RUNS times within LIMIT seconds. Build
# here: go test -c -o .gpubin/examples_wrap.test ./examples/wrap and
# gcc -o .gpubin/vvl-race scripts/gpu/vvl-race.c -lvulkan -lpthread; carry
# .gl (with .gl/vl) and .gpubin.
set -u
. scripts/gpu/setup.sh
lib=/usr/lib/x86_64-linux-gnu
[ -e $lib/libvulkan.so ] || ln -s libvulkan.so.1 $lib/libvulkan.so
root=$PWD
(cd examples/wrap && FRAMESCOPE_REQUIRE_VULKAN=1 FRAMESCOPE_BOUND_FILL_MIB=1024 timeout 200 "$root/.gpubin/examples_wrap.test" \
	-test.run TestBoundFramesKnownLimit -test.v -test.count 1) > "$out/wrap-bound.txt" 2>&1
echo "wrap -bound: rc=$?"
grep -E -- '--- |frames as drawn' "$out/wrap-bound.txt" | cut -c1-300
end=$((SECONDS + ${LIMIT:-300}))
for layers in VK_LAYER_KHRONOS_validation none; do
	crashes=0 runs=0
	for r in $(seq "${RUNS:-25}"); do
		[ $SECONDS -lt $end ] || break
		if [ $layers = none ]; then
			[ $r -le 3 ] || break
			timeout 60 .gpubin/vvl-race > "$out/vvl-$layers-$r.txt" 2>&1
		else
			VK_INSTANCE_LAYERS=$layers timeout 60 .gpubin/vvl-race > "$out/vvl-$layers-$r.txt" 2>&1
		fi
		rc=$? runs=$((runs + 1))
		[ $rc -eq 0 ] || crashes=$((crashes + 1))
		echo "$layers run $r: rc=$rc $(tail -1 "$out/vvl-$layers-$r.txt" | cut -c1-160)"
	done
	echo "vvl-race, layers $layers: $crashes of $runs runs failed"
done
