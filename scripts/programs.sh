#!/usr/bin/env bash
# Runs real programs, as Debian ships them, once as they are and once under
# `framescope run`, in Xvfb on the machine's Vulkan device (lavapipe where
# mpv can name it), and prints a table of what each run did: mpv on both
# of its Vulkan renderers, and vkcube with MangoHud, with vkBasalt above
# Framescope's layer and below it, and with both.
#
#   scripts/programs.sh [LAYER_DIR]   LAYER_DIR: what `make layer` built
#                                     (default build/layer)
#   LIMIT=SECONDS                     how long a run may take before it
#                                     counts as a hang (default 40)
#
# Columns: the exit status without and under the layer (139: SIGSEGV;
# "hang": killed after LIMIT), whether `framescope stats` reads the trace
# back, whether its books balance, and the device's layers as the loader
# chained them under the layer, from the program down (VK_LOADER_DEBUG).
# `go test -run TestRealPrograms ./layer` checks the same runs.
set -uo pipefail

dir=$(cd "${1:-build/layer}" && pwd) || exit 1
fs=$dir/framescope
if [ ! -x "$fs" ]; then
	echo "programs.sh: no framescope in $dir: build it with make layer" >&2
	exit 1
fi
limit=${LIMIT:-40}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CONFIG_HOME=$work/config XDG_RUNTIME_DIR=$work

printf 'effects = cas\ncasSharpness = 0.4\n' >"$work/vkBasalt.conf"
# vkBasalt as an explicit layer (its manifest without the variable that
# enables it), in a directory of its own: the loader puts explicit layers
# below implicit ones, and framescope run's directory first.
mkdir -p "$work/explicit"
basalt=/usr/share/vulkan/implicit_layer.d/vkBasalt.json
[ -e "$basalt" ] && sed '/"enable_environment"/,/}/d' "$basalt" >"$work/explicit/vkBasalt.json"

# status CMD...: the command's exit status, or "hang" where it ran past LIMIT.
status() {
	timeout -k 10 "$limit" "$@" >"$work/out" 2>&1
	local rc=$?
	if [ $rc -eq 124 ]; then
		echo hang
	else
		echo $rc
	fi
}

# chain: the device's layers from the last run's loader output.
chain() {
	awk '/vkCreateDevice layer callstack setup to:/ {p = 1; next}
		p && /<Device>/ {exit}
		p && $1 == "LAYER:" && $2 ~ /^VK_LAYER_/ && NF == 2 {sub(/^VK_LAYER_/, "", $2); printf "%s%s", s, $2; s = " > "}' "$work/out"
}

row() { printf '%-7s %-26s %-6s %-6s %-11s %-11s %s\n' "$@"; }
row program setup plain layer "trace reads" books "device layers under the layer"

# one PROGRAM SETUP FILE ENV... -- ARGS...: FILE (or -) must be there.
n=0
one() {
	local prog=$1 setup=$2 file=$3 env=() args=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	args=("$@")
	if ! command -v "${args[0]}" >/dev/null; then
		row "$prog" "$setup" - - - - "${args[0]} is not installed"
		return
	fi
	if [ "$file" != - ] && [ ! -e "$file" ]; then
		row "$prog" "$setup" - - - - "$file is not installed"
		return
	fi
	n=$((n + 1))
	local plain under reads=no books=- order trace=$work/$n.perfetto-trace
	plain=$(status env "${env[@]}" xvfb-run -a "${args[@]}")
	under=$(status env "${env[@]}" VK_LOADER_DEBUG=layer "$fs" run -o "$trace" -- xvfb-run -a "${args[@]}")
	order=$(chain)
	if "$fs" stats "$trace" >"$work/stats" 2>&1; then
		reads=yes
		books=balanced
		grep -q 'DOES NOT BALANCE' "$work/stats" && books=UNBALANCED
		grep -q '^ledger: none' "$work/stats" && books=none
	fi
	row "$prog" "$setup" "$plain" "$under" "$reads" "$books" "$order"
}

dev=""
if command -v mpv >/dev/null; then
	dev=$(mpv --no-config --vulkan-device=help 2>/dev/null | sed -n "s/^ *'\(.*\)' (.*/\1/p" | grep -m1 llvmpipe ||
		mpv --no-config --vulkan-device=help 2>/dev/null | sed -n "s/^ *'\(.*\)' (.*/\1/p" | head -1)
fi
for vo in gpu-next gpu; do
	one mpv "--vo=$vo" - -- mpv --no-config "--vo=$vo" --gpu-api=vulkan "--vulkan-device=$dev" --untimed --frames=10 \
		--no-audio --ao=null --idle=no --msg-level=all=warn 'av://lavfi:testsrc=duration=1:size=160x120:rate=10'
done
cube=(vkcube --c 30)
conf=VKBASALT_CONFIG_FILE=$work/vkBasalt.conf
mango=/usr/share/vulkan/implicit_layer.d/MangoHud.json
one vkcube "MangoHud" "$mango" MANGOHUD=1 -- "${cube[@]}"
one vkcube "vkBasalt above" "$basalt" ENABLE_VKBASALT=1 "$conf" -- "${cube[@]}"
one vkcube "vkBasalt below" "$basalt" "$conf" "VK_ADD_LAYER_PATH=$work/explicit" VK_INSTANCE_LAYERS=VK_LAYER_VKBASALT_post_processing -- "${cube[@]}"
one vkcube "MangoHud, vkBasalt above" "$basalt" MANGOHUD=1 ENABLE_VKBASALT=1 "$conf" -- "${cube[@]}"
