#!/usr/bin/env bash
# trainrig's checks on a machine with an NVIDIA GPU. Runs doctor, collect and topo on the real
# machine, the gpu-labelled tests (NVML probe against nvidia-smi), checks that a snapshot judged
# offline gives the same findings, cross-checks doctor's PCI facts against nvidia-smi, and times
# `trainrig doctor` beside `nvidia-smi -q` (pairs run in turn, medians and the ratio), then runs
# every GPU benchmark (`bench run ... --quick`) and the same measurements through PyTorch on the
# same GPU, and records the ratios trainrig / PyTorch; then checks the CUDA training backend
# against the CPU reference, trains GPT-2 124M on it (tokens/s, MFU, phases, memory) and PyTorch
# on the same shape, and records that ratio too. Under ten minutes on one GPU.
# Everything lands as files under $OUT (default build/gpu-check-out).
# Usage: scripts/gpu-check.sh [BUNDLE]   (BUNDLE from scripts/gpu-bundle.sh, default build/gpu-bundle)
# Read-only: it never changes clocks, power, persistence or MIG settings.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-build/gpu-bundle}
out=${OUT:-build/gpu-check-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# cuBLASLt and NCCL for the benchmark plugin: the toolkit's, else the ones PyTorch's wheels carry.
extra=$(python3 -c 'import glob, os, nvidia; print(":".join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "*", "lib")))))' 2>/dev/null || true)
export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64${extra:+:$extra}"
bin="$PWD/$bundle/trainrig"
log() { printf '== %s\n' "$*"; }

log "machine"
{ uname -a; nproc; nvidia-smi -L; cat /proc/driver/nvidia/version; } 2>&1 | tee "$out/machine.txt"
"$bin" --version | tee -a "$out/machine.txt"

log "doctor on the live machine"
"$bin" doctor -v --no-color --data-dir "$PWD" | tee "$out/doctor.txt"
echo "doctor exit code: ${PIPESTATUS[0]}" | tee -a "$out/doctor.txt"
"$bin" doctor --json --data-dir "$PWD" -o "$out/doctor.json"
"$bin" collect --data-dir "$PWD" -o "$out/snapshot.json"
"$bin" doctor --json --snapshot "$out/snapshot.json" -o "$out/doctor-offline.json"

log "topology"
"$bin" topo --no-color | tee "$out/topo.txt"
"$bin" topo --json -o "$out/topo.json"
nvidia-smi topo -m >> "$out/topo.txt" 2>&1

if [ -x "$bundle/gpu_tests" ]; then
    log "gpu tests (NVML probe against nvidia-smi)"
    "$bundle/gpu_tests" --gtest_output="json:$out/gpu-tests.json" 2>&1 | tail -20
fi
if [ -x "$bundle/gpu_data_tests" ]; then
    log "gpu data tests (pinned double buffer against the loader)"
    "$bundle/gpu_data_tests" --gtest_output="json:$out/gpu-data-tests.json" 2>&1 | tail -20
fi

if [ -f "$bundle/libtrainrig_gpu_bench.so" ]; then
    log "gpu benchmark plugin tests"
    [ -x "$bundle/gpu_bench_tests" ] && \
        timeout -k 10 120 "$bundle/gpu_bench_tests" --gtest_output="json:$out/gpu-bench-tests.json" 2>&1 | tail -20
    log "bench: every GPU benchmark, quick"
    "$bin" bench list | tee "$out/bench-list.txt"
    # One run per benchmark, each with a hard limit (-k: trainrig takes SIGTERM as a request to
    # stop between samples; a hung GPU wait needs SIGKILL), so one failure or hang loses only
    # its own results. PyTorch's reference goes first, before burn heats the GPU.
    timeout -k 10 150 python3 scripts/gpu-bench-torch.py "$out/torch-reference.json" --quick 2>&1 | tail -30
    for b in h2d hbm gemm d2h p2p nccl burn; do
        timeout -k 15 120 "$bin" bench run "$b" --quick --seconds 10 --json -o "$out/bench-$b.json"
        echo "bench $b exit code: $?" | tee -a "$out/bench-exit.txt"
    done
    python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
merged = None
for f in sorted(glob.glob(f"{out}/bench-*.json")):
    if f.endswith(("bench-gpu.json", "bench-vs-torch.json")): continue
    try: doc = json.load(open(f))
    except ValueError: continue
    if merged is None: merged = doc
    else:
        for k in ("results", "skipped", "errors"): merged[k] += doc[k]
if merged: json.dump(merged, open(f"{out}/bench-gpu.json", "w"), indent=2)
PY
    log "trainrig against PyTorch"
    python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
try:
    ours = json.load(open(f"{out}/bench-gpu.json"))["results"]
    torch = json.load(open(f"{out}/torch-reference.json"))["results"]
except (OSError, ValueError, KeyError) as e:
    print(f"no comparison: {e}")
    sys.exit(0)
def key(r):
    p = r.get("params", {})
    shape = tuple(p.get(d) for d in "mnk") if r["bench"] == "gemm" else ()
    return (r["bench"], r["name"], shape)
mine = {key(r): r for r in ours
        if r.get("target", {}).get("gpu", 0) == 0 and r.get("params", {}).get("summary", "shape") == "shape"}
rows = []
for t in torch:
    m = mine.get(key(t))
    if m:
        rows.append({"bench": t["bench"], "name": t["name"], "shape": key(t)[2], "unit": t["unit"],
                     "trainrig_median": m["median"], "torch_median": t["median"],
                     "ratio": m["median"] / t["median"], "trainrig_verified": m.get("verified")})
best = lambda rs: max(rs, key=lambda r: r["torch_median"]) if rs else None
gemm = [r for r in rows if r["bench"] == "gemm"]
summary = {"gemm_bf16_at_torch_best_shape": best(gemm),
           "goals": {"gemm_bf16_best_shape": 0.97, "hbm_copy": 0.95, "h2d_pinned": 0.95}}
json.dump({"rows": rows, "summary": summary}, open(f"{out}/bench-vs-torch.json", "w"), indent=2)
for r in rows:
    print(f'{r["bench"]:5} {r["name"]:9} {str(r["shape"] or ""):22} trainrig/torch {r["ratio"]:.3f}')
PY
fi

if [ -x "$bundle/gpu_train_tests" ] && [ -f "$bundle/libtrainrig_train_cuda.so" ]; then
    log "train: the CUDA backend against the CPU reference (small models: loss, gradients, steps)"
    TRAINRIG_TRAIN_PLUGIN="$PWD/$bundle/libtrainrig_train_cuda.so" timeout -k 10 180 \
        "$bundle/gpu_train_tests" --gtest_output="json:$out/gpu-train-tests.json" 2>&1 | tail -30
    log "train: GPT-2 124M on the CUDA backend (bench run train: tokens/s, MFU, phases, memory)"
    timeout -k 15 240 "$bin" bench run train --train-backend cuda --train-model gpt2 \
        --train-seq 1024 --train-batch 16 --json -o "$out/bench-train-cuda.json" \
        2> "$out/bench-train-cuda.err"
    echo "bench train (cuda) exit code: $?" | tee -a "$out/bench-exit.txt"
    tail -5 "$out/bench-train-cuda.err"
fi

log "train: PyTorch GPT-2 124M of the same shape (bf16 autocast, SDPA, torch.compile)"
timeout -k 10 300 python3 bench/scripts/gpt2_torch.py --device cuda --seq 1024 --batch 16 \
    --steps 40 --warmup-steps 15 > "$out/train-torch-gpt2.json" 2> "$out/train-torch-gpt2.err"
echo "train reference exit code: $?" | tee -a "$out/bench-exit.txt"
cat "$out/train-torch-gpt2.json"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
try:
    ours = {r["name"]: r for r in json.load(open(f"{out}/bench-train-cuda.json"))["results"]}
    torch = json.load(open(f"{out}/train-torch-gpt2.json"))
except (OSError, ValueError, KeyError) as e:
    print(f"no train comparison: {e}")
    sys.exit(0)
tps = ours["tokens"]["median"]
ref = torch.get("tokens_per_s")
row = {"trainrig_tokens_per_s": tps, "torch_tokens_per_s": ref,
       "ratio": tps / ref if ref else None,
       "trainrig_mfu": ours.get("mfu", {}).get("median"),
       "trainrig_median_phase_s": ours["tokens"]["counted"]["median_phase_s"],
       "trainrig_peak_memory": ours["peak-memory"]["counted"],
       "verified": ours["tokens"].get("verified"),
       "goals": {"mfu": 0.50, "ratio_vs_torch": 1.2}}
json.dump(row, open(f"{out}/train-vs-torch.json", "w"), indent=2)
print(json.dumps(row, indent=2))
PY

log "nvidia-smi facts for the cross-check"
nvidia-smi --query-gpu=index,name,pci.bus_id,pci.device_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,memory.total \
    --format=csv,noheader > "$out/nvidia-smi.csv" 2>&1
nvidia-smi -q -d MEMORY > "$out/nvidia-smi-memory.txt" 2>&1

log "compare and time"
python3 - "$bin" "$out" <<'PY'
import csv, json, statistics, subprocess, sys, time
binary, out = sys.argv[1], sys.argv[2]
doc = json.load(open(f"{out}/doctor.json"))
offline = json.load(open(f"{out}/doctor-offline.json"))
snap = json.load(open(f"{out}/snapshot.json"))
result = {"offline_findings_identical": doc["findings"] == offline["findings"],
          "doctor_exit_code": doc["exit_code"], "summary": doc["summary"], "gpus": [],
          "gpu_findings": {f["id"]: [f["status"], f["summary"]] for f in doc["findings"]
                           if f["id"].startswith(("gpu.", "stack."))},
          "nvml_seconds": (snap.get("nvml") or {}).get("seconds") if isinstance(snap.get("nvml"), dict) else None}

def bar1_mib():
    total, in_bar1 = None, False
    for line in open(f"{out}/nvidia-smi-memory.txt"):
        if "BAR1 Memory Usage" in line: in_bar1 = True
        elif in_bar1 and line.strip().startswith("Total"):
            return int(line.split(":")[1].split()[0])
    return total

gen_speed = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
for row in csv.reader(open(f"{out}/nvidia-smi.csv")):
    row = [c.strip() for c in row]
    if len(row) < 9: continue
    bus = row[2].lower()[4:] if row[2].lower().startswith("0000") and len(row[2]) > 12 else row[2].lower()
    dev = next((d for d in (snap.get("pci_devices") or []) if d["address"] == bus), None)
    entry = {"nvidia_smi": row, "trainrig": None}
    if dev:
        res = (dev.get("resources") or [])[:6]
        # BAR1 as nvidia-smi means it: the largest memory BAR of the function.
        bar1 = max([r["end"] - r["start"] + 1 for r in res if r["end"] > r["start"]] or [0])
        entry["trainrig"] = {"address": bus, "device_id": dev.get("device"), "driver": dev.get("driver"),
                             "link_width": [dev.get("current_link_width"), dev.get("max_link_width")],
                             "link_speed": [dev.get("current_link_speed"), dev.get("max_link_speed")],
                             "bar1_mib": bar1 // (1 << 20), "numa_node": dev.get("numa_node")}
        entry["agree"] = {
            "max_width": str(dev.get("max_link_width")) == row[7],
            "max_speed": gen_speed.get(int(row[5]) if row[5].isdigit() else 0) == dev.get("max_link_speed"),
            "bar1": bar1_mib() == bar1 // (1 << 20),
        }
    result["gpus"].append(entry)

def run(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t

a_cmd, b_cmd = [binary, "doctor", "--json"], ["nvidia-smi", "-q"]
for _ in range(2): run(a_cmd); run(b_cmd)
a, b = [], []
for _ in range(20):
    a.append(run(a_cmd)); b.append(run(b_cmd))
ratios = [x / y for x, y in zip(a, b)]
result["timing"] = {"runs": 20, "doctor_wall_s": {"min": min(a), "median": statistics.median(a), "max": max(a)},
                    "nvidia_smi_q_wall_s": {"min": min(b), "median": statistics.median(b), "max": max(b)},
                    "ratio_doctor_over_nvidia_smi_q_median": statistics.median(ratios)}
json.dump(result, open(f"{out}/gpu-check.json", "w"), indent=2)
print(json.dumps(result, indent=2))
PY

# What comes back is limited in number of files: the secondary ones travel in one archive.
details=()
for f in doctor-offline.json nvidia-smi.csv nvidia-smi-memory.txt topo.json machine.txt \
         bench-list.txt bench-{h2d,hbm,gemm,d2h,p2p,nccl,burn}.json bench-train-cuda.err \
         train-torch-gpt2.err; do
    [ -f "$out/$f" ] && details+=("$f")
done
tar -C "$out" -czf "$out/details.tar.gz" "${details[@]}" && \
    (cd "$out" && rm -f "${details[@]}")
