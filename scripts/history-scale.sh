#!/usr/bin/env bash
# framescope history at scale, on this machine: 10,000 commits of 1,000
# zones (cmd/framescope/history's TestMakeScaleHistory: a p50 and a p95
# each, zone 7 5% slower from the fifth newest commit), on SQLite and on a
# PostgreSQL server of the script's own; then, ROUNDS times on each store,
# the CLI's check -last 10000 and show -json -last 10000, each under GNU
# time (wall clock and peak RSS).
#   scripts/history-scale.sh [OUT]      (OUT: docs/measurements/history-check-scale.txt)
# FRAMESCOPE_HISTORY_SCALE=COMMITS makes the history smaller, ROUNDS (3)
# sets the rounds.
set -eu
out=${1:-docs/measurements/history-check-scale.txt}
rounds=${ROUNDS:-3}
commits=${FRAMESCOPE_HISTORY_SCALE:-10000}
pgbin=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
work=$(mktemp -d /tmp/framescope-scale-XXXXXX)
chmod 755 "$work"
as=()
if [ "$(id -u)" = 0 ]; then as=(runuser -u postgres --); chown postgres "$work"; fi
stop() { "${as[@]}" "$pgbin/pg_ctl" -D "$work/pg" -w -s -m fast stop || true; rm -rf "$work"; }
trap stop EXIT
go build -o "$work/framescope" ./cmd/framescope
"${as[@]}" "$pgbin/initdb" -D "$work/pg" -U postgres -A trust -E UTF8 --no-sync >/dev/null
"${as[@]}" "$pgbin/pg_ctl" -D "$work/pg" -w -s -l "$work/pg.log" -o "-k $work -c listen_addresses=''" start
"${as[@]}" "$pgbin/createdb" -h "$work" -U postgres framescope
declare -A dsn=([sqlite]="sqlite:$work/scale.db" [postgres]="postgres://postgres@/framescope?host=$work")
{
	echo "# framescope history at scale: $commits commits of 1,000 zones (a p50 and a p95 each), one run a commit"
	echo "# $(date -u +%F), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit $(git rev-parse --short HEAD)"
	echo "# scripts/history-scale.sh; each line: GNU time's wall clock and peak RSS"
	for store in sqlite postgres; do
		start=$(date +%s)
		FRAMESCOPE_HISTORY_SCALE_DSN=${dsn[$store]} FRAMESCOPE_HISTORY_SCALE=$commits \
			go test -count=1 -timeout 120m -run '^TestMakeScaleHistory$' ./cmd/framescope/history >/dev/null
		echo
		echo "## $store (made in $(($(date +%s) - start)) s by history add's Store.Add, a commit at a time)"
		for r in $(seq 1 "$rounds"); do
			for what in "check -last $commits" "show -json -last $commits"; do
				# shellcheck disable=SC2086
				/usr/bin/time -f "%e s %M KB" -o "$work/time" "$work/framescope" history $what -db "${dsn[$store]}" -testbed scale \
					>"$work/stdout" 2>&1 || true
				t=$(tail -1 "$work/time") # after "Command exited with non-zero status N" (check's verdict)
				printf 'round %d  %-28s %8s s  %5d MB peak RSS  %s\n' "$r" "$what" "${t%% *}" \
					"$(($(echo "$t" | cut -d' ' -f3) / 1024))" "$(head -1 "$work/stdout" | cut -c1-100)"
			done
		done
		"$work/framescope" history check -last "$commits" -db "${dsn[$store]}" -testbed scale | sed 's/^/  /' | head -4 || true
	done
} | tee "$out"
