"""Pure readings of what the GPU steps wrote: the key numbers for the summary, the training logs
of one run on two backends side by side and their first updates tensor by tensor, and the two
side-by-side comparisons with PyTorch. No I/O here beyond the documents handed in, so
tests/scripts/gpu_check_test.py checks each on small documents."""
import math
import re
import statistics

# What the comparisons aim at (issue goals, restated in docs/gpu-check.md).
BENCH_GOALS = {"gemm_bf16_best_shape": 0.97, "hbm_copy": 0.95, "h2d_pinned": 0.95}
TRAIN_GOALS = {"mfu": 0.50, "ratio_vs_torch": 1.2}


def gtest_numbers(doc):
    """Counts, failures (first lines of their messages) and recorded properties of a
    --gtest_output=json document."""
    out = {"tests": doc.get("tests", 0), "failures": doc.get("failures", 0),
           "disabled": doc.get("disabled", 0), "failed": [], "properties": {}}
    for suite in doc.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = f"{suite.get('name')}.{t.get('name')}"
            if t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
                out.setdefault("skipped", []).append(name)
            fails = t.get("failures") or []
            if fails:
                first = fails[0].get("failure", "").strip().splitlines()
                out["failed"].append({"test": name, "first": first[:3]})
            props = {k: v for k, v in t.items() if k.startswith("worst_")}
            if props:
                out["properties"][name] = props
    return out


def relative_error(reference, value):
    """|value - reference| / |reference| (absolute when the reference is 0); NaN when either is
    not a number (a NaN loss is logged as null)."""
    numbers = (int, float)
    if not isinstance(reference, numbers) or not isinstance(value, numbers):
        return float("nan")
    return abs(value - reference) / abs(reference) if reference else abs(value - reference)


def train_curves(reference, device, limits):
    """Two `trainrig train --log` files of the same run on two backends, line by line: the
    relative error of each key of `limits` (loss, grad_norm, val_loss) per step, the worst per
    key over its limit (below 1 passes; null when one was not a number), and a sentence per
    disagreement. NaN never passes."""
    out = {"lines": len(device), "worst": {}, "problems": []}
    if len(reference) != len(device) or not device:
        out["problems"].append(f"{len(device)} logged steps against the reference's "
                               f"{len(reference)}")
        return out
    for key, limit in limits.items():
        worst = 0.0
        for ref, dev in zip(reference, device):
            if key not in ref and key not in dev:
                continue
            err = relative_error(ref.get(key), dev.get(key))
            if not err <= limit:
                out["problems"].append(f"{key} at step {ref.get('step')}: {dev.get(key)} against "
                                       f"{ref.get(key)}, relative error {err:.3g} over {limit}")
            worst = max(worst, err / limit) if worst is not None and err == err else None
        out["worst"][key] = worst
    return out


def k_bias_positions(model, elements):
    """Which elements of qkv_b are K biases: each layer's row is [q: C | k: KVH·hd | v: KVH·hd]
    (checkpoint "model" fields; KVH = heads for GPT-2). Their gradient is rounding residue in
    exact arithmetic without RoPE and close to it in RoPE's slow dimensions, and Adam's first
    step turns residue into a full ±lr step in a direction nothing determines."""
    c, heads = model.get("channels", 0), model.get("heads", 0)
    if not c or not heads:
        return set()
    kv = model.get("kv_heads") or heads
    width = c + 2 * kv * (c // heads)
    return {i for i in range(elements) if c <= i % width < c + kv * (c // heads)}


def update_errors(initial, reference, device, limit, model=None):
    """Per parameter tensor ({name: sequence of floats}), how far the device's update p − p₀
    is from the reference's: ‖p_dev − p_ref‖ / ‖p_ref − p₀‖ (the relative L2 error of the
    updates, as tests/support/backend_match.h measures them), the worst error over `limit`
    (below 1 passes) and a sentence per tensor over it. NaN never passes. Empty tensors are no
    model part; qkv_b's K biases are left out (k_bias_positions)."""
    out = {"limit": limit, "errors": {}, "worst": 0.0, "problems": []}
    for name, p0 in initial.items():
        if not len(p0):
            continue
        ref, dev = reference.get(name), device.get(name)
        if ref is None or dev is None or not len(ref) == len(dev) == len(p0):
            out["problems"].append(f"{name}: missing or of another size in a checkpoint")
            continue
        if name == "qkv_b" and model:
            skip = k_bias_positions(model, len(p0))
            p0, ref, dev = ([x for i, x in enumerate(v) if i not in skip] for v in (p0, ref, dev))
            name = "qkv_b (q, v)"
        moved = math.dist(ref, p0)
        err = math.dist(dev, ref) / moved if moved > 0 else math.dist(dev, ref)
        out["errors"][name] = err
        if not err <= limit:
            out["problems"].append(f"the update of {name} after step 1 is {err:.3g} off the "
                                   f"reference's (relative L2), over {limit:.3g}")
        out["worst"] = max(out["worst"], err / limit) if err == err else float("inf")
    return out


SANITIZER_SUMMARY = re.compile(r"=+ (ERROR|RACECHECK) SUMMARY: (\d+) (errors?|hazards?)")


def sanitizer_numbers(text):
    """compute-sanitizer's closing line(s): errors (memcheck) or hazards (racecheck), and
    whether it refused the device (it does on some virtual machines)."""
    found = [(m.group(1), int(m.group(2))) for m in SANITIZER_SUMMARY.finditer(text)]
    return {"summaries": found, "errors": sum(n for _, n in found),
            "device_not_supported": "Device not supported" in text}


def merge_bench_docs(docs):
    """One trainrig.bench document out of per-benchmark runs."""
    merged = None
    for doc in docs:
        if merged is None:
            merged = {k: (list(v) if isinstance(v, list) else v) for k, v in doc.items()}
            continue
        for key in ("results", "skipped", "errors"):
            merged.setdefault(key, []).extend(doc.get(key, []))
    return merged


def bench_numbers(doc):
    """Each record's median and unit, with its verdict, keyed bench/name."""
    out = {}
    for r in doc.get("results", []):
        key = f"{r.get('bench')}/{r.get('name')}"
        p = r.get("params", {})
        if r.get("bench") == "gemm" and p.get("m"):
            key += f"/{p.get('m')}x{p.get('n')}x{p.get('k')}"
        out[key] = {"median": r.get("median"), "unit": r.get("unit"),
                    "verdict": (r.get("verdict") or {}).get("status") if isinstance(
                        r.get("verdict"), dict) else r.get("verdict"),
                    "verified": r.get("verified")}
    return out


def _bench_key(r):
    p = r.get("params", {})
    shape = tuple(p.get(d) for d in "mnk") if r.get("bench") == "gemm" else ()
    return (r.get("bench"), r.get("name"), shape)


def bench_vs_torch(ours, torch):
    """Record-for-record ratios trainrig / PyTorch on GPU 0 (same bench, name and GEMM shape)."""
    mine = {_bench_key(r): r for r in ours.get("results", [])
            if r.get("target", {}).get("gpu", 0) == 0
            and r.get("params", {}).get("summary", "shape") == "shape"}
    rows = []
    for t in torch.get("results", []):
        m = mine.get(_bench_key(t))
        if m and t.get("median"):
            rows.append({"bench": t["bench"], "name": t["name"], "shape": list(_bench_key(t)[2]),
                         "unit": t.get("unit"), "trainrig_median": m.get("median"),
                         "torch_median": t["median"], "ratio": m.get("median", 0) / t["median"],
                         "trainrig_verified": m.get("verified")})
    gemm = [r for r in rows if r["bench"] == "gemm"]
    best = max(gemm, key=lambda r: r["torch_median"]) if gemm else None
    return {"rows": rows, "summary": {"gemm_bf16_at_torch_best_shape": best,
                                      "goals": BENCH_GOALS}}


def train_bench_numbers(doc):
    """tokens/s, MFU, step time, phases and memory of `bench run train`."""
    recs = {r.get("name"): r for r in doc.get("results", [])}
    tokens = recs.get("tokens", {})
    counted = tokens.get("counted", {})
    return {"tokens_per_s": tokens.get("median"), "verified": tokens.get("verified"),
            "mfu": (recs.get("mfu") or {}).get("median"),
            "median_phase_s": counted.get("median_phase_s"),
            "phase_clock": counted.get("phase_clock"),
            "peak_memory": (recs.get("peak-memory") or {}).get("counted")}


def train_vs_torch(ours, torch):
    """trainrig's GPT-2 tokens/s against PyTorch's on the same shape."""
    mine = train_bench_numbers(ours)
    ref = torch.get("tokens_per_s")
    tps = mine["tokens_per_s"]
    return {"trainrig_tokens_per_s": tps, "torch_tokens_per_s": ref,
            "ratio": tps / ref if tps and ref else None, "trainrig_mfu": mine["mfu"],
            "trainrig_median_phase_s": mine["median_phase_s"],
            "trainrig_peak_memory": mine["peak_memory"], "verified": mine["verified"],
            "torch": {k: v for k, v in torch.items() if k != "losses"}, "goals": TRAIN_GOALS}


GEN_SPEED = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}  # GT/s per PCIe generation


def doctor_cross_check(doctor, offline, snapshot, smi_rows, bar1_mib):
    """doctor's own verdicts and its PCI facts beside nvidia-smi's: the offline judgement of the
    snapshot must equal the live one, and the link and BAR1 sizes must agree per GPU."""
    out = {"offline_findings_identical": doctor.get("findings") == offline.get("findings"),
           "doctor_exit_code": doctor.get("exit_code"), "summary": doctor.get("summary"),
           "gpu_findings": {f["id"]: [f["status"], f.get("summary")]
                            for f in doctor.get("findings", [])
                            if f["id"].startswith(("gpu.", "stack."))},
           "gpus": []}
    for row in smi_rows:
        if len(row) < 9:
            continue
        bus = row[2].lower()
        if bus.startswith("0000") and len(bus) > 12:
            bus = bus[4:]
        dev = next((d for d in snapshot.get("pci_devices") or [] if d.get("address") == bus), None)
        entry = {"nvidia_smi": row, "agree": None}
        if dev:
            res = (dev.get("resources") or [])[:6]
            bar = max([r["end"] - r["start"] + 1 for r in res if r["end"] > r["start"]] or [0])
            gen = int(row[5]) if row[5].isdigit() else 0
            entry["agree"] = {"max_width": str(dev.get("max_link_width")) == row[7],
                              "max_speed": GEN_SPEED.get(gen) == dev.get("max_link_speed"),
                              "bar1": bar1_mib == bar // (1 << 20)}
        out["gpus"].append(entry)
    return out


def bar1_total_mib(smi_memory_text):
    """BAR1's total from `nvidia-smi -q -d MEMORY`."""
    in_bar1 = False
    for line in smi_memory_text.splitlines():
        if "BAR1 Memory Usage" in line:
            in_bar1 = True
        elif in_bar1 and line.strip().startswith("Total"):
            return int(line.split(":")[1].split()[0])
    return None


def paired_timing(a_seconds, b_seconds):
    """Medians of two commands timed in alternation, and the median of the pairwise ratios."""
    def stats(xs):
        return {"min": min(xs), "median": statistics.median(xs), "max": max(xs)}
    return {"runs": len(a_seconds), "a_wall_s": stats(a_seconds), "b_wall_s": stats(b_seconds),
            "ratio_median": statistics.median(x / y for x, y in zip(a_seconds, b_seconds))}
