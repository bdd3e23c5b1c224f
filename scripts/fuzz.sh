#!/usr/bin/env bash
# fuzz.sh: runs every fuzz target of every module in go.work, one after the
# other, for DURATION each (default 60s), and stops at the first failure
# (go test writes the failing input under the package's testdata/fuzz; add
# it to the commit that fixes the bug, as a regression seed).
#
#   scripts/fuzz.sh            # 60s per target
#   scripts/fuzz.sh 5s         # a quick pass
#   scripts/fuzz.sh 60s Query  # only the targets whose name matches Query
#
# ./test.sh runs the seeds of every target (testdata/fuzz and f.Add) as
# ordinary tests; this script searches for new failing inputs. It takes
# DURATION times the number of targets, plus a build per package.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-60s}
filter=${2:-}

targets=()
for mod in $(go list -m -f '{{.Dir}}'); do
	while read -r pkg dir; do
		for name in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
			if [[ -z $filter || $name =~ $filter ]]; then
				targets+=("$pkg $name $dir")
			fi
		done
	done < <(cd "$mod" && go list -f '{{.ImportPath}} {{.Dir}}' ./...)
done
if [[ ${#targets[@]} -eq 0 ]]; then
	echo "fuzz.sh: no fuzz target matches ${filter:-anything}" >&2
	exit 1
fi

# Go 1.26's fuzz coordinator can report "context deadline exceeded" when
# -fuzztime runs out while a worker is busy, with no failing input
# (go.dev/issue/75804, fixed in Go 1.27). Such a run is retried once; a
# failure that writes an input under testdata/fuzz always stops the script.
fuzz() { # pkg name dir -> 0 passed, 1 failed, 2 the coordinator's race
	local pkg=$1 name=$2 corpus="$3/testdata/fuzz/$2" before after log status=0
	before=$(ls "$corpus" 2>/dev/null | wc -l)
	log=$(mktemp)
	set +e
	# -fuzzminimizetime bounds the minimizing of each new interesting input by
	# runs, not time: at its default (60s) a target whose runs take 0.1 s
	# spends its whole DURATION minimizing and runs 30 inputs.
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" -fuzzminimizetime 20x 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	set -e
	after=$(ls "$corpus" 2>/dev/null | wc -l)
	if [[ $status -ne 0 && $before -eq $after ]] && tail -5 "$log" | grep -q 'context deadline exceeded'; then
		status=2
	elif [[ $status -ne 0 ]]; then
		status=1
	fi
	rm -f "$log"
	return $status
}

echo "== ${#targets[@]} fuzz targets, $duration each"
for t in "${targets[@]}"; do
	read -r pkg name dir <<<"$t"
	echo "== $pkg $name"
	status=0
	fuzz "$pkg" "$name" "$dir" || status=$?
	if [[ $status -eq 2 ]]; then
		echo "== $name: Go's fuzz coordinator hit its deadline race (go.dev/issue/75804), no failing input; once more"
		status=0
		fuzz "$pkg" "$name" "$dir" || status=$?
	fi
	if [[ $status -ne 0 ]]; then
		echo "== $pkg $name failed" >&2
		exit 1
	fi
done
echo "== every fuzz target ran $duration without a failure"
