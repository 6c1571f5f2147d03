#!/usr/bin/env bash
# A forked child on the GPU machine, plainly and under the layer
# (.gpubin/layer-new): procs fork-exit and fork-instance, the child's
# fault printed where it faults (PROCS_BACKTRACE), and the child leaving
# through _exit (PROCS_QUICK_EXIT); the plain program with what the
# layer's profiler makes on its device (PROCS_WORK); and, under the
# layer, where each thread is once it hangs (FRAMESCOPE_TEST_STACKS).
# Results in $OUT/fork.txt.
set -u
. scripts/gpu/setup.sh
log=$out/fork.txt
new=$PWD/.gpubin/layer-new
under() {
	VK_ADD_LAYER_PATH="$new${VK_ADD_LAYER_PATH:+:$VK_ADD_LAYER_PATH}" VK_INSTANCE_LAYERS=VK_LAYER_FRAMESCOPE_profile \
		VK_LOADER_LAYERS_ENABLE=VK_LAYER_FRAMESCOPE_profile FRAMESCOPE_OUT=/tmp/fork.pftrace "$@"
}
one() { # one WHAT ENV... MODE: a run, its exit and the end of its output
	local what=$1
	shift
	timeout 20 env "$@" > /tmp/one.out 2>&1
	echo "--- $what: exit $?" >> "$log"
	grep -v '^$' /tmp/one.out | tail -25 | cut -c1-300 >> "$log"
}
: > "$log"
for m in fork-exit fork-instance; do
	one "plain $m" PROCS_BACKTRACE=1 "$new/procs" $m 100
	one "layer $m" PROCS_BACKTRACE=1 bash -c "$(declare -f under); new=$new; under $new/procs $m 100"
done
for w in 1 calibrated thread; do
	one "plain fork-exit with the profiler's work (PROCS_WORK=$w)" PROCS_WORK=$w PROCS_BACKTRACE=1 "$new/procs" fork-exit 100
done
one "layer fork-exit, stacks at 6 s" FRAMESCOPE_TEST_STACKS=6s bash -c "$(declare -f under); new=$new; under $new/procs fork-exit 100"
grep -E '^thread|^goroutine|^main\.|framescope|profiler|querypool|_Cfunc' /tmp/one.out | cut -c1-250 | head -120 >> "$log"
one "layer fork-exit, _exit" PROCS_BACKTRACE=1 PROCS_QUICK_EXIT=1 bash -c "$(declare -f under); new=$new; under $new/procs fork-exit 100"
one "layer fork-exit, 1 region" PROCS_BACKTRACE=1 bash -c "$(declare -f under); new=$new; under $new/procs fork-exit 1"
cat "$log"
