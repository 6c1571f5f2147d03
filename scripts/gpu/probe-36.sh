#!/usr/bin/env bash
# Probes of what the layer's checks found on the GPU machine (issue 36):
# traces of lifecycle's secondary mode and of drawn seed 43 under the
# validation layer, where a secondary's zones did not nest in their
# primary's; and the same without it.
set -u
. scripts/gpu/setup.sh
P=.gpubin/lb
for v in with without; do
	if [ $v = with ]; then export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT; else unset VK_INSTANCE_LAYERS VK_LAYER_ENABLES; fi
	$P/framescope run -layer $P -frame-every 1 -o $out/secondary-$v.pftrace -- $P/lifecycle secondary 20 > $out/secondary-$v.log 2>&1
	$P/framescope run -layer $P -frame-every 1 -o $out/drawn43-$v.pftrace -- $P/drawn 43 $out/drawn43-$v.journal > $out/drawn43-$v.log 2>&1
done
grep -c VUID $out/*.log
