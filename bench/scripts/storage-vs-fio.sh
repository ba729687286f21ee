#!/usr/bin/env bash
# `trainrig bench run storage` beside fio with the same block sizes, queue depths, engine
# (io_uring), O_DIRECT, file size and run time, in alternating runs, each on a file written just
# before with O_DIRECT. fio submits and reaps in batches, as trainrig's io_uring loop does.
# Prints and writes JSON with the medians over the pairs and the ratio trainrig / fio for
# sequential read bandwidth and 4 KiB random-read IOPS, and the median of the per-pair ratios
# with a 95 % bootstrap interval.
# Usage: bench/scripts/storage-vs-fio.sh DIR [PAIRS] [OUT.json]   (needs fio: apt-get install fio)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:?directory on the disk to measure}
pairs=${2:-5}
out=${3:-/dev/null}
bin=${TRAINRIG_BIN:-build/trainrig}
size=${SIZE:-4G}
seconds=${SECONDS_PER_RUN:-5}
fiofile=$(mktemp -p "$dir" fio-compare.XXXXXX)
trap 'rm -f "$fiofile"' EXIT
python3 - "$bin" "$dir" "$pairs" "$out" "$size" "$seconds" "$fiofile" <<'PY'
import json, os, random, statistics, subprocess, sys
binary, d, pairs, out, size, seconds, fiofile = sys.argv[1:8]
pairs = int(pairs)
jobs = {"seq-read": ("read", "1M", 8), "random-read": ("randread", "4k", 32)}
ours = {k: [] for k in jobs}
theirs = {k: [] for k in jobs}
def fio(name):
    rw, bs, depth = jobs[name]
    r = subprocess.run(["fio", "--name=cmp", f"--filename={fiofile}", f"--size={size}", f"--rw={rw}",
                        f"--bs={bs}", f"--iodepth={depth}", "--ioengine=io_uring", "--direct=1",
                        # Submit and reap in batches as trainrig's io_uring loop does; fio's
                        # default (one system call per read) is CPU-bound near 100 kIO/s on a
                        # small VM and would measure fio, not the disk.
                        f"--iodepth_batch_submit={depth}", f"--iodepth_batch_complete_max={depth}",
                        "--time_based", f"--runtime={seconds}", "--output-format=json"],
                       capture_output=True, text=True, check=True)
    job = json.loads(r.stdout)["jobs"][0]["read"]
    return job["bw_bytes"] if name == "seq-read" else job["iops"]
def trainrig():
    r = subprocess.run([binary, "bench", "run", "storage", "--json", "--data-dir", d,
                        "--file-size", size, "--seconds", seconds, "--repeats", "1"],
                       capture_output=True, text=True)
    for rec in json.loads(r.stdout)["results"]:
        assert rec["verified"], rec["verify_detail"]
        ours[rec["name"]].append(rec["median"])
def reference():
    # A freshly written file each time, written as trainrig writes its own (O_DIRECT, then
    # fsync): a hypervisor or disk cache treats data differently by how it was written (fio's
    # own buffered lay-out read back up to 1.7x faster here).
    os.remove(fiofile)
    subprocess.run(["fio", "--name=layout", f"--filename={fiofile}", f"--size={size}", "--rw=write",
                    "--bs=1M", "--iodepth=8", "--ioengine=io_uring", "--direct=1", "--end_fsync=1",
                    "--output-format=json"], capture_output=True, check=True)
    for name in jobs:
        theirs[name].append(fio(name))
for i in range(pairs):  # who goes first alternates, so neither always meets a warmer disk
    for run in ((trainrig, reference) if i % 2 == 0 else (reference, trainrig)):
        run()
result = {"dir": d, "file_size": size, "seconds": float(seconds), "pairs": pairs, "measurements": {}}
rng = random.Random(1)
def interval(ratios):
    # 95 % percentile bootstrap of the median per-pair ratio: on a host whose speed drifts, the
    # two runs of a pair meet the most similar conditions, so their ratio is the fairer sample.
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return meds[50], meds[1949]
for name in jobs:
    a, b = statistics.median(ours[name]), statistics.median(theirs[name])
    per_pair = [x / y for x, y in zip(ours[name], theirs[name])]
    lo, hi = interval(per_pair)
    unit = "bytes/s" if name == "seq-read" else "IO/s"
    result["measurements"][name] = {"unit": unit, "trainrig": a, "fio": b, "ratio": a / b,
                                    "pair_ratio_median": statistics.median(per_pair),
                                    "pair_ratio_95ci": [lo, hi],
                                    "trainrig_runs": ours[name], "fio_runs": theirs[name]}
    shown = (lambda v: f"{v/1e9:7.2f} GB/s") if name == "seq-read" else (lambda v: f"{v/1e3:7.1f} kIO/s")
    print(f"{name:12} trainrig {shown(a)}   fio {shown(b)}   ratio {a/b:5.3f}   "
          f"per pair {statistics.median(per_pair):5.3f} [{lo:5.3f}, {hi:5.3f}]")
json.dump(result, open(out, "w"), indent=2)
PY
