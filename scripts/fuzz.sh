#!/usr/bin/env bash
# Runs every fuzz target of the module, one after another, each for
# FUZZTIME (default 60s), then copies the inputs each one found (its
# corpus in the Go build cache) into its package's testdata/fuzz/TARGET,
# where `go test` replays them: commit them.
#
#   FUZZTIME=60s bash scripts/fuzz.sh [PACKAGE-PATTERN...]
#
# It prints each target's last progress line (its execution count) and
# stops at the first target that fails.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-60s}
cache=$($GO env GOCACHE)/fuzz
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
for pkg in $($GO list "${pkgs[@]}"); do
	dir=$($GO list -f '{{.Dir}}' "$pkg")
	for target in $($GO test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "== $pkg $target ($FUZZTIME)"
		log=$(mktemp)
		if ! $GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg" >"$log" 2>&1; then
			cat "$log"
			echo "FAIL: $pkg $target (the failing input is in $dir/testdata/fuzz/$target)"
			exit 1
		fi
		grep -E '^fuzz: elapsed' "$log" | tail -1
		rm -f "$log"
		if [ -d "$cache/$pkg/$target" ]; then
			mkdir -p "$dir/testdata/fuzz/$target"
			cp -n "$cache/$pkg/$target"/* "$dir/testdata/fuzz/$target"/ 2>/dev/null || true
			echo "   corpus: $(ls "$dir/testdata/fuzz/$target" | wc -l) inputs in ${dir#$PWD/}/testdata/fuzz/$target"
		fi
	done
done
