#!/usr/bin/env bash
# Installs, or names, what Framescope needs on a Debian machine.
# Run as root it apt-installs what is missing; otherwise it says what to install.
#   scripts/deps.sh demo   what `make demo` needs: the Vulkan loader, its
#                          headers, lavapipe and a C compiler (cgo)
#   scripts/deps.sh        all that the tests need besides
set -euo pipefail
what=${1:-test}

pkgs=()
need() { # need PACKAGE FILE-THAT-PROVES-IT
	if [ ! -e "$2" ]; then pkgs+=("$1"); fi
}
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
need libvulkan1 "/usr/lib/$multiarch/libvulkan.so.1"
need libvulkan-dev /usr/include/vulkan/vulkan.h
need mesa-vulkan-drivers /usr/share/vulkan/icd.d/lvp_icd.x86_64.json
need gcc /usr/bin/gcc # cgo: internal/vk
need libc6-dev /usr/include/stdio.h
if [ "$what" != demo ]; then
	need vulkan-validationlayers /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
	need vulkan-tools /usr/bin/vulkaninfo # and vkcube, vkcubepp: the layer's tests
	need xvfb /usr/bin/xvfb-run            # a display for vkcube on lavapipe
	need xauth /usr/bin/xauth              # xvfb-run needs it
	# real programs under the layer (TestRealPrograms): mpv on Vulkan, and
	# vkcube beside vkBasalt's and MangoHud's layers
	need mpv /usr/bin/mpv
	need vkbasalt /usr/share/vulkan/implicit_layer.d/vkBasalt.json
	need mangohud /usr/share/vulkan/implicit_layer.d/MangoHud.json
	need protobuf-compiler /usr/bin/protoc # the generated protos' freshness test
	need glslc /usr/bin/glslc              # the demo's SPIR-V freshness test
	need nodejs /usr/bin/node              # Perfetto's trace processor (WebAssembly)
	need npm /usr/bin/npm
	need chromium /usr/bin/chromium # renders framescope diff --html in a test
	# framescope history's tests start a server of their own (internal/testkit/pgtest)
	need postgresql /usr/lib/postgresql/15/bin/initdb
fi

# Go comes from go.dev, not Debian (whose golang is too old for go.mod).
want_go=$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod 2>/dev/null || true)
if ! command -v "${GO:-go}" >/dev/null; then
	echo "framescope: Go ${want_go:-1.26} or later is missing: install it from https://go.dev/dl/ and put its bin/ on PATH" >&2
	exit 1
fi

if [ ${#pkgs[@]} -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "framescope: missing Debian packages: ${pkgs[*]}" >&2
	echo "framescope: install them with: sudo apt-get install -y ${pkgs[*]}" >&2
	exit 1
fi
echo "framescope: installing ${pkgs[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null
