# Sourced by the GPU-machine scripts: the Vulkan loader from .gl/*.deb, the
# NVIDIA driver's manifest, $out for results, and what the machine is.
#
# Here, once: the loader as .deb files in .gl/ (see ../shared/docs/gpu-clocks.md)
# and the binaries in .gpubin/ (scripts/gpu/build.sh).
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
	export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
# The Khronos validation layer, where .gl/vl/ carries it (cd .gl/vl &&
# apt-get download vulkan-validationlayers): unpacked beside the system, not
# over it, and only made available (tests turn it on).
if compgen -G '.gl/vl/*.deb' >/dev/null; then
	mkdir -p /tmp/vl
	for f in .gl/vl/*.deb; do dpkg -x "$f" /tmp/vl; done
	export VK_ADD_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d
	export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
out=${OUT:-/tmp/out}
mkdir -p "$out"
{
	date -u
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
	uname -r
} > "$out/machine.txt"
