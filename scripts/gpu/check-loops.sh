#!/usr/bin/env bash
# One GPU-machine call for issue 21: the render-loop checker on SEEDS seeds
# (default 200) from FIRST (default 1), with the Khronos validation layer
# carried in .gl/vl/ (scripts/gpu/setup.sh unpacks it). The
# trace processor (Node) is not there: -loops.tp=false. Run from the
# repository root with .gl and .gpubin carried (scripts/gpu/build.sh).
set -u
. scripts/gpu/setup.sh
lib=/usr/lib/x86_64-linux-gnu
[ -e $lib/libvulkan.so ] || ln -s libvulkan.so.1 $lib/libvulkan.so
root=$PWD
(cd internal/testkit/loopcheck && timeout "${LIMIT:-480}" "$root/.gpubin/internal_testkit_loopcheck.test" -test.run TestLoops -test.v -test.timeout 0 \
	-loops.tp=false -loops.seeds="${SEEDS:-200}" -loops.first="${FIRST:-1}" -loops.log) > "$out/loops-${FIRST:-1}.txt" 2>&1
echo "loopcheck seeds ${FIRST:-1}..: rc=$?"
grep -E 'seeds ran|replay:' "$out/loops-${FIRST:-1}.txt" | tail -8
