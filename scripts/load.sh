#!/usr/bin/env bash
# load.sh: load test of ctxfit's net/http middleware with wrk, bare against wrapped.
#
#   scripts/load.sh [--duration 60s] [--connections 64] [--short]
#
# Builds examples/httpserver and scripts/loadcheck, then runs three phases on
# 127.0.0.1 (free ports; nothing leaves the machine), each for --duration at
# --connections:
#
#   bare     httpserver -raw: the same API without the middleware
#   wrapped  httpserver behind the middleware, in-memory snapshot store bounded
#            by CTXFIT_STORE_MAX_BYTES (64 MiB)
#   redis    two wrapped instances sharing one redis-server (CTXFIT_REDIS_URL,
#            same CTXFIT_SECRET); two wrk processes, half the connections each
#
# wrk runs scripts/load.lua: first pages (with and without status/order
# filters), follow-up cursors kept from responses, drill-downs (?fields=all),
# log chunks and bad cursors. Meanwhile scripts/loadcheck walks all 500
# bookings (and filtered lists) through the cursors of the wrapped server(s),
# alternating instances page by page in the redis phase, and samples VmRSS.
#
# It fails (exit 1) on: any 5xx in any phase; any lost, duplicated or
# misordered item in a cursor walk; a bad cursor not answered with 400; the
# wrapped servers' VmRSS above CTXFIT_STORE_MAX_BYTES + RSS_MARGIN_MIB. It
# never fails on throughput or latency: those are reported, side by side,
# with the wrapped phases' requests per second as a share of the bare one's.
#
# --short (what test.sh runs): 3 s per phase, 8 connections, about 10 s of
# load in total.
#
# wrk (Debian package wrk) is installed with apt-get when missing, as root or
# through sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=60s
connections=64
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --duration=*) duration=${1#*=}; shift ;;
    --connections) connections=$2; shift 2 ;;
    --connections=*) connections=${1#*=}; shift ;;
    --short) duration=3s; connections=8; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "load.sh: unknown argument $1 (usage: load.sh [--duration 60s] [--connections 64] [--short])" >&2; exit 2 ;;
  esac
done
case "$duration" in
  *[0-9]s) secs=${duration%s} ;;
  *[0-9]m) secs=$(( ${duration%m} * 60 )) ;;
  *[0-9]) secs=$duration; duration=${duration}s ;;
  *) echo "load.sh: --duration must be like 60s or 2m" >&2; exit 2 ;;
esac
if ! [ "$secs" -ge 1 ] 2>/dev/null || ! [ "$connections" -ge 2 ] 2>/dev/null; then
  echo "load.sh: need --duration >= 1s and --connections >= 2" >&2; exit 2
fi

# The store bound and the memory margin. The margin covers what is not the
# snapshot store's data: the Go runtime and binary (~20 MiB); the GC's
# headroom (GOGC=100 lets the heap grow to twice the live heap before a
# collection, so the full 64 MiB store can show up twice); per-request
# buffers, which grow with the connections (a wrapped response is buffered
# whole, the log is ~1 MB and the list ~150 KB, plus their JSON decoding and
# token counting); the response and tokenizer caches; goroutine stacks.
# Measured on 2 CPUs: 225 MiB peak at 8 connections, 350 MiB at 64 with the
# in-memory store, 170 MiB at 32 with Redis. Hence 200 MiB + 3 MiB per
# connection (224 MiB at 8, 392 MiB at 64): ~30% above the peaks seen, while a
# leak of snapshots, buffers or goroutines crosses it within seconds at these
# request rates. RSS_MARGIN_MIB overrides it.
STORE_MAX_BYTES=$((64 << 20))
RSS_MARGIN_MIB=${RSS_MARGIN_MIB:-$((200 + 3 * connections))}
rss_limit=$((STORE_MAX_BYTES + (RSS_MARGIN_MIB << 20)))

if ! command -v wrk >/dev/null; then
  echo "== load: installing wrk"
  if [ "$(id -u)" = 0 ]; then
    apt-get update && apt-get install -y wrk
  elif command -v sudo >/dev/null; then
    sudo apt-get update && sudo apt-get install -y wrk
  else
    echo "load.sh: wrk is missing and cannot be installed (not root, no sudo)" >&2; exit 1
  fi
fi
if ! command -v redis-server >/dev/null; then
  echo "load.sh: redis-server is missing (test.sh installs it; or apt-get install redis-server)" >&2; exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctxfit-load.XXXXXX")
pids=()
redis_pidfile=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "$redis_pidfile" ] && [ -s "$redis_pidfile" ]; then
    local rp; rp=$(cat "$redis_pidfile")
    kill "$rp" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$rp" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== load: building examples/httpserver and scripts/loadcheck"
go build -o "$tmp/httpserver" ./examples/httpserver
go build -o "$tmp/loadcheck" ./scripts/loadcheck

secret=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
threads_for() { if [ "$1" -ge 2 ]; then echo 2; else echo 1; fi; }

# start_server NAME [ENV=VALUE...] [-- FLAGS...]: starts httpserver on a free
# port of 127.0.0.1 (-addr 127.0.0.1:0; the port is read back from its log),
# sets SERVER_PID and SERVER_URL.
start_server() {
  local name=$1; shift
  local envs=() flags=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  flags=("$@")
  env -u CTXFIT_CONFIG -u CTXFIT_REDIS_URL CTXFIT_SECRET="$secret" CTXFIT_STORE_MAX_BYTES="$STORE_MAX_BYTES" \
    ${envs[@]+"${envs[@]}"} "$tmp/httpserver" -addr 127.0.0.1:0 ${flags[@]+"${flags[@]}"} >"$tmp/$name.log" 2>&1 &
  SERVER_PID=$!
  pids+=("$SERVER_PID")
  local addr=""
  for _ in $(seq 200); do
    addr=$(sed -n 's/.*httpserver: listening" addr=http:\/\/\([0-9.:]*\).*/\1/p' "$tmp/$name.log" | head -n1)
    [ -n "$addr" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$addr" ]; then
    echo "load.sh: $name did not start:" >&2; cat "$tmp/$name.log" >&2; exit 1
  fi
  SERVER_URL="http://$addr"
}

stop_server() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

start_redis() {
  local port
  for _ in 1 2 3 4 5; do
    port=$(( 20000 + RANDOM % 30000 ))
    # A port something already answers on is taken.
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
    redis_pidfile="$tmp/redis.pid"
    # maxmemory: every first page puts a snapshot (up to ~1 MB for the log) with
    # the cursor TTL; without a bound a 60 s run would fill gigabytes.
    # allkeys-lru evicts the snapshots no one follows any more first.
    if redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
        --daemonize yes --pidfile "$redis_pidfile" --dir "$tmp" --logfile "$tmp/redis.log" \
        --maxmemory 256mb --maxmemory-policy allkeys-lru; then
      for _ in $(seq 50); do
        if [ -s "$redis_pidfile" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
          REDIS_URL="redis://127.0.0.1:$port/0"; return 0
        fi
        sleep 0.1
      done
    fi
  done
  echo "load.sh: could not start redis-server:" >&2; cat "$tmp/redis.log" >&2 2>/dev/null || true; exit 1
}

failed=0
rows=()

# field LINE KEY: the value of KEY=... in LINE.
field() { sed -n "s/.*[ ]$2=\([^ ]*\).*/\1/p" <<<" $1"; }

# run_wrk NAME URL CONNECTIONS: runs wrk in the background; its output goes to
# $tmp/NAME.wrk; sets WRK_PID.
run_wrk() {
  wrk -t "$(threads_for "$3")" -c "$3" -d "$duration" --timeout 10s --latency \
    -s scripts/load.lua "$2" >"$tmp/$1.wrk" 2>&1 &
  WRK_PID=$!
  pids+=("$WRK_PID")
}

# wrk_result NAME: sets RESULT to the LOADRESULT line of a finished wrk and
# checks its 5xx.
wrk_result() {
  RESULT=$(grep '^LOADRESULT' "$tmp/$1.wrk" || true)
  if [ -z "$RESULT" ]; then
    echo "FAIL: wrk $1 printed no result:" >&2; cat "$tmp/$1.wrk" >&2; failed=1; return
  fi
  echo "$1: $RESULT"
  local s5; s5=$(field "$RESULT" s5xx)
  if [ "$s5" != 0 ]; then
    echo "FAIL: $1: $s5 responses with a 5xx status" >&2; failed=1
  fi
}

# add_row PHASE RPS P50 P90 P99 REQUESTS 4XX STALE 5XX: a row of the table.
add_row() {
  rows+=("$(printf '| %-22s | %10s | %8s | %8s | %8s | %8s | %8s | %8s | %5s |' "$@")")
}

# row_for NAME LINE: a table row for one wrk.
row_for() {
  local name=$1 line=$2
  add_row "$name" "$(field "$line" rps)" "$(field "$line" p50_ms)" "$(field "$line" p90_ms)" "$(field "$line" p99_ms)" \
    "$(field "$line" requests)" "$(field "$line" s4xx)" "$(field "$line" stale)" "$(field "$line" s5xx)"
}

check_result() {
  local name=$1 rc=$2
  cat "$tmp/$name.check"
  if [ "$rc" != 0 ]; then
    echo "FAIL: $name: the cursor-walk/memory checker failed (see above)" >&2; failed=1
  fi
}

echo "== load: $duration per phase, $connections connections, VmRSS limit $((rss_limit >> 20)) MiB (store $((STORE_MAX_BYTES >> 20)) MiB + margin $RSS_MARGIN_MIB MiB)"

# Phase 1: bare.
echo "-- bare (httpserver -raw)"
start_server bare -- -raw
bare_pid=$SERVER_PID
run_wrk bare "$SERVER_URL" "$connections"
wait "$WRK_PID" || { echo "FAIL: wrk bare exited $?" >&2; failed=1; }
wrk_result bare; [ -n "$RESULT" ] && row_for "bare" "$RESULT"
bare_rps=$(field "$RESULT" rps)
stop_server "$bare_pid"

# Phase 2: wrapped, in-memory store.
echo "-- wrapped (in-memory store)"
start_server wrapped
wrapped_pid=$SERVER_PID
"$tmp/loadcheck" -urls "$SERVER_URL" -duration "$duration" -pids "$wrapped_pid" -rss-limit "$rss_limit" >"$tmp/wrapped.check" 2>&1 &
check_pid=$!; pids+=("$check_pid")
run_wrk wrapped "$SERVER_URL" "$connections"
wait "$WRK_PID" || { echo "FAIL: wrk wrapped exited $?" >&2; failed=1; }
wrk_result wrapped; [ -n "$RESULT" ] && row_for "wrapped" "$RESULT"
wrapped_rps=$(field "$RESULT" rps)
rc=0; wait "$check_pid" || rc=$?
check_result wrapped "$rc"
stop_server "$wrapped_pid"

# Phase 3: two wrapped instances sharing one redis-server.
echo "-- wrapped x2 (shared redis-server)"
start_redis
start_server redisA CTXFIT_REDIS_URL="$REDIS_URL"
a_pid=$SERVER_PID; a_url=$SERVER_URL
start_server redisB CTXFIT_REDIS_URL="$REDIS_URL"
b_pid=$SERVER_PID; b_url=$SERVER_URL
"$tmp/loadcheck" -urls "$a_url,$b_url" -duration "$duration" -pids "$a_pid,$b_pid" -rss-limit "$rss_limit" >"$tmp/redis.check" 2>&1 &
check_pid=$!; pids+=("$check_pid")
half=$((connections / 2))
run_wrk redisA "$a_url" "$half"; wa=$WRK_PID
run_wrk redisB "$b_url" "$((connections - half))"; wb=$WRK_PID
wait "$wa" || { echo "FAIL: wrk redisA exited" >&2; failed=1; }
wait "$wb" || { echo "FAIL: wrk redisB exited" >&2; failed=1; }
wrk_result redisA; la=$RESULT
wrk_result redisB; lb=$RESULT
redis_rps=""
if [ -n "$la" ] && [ -n "$lb" ]; then
  redis_rps=$(awk -v a="$(field "$la" rps)" -v b="$(field "$lb" rps)" 'BEGIN{printf "%.1f", a+b}')
  row_for "redis: instance A" "$la"
  row_for "redis: instance B" "$lb"
  add_row "redis: A+B (sum)" "$redis_rps" "" "" "" \
    "$(( $(field "$la" requests) + $(field "$lb" requests) ))" \
    "$(( $(field "$la" s4xx) + $(field "$lb" s4xx) ))" "$(( $(field "$la" stale) + $(field "$lb" stale) ))" \
    "$(( $(field "$la" s5xx) + $(field "$lb" s5xx) ))"
fi
rc=0; wait "$check_pid" || rc=$?
check_result redis "$rc"

echo
echo "Load: scripts/load.sh --duration $duration --connections $connections ($(nproc) CPUs; wrk and the servers share them)"
echo
echo "| phase                  |      req/s |  p50 ms  |  p90 ms  |  p99 ms  | requests |  4xx (*) | stale (*)|   5xx |"
echo "|------------------------|-----------:|---------:|---------:|---------:|---------:|---------:|---------:|------:|"
for r in "${rows[@]}"; do echo "$r"; done
echo
# The throughput goal (issue 13): the wrapped server at 50% or more of the
# bare one's requests per second. Reported, never asserted: a loaded machine
# must not fail the run on timing.
ratio() { awk -v w="$1" -v b="$2" 'BEGIN{ if (b > 0 && w != "") printf "%.0f%%", 100 * w / b; else printf "n/a" }'; }
echo "Throughput against bare (goal: 50% or more; reported, not checked):" \
  "wrapped $(ratio "${wrapped_rps:-}" "${bare_rps:-}"), redis A+B $(ratio "$redis_rps" "${bare_rps:-}")"
echo
echo "(*) 4xx: the bad cursors of the mix (the wrapped server answers 400; the bare one ignores them)"
echo "    and, counted again under stale, follow-ups whose snapshot the bounded store had evicted"
echo "    (400 cursor_stale, the documented answer). The checker's walks restart on those."

if [ "$failed" != 0 ]; then
  echo "== load: FAILED" >&2
  for f in "$tmp"/*.log; do
    echo "--- $(basename "$f") (errors, then the tail)" >&2
    # What the servers said of their errors: each problem code, counted.
    grep -o 'error_type=[a-z_]*\|level=ERROR.*\|level=WARN.*' "$f" | cut -c1-200 | sort | uniq -c | sort -rn | head -n 5 >&2 || true
    tail -n 5 "$f" >&2
  done
  exit 1
fi
echo "== load: ok"
