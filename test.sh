#!/usr/bin/env bash
# test.sh: ctxfit's test command. On a fresh machine with Go and Node 20 (npm) it needs nothing
# else: modules come from the Go module proxy and the npm registry. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")"

# section NAME: prints a section's heading with the seconds since the start, so a slow run says where its
# time went.
start=$SECONDS
section() { echo "== [$((SECONDS - start)) s] $*"; }

section "gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

# The repository is a core module and nested modules (the MCP adapters, the proxy, the gateway, the Redis and
# OpenTelemetry drivers, the command, the examples and the end-to-end tests), joined by go.work: the import-path
# pattern covers them all, where ./... would stop at the core module's boundary.
all=github.com/ctxfit/ctxfit/...

# apt_install PACKAGE COMMAND: installs the Debian package when COMMAND is missing.
apt_install() {
  if command -v "$2" >/dev/null; then return 0; fi
  local sudo="" out
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo=sudo; fi
  if [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; then
    echo "installing $1"
    # quiet: apt's progress is hundreds of lines; its output is shown when it fails
    out=$($sudo env DEBIAN_FRONTEND=noninteractive apt-get -qq update 2>&1 &&
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get -qq install -y "$1" 2>&1) || { echo "$out"; return 1; }
  else
    echo "$2 is missing and cannot be installed (not root, no sudo)"
    return 1
  fi
}

# The installs wait on the network and the disk, not the processors: they run in the background, their output
# in a log each that is shown when they are waited for, while the module checks below and the compilation of
# the race section's first packages use the processors.
logs=$(mktemp -d)
(
  apt_install redis-server redis-server || echo "the Redis tests will skip (fail under CI)"
  apt_install prometheus promtool || exit 1
  apt_install chromium chromium || echo "the browser test will skip (fail under CI)"
) >"$logs/apt" 2>&1 &
apt=$!
(cd e2e/ts && npm ci --no-audit --no-fund --loglevel=error) >"$logs/npm" 2>&1 &
npm=$!
# stopjobs: a run that stops early (an untidy module) leaves no install running behind it.
# shellcheck disable=SC2046 # one argument per job
stopjobs() { kill $(jobs -p) 2>/dev/null || true; }
trap stopjobs EXIT
# waitfor PID LOG WHAT: waits for a background install, shows its log, and stops the run when it failed.
waitfor() {
  local rc=0
  wait "$1" || rc=$?
  cat "$2"
  if [ "$rc" != 0 ]; then echo "$3 failed (exit $rc)"; exit 1; fi
}

section "go mod tidy -diff, each module on its own (GOWORK=off: what a user of that module gets)"
for dir in $(go list -m -f '{{.Dir}}'); do
  (cd "$dir" && GOWORK=off go mod tidy -diff) || { echo "go.mod or go.sum of $dir is not tidy: run (cd $dir && GOWORK=off go mod tidy)"; exit 1; }
done

# gotest ARGS...: go test -json ARGS through scripts/testsum: a line per package, the whole output of each failed
# test (nothing of those that passed), the failed tests listed at the end of the section (where a long log is read
# first); the counts add up for the closing line.
tools=$(mktemp -d)
counts="$tools/counts"
go build -o "$tools/testsum" ./scripts/testsum
closing() { stopjobs; echo "== [$((SECONDS - start)) s] $("$tools/testsum" -total "$counts")"; rm -rf "$tools"; }
trap closing EXIT
gotest() {
  go test -json "$@" 2>&1 | "$tools/testsum" -counts "$counts"   # pipefail: fails when a test or a build failed
}

section "redis-server, promtool (Debian's prometheus package), chromium: installed in the background (the Redis store's tests run against a real Redis; promtool checks the alert rules of monitoring/; chromedp drives chromium in the browser test of the --ui page)"
waitfor "$apt" "$logs/apt" "installing the Debian packages"
promtool check rules monitoring/alerts.yml
(cd monitoring && promtool test rules alerts_test.yml)

section "go test -race -short -vet=all (every package but e2e)"
# e2e drives subprocesses (ctxfit, the examples, npm's MCP servers, Prism) built without -race, so -race would
# check only its harness, at half again its time: it runs once, without -race, in its own section below.
# -short: the race detector looks for goroutines that share memory, which small inputs show as well as large
# ones at a tenth of the time, so under -race the property tests run on smaller inputs and the exhaustive
# comparisons with gojq are left out; everything runs in full in the Go 1.27 section, without -race.
e2e=github.com/ctxfit/ctxfit/e2e
pkgs=$(go list "$all" | grep -vx "$e2e")
# -vet=all: go vet's every check, on the packages the race section compiles anyway (a go vet of its own compiled
# every dependency a second time, a minute on two cores); a package without tests is vetted as well.
# shellcheck disable=SC2086 # one argument per package
gotest -race -short -vet=all -shuffle=on -count=1 -timeout 30m $pkgs

section "npm ci (e2e/ts: the TypeScript MCP client and the third-party MCP servers of the end-to-end tests, as package-lock.json pins them): installed in the background"
waitfor "$npm" "$logs/npm" "npm ci in e2e/ts"
rm -rf "$logs"

section "go test -vet=all of e2e (real listeners, real MCP subprocesses, the TypeScript client)"
gotest -vet=all -shuffle=on -count=1 -timeout 30m "$e2e"

section "go test on Go 1.27, every test at full size and every benchmark once (without -race and e2e; the go command fetches the go1.27.3 toolchain from the module proxy)"
# The benchmarks check their own output (the figures come from the commands in docs/benchmarks.md); running them
# here, once each, shares the test binaries this section builds anyway.
# shellcheck disable=SC2086
GOTOOLCHAIN=go1.27.3 gotest -count=1 -bench . -benchtime=1x -timeout 30m $pkgs

section "benchmarks module (comparison with langchaingo; its tests check the ratio's inputs)"
(cd benchmarks && export GOWORK=off && go vet ./... && gotest -count=1 ./...)   # its own module, outside the workspace

section "go doc leaves the checkout as it was (go.work.sum holds every sum the workspace's module graph needs)"
go doc github.com/ctxfit/ctxfit >/dev/null
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && ! git diff --quiet -- go.work.sum; then
  git diff -- go.work.sum
  echo "go.work.sum changed: commit the lines above (go doc, go list -m all and gopls read the whole module graph)"
  exit 1
fi

section "release: every published module at a throwaway version as a module proxy; go install and go get from it, offline"
scripts/releasecheck.sh

section "load test (short)"
scripts/load.sh --short

section "done"
