#!/usr/bin/env bash
# trainrig's checks on a machine with an NVIDIA GPU, in one bounded run: pre-flight, the
# compute-sanitizer on our shared-memory kernels, the CUDA trainer against the CPU reference,
# Llama blocks on it against the CPU backend, GPT-2 on the CUDA backend, the GPU benchmarks
# beside PyTorch, doctor/topology/NVML, validate, and PyTorch's GPT-2 last. One deadline for all
# (--deadline, default 300 s); at most six files come back in $OUT. --dry-run runs the same
# control flow with stand-ins, without a GPU.
# The steps and their limits: scripts/gpu_check/steps.py; how to use it: docs/gpu-check.md.
exec python3 "$(dirname "$0")/gpu_check/main.py" "$@"
