#!/usr/bin/env python3
"""PyTorch's view of what `trainrig bench` measures on one GPU, as a reference for the plugin.

Measures with the same sizes as the trainrig GPU benchmarks and writes records with the same
bench/name/unit, so the two can be compared record for record:
  gemm  bf16      torch.matmul on random bf16 square matrices (trainrig's square shapes)
  hbm   copy      b.copy_(a) on the device, bytes read + written counted (2 x size)
  h2d   pinned    device.copy_(pinned CPU tensor, non_blocking=True)
  h2d   pageable  device.copy_(ordinary CPU tensor)
Timing: CUDA events around a batch, warm-up first, several samples; the median is reported too.

Usage: scripts/gpu-bench-torch.py OUT.json [--gpu N] [--quick] [--samples N]
"""
import argparse
import json
import statistics
import sys

import torch

MiB = 1 << 20
GiB = 1 << 30


def timed_samples(fn, per_call, calls, samples):
    """Samples of per_call * calls / seconds over `calls` back-to-back calls of fn."""
    fn()  # warm-up: allocator, cuBLAS handle, clocks
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(samples):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        out.append(per_call * calls / (start.elapsed_time(stop) / 1e3))
    return out


def record(bench, name, unit, params, samples, counted):
    return {"bench": bench, "name": name, "unit": unit, "params": params, "samples": samples,
            "median": statistics.median(samples), "counted": counted}


def gemm_records(quick, samples):
    out = []
    sizes = [1024, 2048, 4096, 8192] + ([] if quick else [16384])
    for s in sizes:
        # Random data, as trainrig uses: zeros run faster and draw less power.
        # Uniform in [-1, 1) as trainrig fills its inputs: power and clocks depend on the data.
        a = (torch.rand(s, s, device="cuda") * 2 - 1).to(torch.bfloat16)
        b = (torch.rand(s, s, device="cuda") * 2 - 1).to(torch.bfloat16)
        flops = 2.0 * s * s * s
        # About 20 ms per sample, as trainrig's gemm batches.
        calls = max(1, min(500, int(0.02 / (flops / 700e12))))
        smp = timed_samples(lambda: torch.matmul(a, b), flops, calls, samples)
        out.append(record("gemm", "bf16", "FLOP/s",
                          {"m": s, "n": s, "k": s, "dtype": "bf16", "api": "torch.matmul"},
                          smp, {"flops_per_matmul": flops, "matmuls_per_sample": calls}))
        del a, b
    return out


def hbm_record(quick, samples):
    size = (1 if quick else 2) * GiB
    a = torch.randint(0, 255, (size,), device="cuda", dtype=torch.uint8)
    b = torch.empty_like(a)
    smp = timed_samples(lambda: b.copy_(a), 2 * size, 20, samples)
    ok = bool(torch.equal(a, b))
    return record("hbm", "copy", "bytes/s",
                  {"size_bytes": size, "op": "device_to_device_copy", "api": "Tensor.copy_",
                   "counting": "bytes read + bytes written (2 x size per copy)"},
                  smp, {"bytes_per_copy": 2 * size, "copies_per_sample": 20, "verified": ok})


def h2d_records(quick, samples):
    size = (256 if quick else 512) * MiB
    copies = 4 if quick else 8
    dst = torch.empty(size, device="cuda", dtype=torch.uint8)
    out = []
    for name in ("pinned", "pageable"):
        src = torch.randint(0, 255, (size,), dtype=torch.uint8)
        if name == "pinned":
            src = src.pin_memory()
        smp = timed_samples(lambda: dst.copy_(src, non_blocking=True), size, copies, samples)
        ok = bool(torch.equal(dst.cpu(), src))
        out.append(record("h2d", name, "bytes/s",
                          {"size_bytes": size, "direction": "host_to_device",
                           "host_memory": name, "api": "Tensor.copy_"},
                          smp, {"bytes_per_copy": size, "copies_per_sample": copies,
                                "verified": ok}))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="JSON file to write")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="trainrig's quick sizes")
    p.add_argument("--samples", type=int, default=0, help="timed samples (default 10, quick 5)")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("gpu-bench-torch: PyTorch sees no CUDA device", file=sys.stderr)
        return 2
    torch.cuda.set_device(args.gpu)
    samples = args.samples or (5 if args.quick else 10)
    results = h2d_records(args.quick, samples) + [hbm_record(args.quick, samples)]
    results += gemm_records(args.quick, samples)
    prop = torch.cuda.get_device_properties(args.gpu)
    doc = {"schema": "trainrig.torch_reference", "schema_version": 1,
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "target": {"gpu": args.gpu, "gpu_name": prop.name,
                      "multiprocessors": prop.multi_processor_count},
           "quick": args.quick, "samples_per_record": samples, "results": results}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2)
    for r in results:
        shape = "x".join(str(r["params"][d]) for d in "mnk") if r["bench"] == "gemm" else ""
        print(f'{r["bench"]:5} {r["name"]:9} {shape:17} median {r["median"]:.4g} {r["unit"]}')
    return 0


if __name__ == "__main__":
    sys.exit(main())
