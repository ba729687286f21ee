#!/usr/bin/env bash
# The cost of `trainrig watch`: CPU time per tick with 8 GPUs (the fake NVML answering for the
# 8-GPU HGX fixture) at 1 Hz, and /metrics latency under concurrent scrapes (wrk, Debian).
# Usage: bench/scripts/watch-overhead.sh [SECONDS] [OUT.json]   (needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
out=${2:-/dev/null}
bin=${TRAINRIG_BIN:-build/trainrig}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
TRAINRIG_FAKE_NVML=tests/fixtures/nvml/hgx-8xh100.json "$bin" watch --interval 1 \
    --listen 127.0.0.1:$port --root tests/fixtures/machines/hgx-8xh100 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 2
ticks_per_s=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' /proc/$pid/stat; }  # utime + stime, in clock ticks
c0=$(cpu); t0=$(date +%s.%N)
sleep "$seconds"
c1=$(cpu); t1=$(date +%s.%N)
wrk_out=$(wrk -t2 -c8 -d10s --latency "http://127.0.0.1:$port/metrics")
python3 - "$c0" "$c1" "$t0" "$t1" "$ticks_per_s" "$out" "$wrk_out" <<'PY'
import json, re, sys
c0, c1, t0, t1, hz = (float(x) for x in sys.argv[1:6])
out, wrk = sys.argv[6], sys.argv[7]
wall = t1 - t0
cpu_s = (c1 - c0) / hz
def ms(label):
    m = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", wrk, re.M)
    v, unit = float(m.group(1)), m.group(2)
    return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", wrk).group(1))
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", wrk)
r = {"gpus": 8, "interval_s": 1, "wall_s": wall, "cpu_s": cpu_s,
     "cpu_percent_of_one_core": 100 * cpu_s / wall, "cpu_ms_per_tick": 1000 * cpu_s / wall,
     "scrape": {"tool": "wrk -t2 -c8 -d10s", "requests_per_s": rps, "p50_ms": ms(50),
                "p90_ms": ms(90), "p99_ms": ms(99), "non_2xx": int(errors.group(1)) if errors else 0}}
print(json.dumps(r, indent=2))
json.dump(r, open(out, "w"), indent=2)
PY
