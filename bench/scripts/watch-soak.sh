#!/usr/bin/env bash
# A soak of `trainrig watch`: 8 fake GPUs (the HGX fixture), ticks every 0.05 s (20x the
# default rate, to age it faster), the history on, the default rules, and a scrape of /metrics
# every 0.1 s, for SECONDS; its resident memory is read every 30 s. Memory that keeps growing
# after the first minute is a leak.
# Usage: bench/scripts/watch-soak.sh [SECONDS] [OUT.json]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
out=${2:-/dev/null}
bin=${TRAINRIG_BIN:-build/trainrig}
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
TRAINRIG_FAKE_NVML=tests/fixtures/nvml/hgx-8xh100.json "$bin" watch --interval 0.05 \
    --listen 127.0.0.1:$port --root tests/fixtures/machines/hgx-8xh100 --db "$work/w.db" \
    2>"$work/err" &
pid=$!
sleep 1
( while kill -0 $pid 2>/dev/null; do curl -s -o /dev/null "http://127.0.0.1:$port/metrics"; sleep 0.1; done ) &
rss=()
start=$(date +%s)
while [ $(( $(date +%s) - start )) -lt "$seconds" ]; do
    rss+=("$(( $(date +%s) - start )):$(awk '/VmRSS/ {print $2}' /proc/$pid/status)")
    sleep 30
done
rss+=("$(( $(date +%s) - start )):$(awk '/VmRSS/ {print $2}' /proc/$pid/status)")
ticks=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^trainrig_watch_ticks_total/ {print $2}')
python3 - "$out" "$seconds" "$ticks" "$(du -k "$work/w.db" | cut -f1)" "${rss[@]}" <<'PY'
import json, sys
out, seconds, ticks, db_kib = sys.argv[1], float(sys.argv[2]), int(float(sys.argv[3])), int(sys.argv[4])
points = [tuple(int(x) for x in p.split(":")) for p in sys.argv[5:]]
after_warmup = [kib for t, kib in points if t >= 60]
r = {"seconds": seconds, "gpus": 8, "interval_s": 0.05, "ticks": ticks, "db_kib": db_kib,
     "rss_kib": [{"t": t, "kib": kib} for t, kib in points],
     "rss_growth_after_60s_kib": (after_warmup[-1] - after_warmup[0]) if after_warmup else None}
print(json.dumps(r, indent=2))
json.dump(r, open(out, "w"), indent=2)
PY
