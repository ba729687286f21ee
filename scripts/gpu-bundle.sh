#!/usr/bin/env bash
# Packs build/trainrig, the GPU benchmark plugin (libtrainrig_gpu_bench.so), the CUDA training
# backend (libtrainrig_train_cuda.so) and the GPU tests with
# the shared libraries a bare GPU machine may lack (hwloc, fmt, udev, toml++, PCRE2, simdjson,
# SentencePiece, zstd, utf8proc; libmpi when the plugin was built with MPI) into a folder (default
# build/gpu-bundle/) that scripts/gpu-check.sh runs from.
# glibc, libstdc++ and the NVIDIA/CUDA libraries are left out: the target machine provides its own.
#
# --emulated packs the emulated CUDA device's build instead (default build/emulated/ into
# build/gpu-bundle-emulated/): the plugins the host compiler built against the emulator (which
# travels in lib/), the GPU test binaries built against them under their GPU names, the fake NVML
# library and the file that describes its GPUs (fake-nvml.json; TRAINRIG_FAKE_NVML names
# another), for `scripts/gpu-check.sh --emulated` on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
emulated=
if [ "${1:-}" = --emulated ]; then emulated=1; shift; fi
if [ -n "$emulated" ]; then
    dest=${1:-build/gpu-bundle-emulated}
    bin=${TRAINRIG_BIN:-build/emulated/trainrig}
    fake_nvml=${TRAINRIG_FAKE_NVML_LIB:-$(dirname "$bin")/../libtrainrig_fake_nvml.so}
    fixture=${TRAINRIG_FAKE_NVML:-tests/fixtures/nvml/epyc-4xa100-healthy.json}
else
    dest=${1:-build/gpu-bundle}
    bin=${TRAINRIG_BIN:-build/trainrig}
fi
[ -x "$bin" ] || { echo "gpu-bundle: $bin not found; build first (make build)" >&2; exit 2; }
rm -rf "$dest"
mkdir -p "$dest/lib"
cp "$bin" "$dest/trainrig"
strip --strip-debug "$dest/trainrig" 2>/dev/null || true
# The GPU tests (label gpu) when they were built; they link the same libraries (gpu_data_tests
# links the static CUDA runtime too). The emulated build's carry the suffix _emulated.
for t in gpu_tests gpu_data_tests gpu_bench_tests gpu_train_tests; do
    from="$(dirname "$bin")/$t${emulated:+_emulated}"
    if [ -x "$from" ]; then
        cp "$from" "$dest/$t"
        strip --strip-debug "$dest/$t" 2>/dev/null || true
    fi
done
if [ -n "$emulated" ]; then
    [ -f "$fake_nvml" ] || { echo "gpu-bundle: $fake_nvml not found; build first (make build)" >&2; exit 2; }
    [ -f "$fixture" ] || { echo "gpu-bundle: $fixture not found: TRAINRIG_FAKE_NVML names no file" >&2; exit 2; }
    cp "$fake_nvml" "$dest/libtrainrig_fake_nvml.so"
    cp "$fixture" "$dest/fake-nvml.json"
fi
# The GPU benchmark plugin (trainrig dlopens it from beside the binary) when it was built.
plugin="$(dirname "$bin")/libtrainrig_gpu_bench.so"
libs_of=("$bin")
if [ -f "$plugin" ]; then
    cp "$plugin" "$dest/libtrainrig_gpu_bench.so"
    strip --strip-debug "$dest/libtrainrig_gpu_bench.so" 2>/dev/null || true
    libs_of+=("$plugin")
fi
# The CUDA training backend (trainrig train --backend cuda loads it from beside the binary).
train_plugin="$(dirname "$bin")/libtrainrig_train_cuda.so"
if [ -f "$train_plugin" ]; then
    cp "$train_plugin" "$dest/libtrainrig_train_cuda.so"
    strip --strip-debug "$dest/libtrainrig_train_cuda.so" 2>/dev/null || true
    libs_of+=("$train_plugin")
fi
# cuBLASLt and NCCL are the GPU machine's own (too large to carry); the plugin's other
# libraries (fmt, and libmpi with its own when built with MPI) travel in lib/.
ldd "${libs_of[@]}" | awk '/=> \//{print $1, $3}' | sort -u | while read -r name path; do
    case "$name" in
        libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*) ;;
        libcuda.so*|libnvidia-*|libcudart.so*|libnccl.so*|libcublas*.so*) ;;
        libtrainrig_*) cp -L "$path" "$dest/lib/$name"  # the emulator, built with debug info
                       strip --strip-debug "$dest/lib/$name" 2>/dev/null || true ;;
        *) cp -L "$path" "$dest/lib/$name" ;;
    esac
done
# What was built, for the results' summary (scripts/gpu-check.sh reads COMMIT).
git rev-parse HEAD > "$dest/COMMIT" 2>/dev/null || echo unknown > "$dest/COMMIT"
git diff --quiet HEAD 2>/dev/null || echo "+ uncommitted changes" >> "$dest/COMMIT"
echo "gpu-bundle: $(du -sh "$dest" | cut -f1) in $dest ($(ls "$dest/lib" | tr '\n' ' '))"
