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
				targets+=("$pkg $name")
			fi
		done
	done < <(cd "$mod" && go list -f '{{.ImportPath}} {{.Dir}}' ./...)
done
if [[ ${#targets[@]} -eq 0 ]]; then
	echo "fuzz.sh: no fuzz target matches ${filter:-anything}" >&2
	exit 1
fi

echo "== ${#targets[@]} fuzz targets, $duration each"
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $pkg $name"
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$duration"
done
echo "== every fuzz target ran $duration without a failure"
