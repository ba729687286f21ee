#!/usr/bin/env bash
# `trainrig bench run cpu-mem` beside McCalpin's STREAM on the same array size, thread count and
# pinning, in alternating runs so both see the same machine state. Prints and writes JSON with
# the best rates (STREAM's "Best Rate", our max) and the mean-time rates (bytes over the mean time
# of the timed rounds, which is how STREAM's "Avg time" column turns into a rate; ours computed
# the same way from our samples), and the ratio trainrig / STREAM for copy and triad.
#
# STREAM is not part of trainrig: build it yourself from stream.c (www.cs.virginia.edu/stream)
# with the element count you pass here, e.g.
#   gcc -O3 -fopenmp -mcmodel=medium -DSTREAM_ARRAY_SIZE=100000000 -DNTIMES=11 stream.c -o stream
# (NTIMES 11 = our 1 untimed + 10 timed rounds).
# Usage: bench/scripts/cpu-mem-vs-stream.sh STREAM_BINARY ELEMENTS [PAIRS] [OUT.json]
set -euo pipefail
cd "$(dirname "$0")/../.."
stream=${1:?STREAM binary}
elements=${2:?elements per array STREAM was built with}
pairs=${3:-5}
out=${4:-/dev/null}
bin=${TRAINRIG_BIN:-build/trainrig}
threads=$(nproc)
python3 - "$bin" "$stream" "$elements" "$pairs" "$threads" "$out" <<'PY'
import json, os, re, statistics, subprocess, sys
binary, stream, elements, pairs, threads, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="spread", OMP_PLACES="cores")
counted = {"copy": 16 * elements, "triad": 24 * elements}
ours = {k: {"best": [], "mean_time": []} for k in counted}
theirs = {k: {"best": [], "mean_time": []} for k in counted}
for i in range(pairs):
    r = subprocess.run([binary, "bench", "run", "cpu-mem", "--json", "--threads", str(threads),
                        "--array-bytes", str(8 * elements), "--repeats", "10"],
                       capture_output=True, text=True)
    doc = json.loads(r.stdout)
    for rec in doc["results"]:
        if rec["target"].get("cpus") == "all" and rec["name"] in ours:
            assert rec["verified"], rec["verify_detail"]
            ours[rec["name"]]["best"].append(rec["max"])
            times = [counted[rec["name"]] / s for s in rec["samples"]]
            ours[rec["name"]]["mean_time"].append(counted[rec["name"]] / statistics.mean(times))
    text = subprocess.run([stream], capture_output=True, text=True, env=env).stdout
    assert "Solution Validates" in text, text
    for name, label in (("copy", "Copy"), ("triad", "Triad")):
        m = re.search(rf"^{label}:\s+([\d.]+)\s+([\d.]+)", text, re.M)
        theirs[name]["best"].append(float(m.group(1)) * 1e6)
        theirs[name]["mean_time"].append(counted[name] / float(m.group(2)))
result = {"elements": elements, "threads": threads, "pairs": pairs, "kernels": {}}
for name in counted:
    entry = {}
    for kind in ("best", "mean_time"):
        a, b = statistics.median(ours[name][kind]), statistics.median(theirs[name][kind])
        entry[kind] = {"trainrig_bytes_per_s": a, "stream_bytes_per_s": b, "ratio": a / b,
                       "trainrig_runs": ours[name][kind], "stream_runs": theirs[name][kind]}
        print(f"{name:6} {kind:9} trainrig {a/1e9:6.2f} GB/s   STREAM {b/1e9:6.2f} GB/s   ratio {a/b:5.3f}")
    result["kernels"][name] = entry
json.dump(result, open(out, "w"), indent=2)
PY
