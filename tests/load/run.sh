#!/usr/bin/env bash
# Bounded load and soak run of the local gateway (loopback only).
#
# Starts mcp-local with its sample Tool Service on free 127.0.0.1 ports, warms it up, then
# sends a fixed number of mixed requests (initialize, tools/list, tools/call success, a failing
# tool, invalid params; tests/load/mixed.lua) with wrk at a fixed concurrency, sampling the
# server's resident memory. Passes when every request got HTTP 200 with a JSON-RPC body, no
# socket errors occurred, the request mix was exercised, every request left its usage event,
# and resident memory grew less than 10% between the first and the last quarter of the run.
#
#   tests/load/run.sh [--requests N] [--concurrency C] [--warmup N] [--max-seconds S] [--release]
#
# Defaults (the CI variant): 10,000 requests at concurrency 64 after 1,000 warm-up requests,
# at most 300 s, the debug build. Installs wrk (Debian package) when it is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."

requests=10000
concurrency=64
warmup=1000
max_seconds=300
threads=2
profile=debug
while [ $# -gt 0 ]; do
  case "$1" in
    --requests) requests="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --max-seconds) max_seconds="$2"; shift 2 ;;
    --release) profile=release; shift ;;
    *) echo "load: unknown argument $1" >&2; exit 2 ;;
  esac
done

if ! command -v wrk >/dev/null 2>&1; then
  echo "load: installing wrk"
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi

if [ "$profile" = release ]; then
  cargo build -p mcp-local --locked --release
else
  cargo build -p mcp-local --locked
fi
bin="${CARGO_TARGET_DIR:-$PWD/target}/$profile/mcp-local"

work="$(mktemp -d)"
server_pid=""
counter_pid=""
sampler_pid=""
cleanup() {
  for pid in "$sampler_pid" "$server_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

# The server's stdout (JSON logs) goes through a pipe that counts usage events.
mkfifo "$work/stdout"
grep -c '"target":"mcp_gateway::usage"' <"$work/stdout" >"$work/usage-events" &
counter_pid=$!
for name in $(compgen -e | grep '^MCP_' || true); do unset "$name"; done
RUST_LOG=info "$bin" --listen 127.0.0.1:0 --sample-tool-service 127.0.0.1:0 --log-json \
  >"$work/stdout" 2>"$work/stderr" &
server_pid=$!

url=""
for _ in $(seq 1 300); do
  url="$(sed -n 's/^mcp-local: MCP endpoint \(http:[^ ]*\).*/\1/p' "$work/stderr")"
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/stderr" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "load: mcp-local did not start" >&2; exit 1; }
case "$url" in
  http://127.0.0.1:*) ;;
  *) echo "load: refusing a non-loopback target $url" >&2; exit 1 ;;
esac

run_wrk() { # count seconds output
  local done_dir="$work/done-$1"
  mkdir -p "$done_dir"
  LOAD_REQUESTS="$1" LOAD_THREADS="$threads" LOAD_DONE_DIR="$done_dir" \
    wrk -t"$threads" -c"$concurrency" -d"$2"s --timeout 10s -s tests/load/mixed.lua "$url" >"$3" &
  local wrk_pid=$!
  # Every thread stopped at its quota: interrupt wrk's wait for the duration (it then reports).
  while kill -0 "$wrk_pid" 2>/dev/null; do
    if [ "$(find "$done_dir" -type f | wc -l)" -ge "$threads" ]; then
      kill -INT "$wrk_pid" 2>/dev/null || true
      break
    fi
    sleep 0.05
  done
  wait "$wrk_pid" || true
  grep '^{"requests"' "$3" | tail -n 1
}
field() { # name json
  printf '%s\n' "$2" | sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"
}

echo "load: $profile build at $url, $warmup warm-up then $requests requests at concurrency $concurrency"
warm="$(run_wrk "$warmup" "$max_seconds" "$work/warmup.out")"

: >"$work/rss"
(
  while kill -0 "$server_pid" 2>/dev/null; do
    awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status" >>"$work/rss" 2>/dev/null || true
    sleep 0.1
  done
) &
sampler_pid=$!
main="$(run_wrk "$requests" "$max_seconds" "$work/main.out")"
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=""

kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""
wait "$counter_pid" || true
usage_events="$(cat "$work/usage-events")"

failures=()
answered="$(field answered "$main")"
warm_answered="$(field answered "$warm")"
[ -n "$answered" ] || { cat "$work/main.out" >&2; echo "load: wrk printed no summary" >&2; exit 1; }
[ "$answered" -ge "$requests" ] || failures+=("only $answered of $requests requests answered within ${max_seconds}s")
for name in unexpected socket_errors non_2xx; do
  for run in "$warm" "$main"; do
    [ "$(field "$name" "$run")" = 0 ] || failures+=("$name: $(field "$name" "$run")")
  done
done
for name in results tool_errors invalid_params; do
  [ "$(field "$name" "$main")" -gt 0 ] || failures+=("no $name in the mix")
done
# U1 under load: every answered request left its usage event (in-flight ones at the two stops
# may add up to one connection's worth each).
total=$((answered + warm_answered))
if [ "$usage_events" -lt "$total" ] || [ "$usage_events" -gt $((total + 2 * concurrency)) ]; then
  failures+=("$usage_events usage events for $total answered requests")
fi

read -r samples rss_start rss_end first_avg last_avg growth < <(awk '
  { v[NR] = $1 }
  END {
    n = NR; q = int(n / 4); if (q < 1) q = 1
    for (i = 1; i <= q; i++) a += v[i]
    for (i = n - q + 1; i <= n; i++) b += v[i]
    a /= q; b /= q
    printf "%d %d %d %.0f %.0f %.2f\n", n, v[1], v[n], a, b, (b - a) * 100 / a
  }' "$work/rss")
[ "$samples" -ge 8 ] || failures+=("only $samples memory samples: the run was too short to judge")
awk -v g="$growth" 'BEGIN { exit !(g < 10) }' || failures+=("resident memory grew ${growth}% (first quarter ${first_avg} KiB, last ${last_avg} KiB)")

echo "load: $answered requests in $(field seconds "$main") s, unexpected $(field unexpected "$main"), socket errors $(field socket_errors "$main"), non-2xx $(field non_2xx "$main")"
echo "load: results $(field results "$main"), isError results $(field tool_errors "$main"), invalid params $(field invalid_params "$main"), usage events $usage_events (warm-up included)"
echo "load: latency p50 $(field p50_ms "$main") ms, p99 $(field p99_ms "$main") ms, max $(field max_ms "$main") ms"
echo "load: resident memory start ${rss_start} KiB, end ${rss_end} KiB; first-quarter mean ${first_avg} KiB, last-quarter mean ${last_avg} KiB (${growth}%, ${samples} samples)"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'load: FAILED: %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "load: passed"
