#!/usr/bin/env bash
# Packs build/trainrig, the GPU benchmark plugin (libtrainrig_gpu_bench.so), the CUDA training
# backend (libtrainrig_train_cuda.so) and the GPU tests with
# the shared libraries a bare GPU machine may lack (hwloc, fmt, udev, toml++, PCRE2, simdjson,
# SentencePiece, zstd, utf8proc; libmpi when the plugin was built with MPI) into a folder (default
# build/gpu-bundle/) that scripts/gpu-check.sh runs from.
# glibc, libstdc++ and the NVIDIA/CUDA libraries are left out: the target machine provides its own.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-build/gpu-bundle}
bin=${TRAINRIG_BIN:-build/trainrig}
[ -x "$bin" ] || { echo "gpu-bundle: $bin not found; build first (make build)" >&2; exit 2; }
rm -rf "$dest"
mkdir -p "$dest/lib"
cp "$bin" "$dest/trainrig"
strip --strip-debug "$dest/trainrig" 2>/dev/null || true
# The GPU tests (label gpu) when they were built; they link the same libraries (gpu_data_tests
# links the static CUDA runtime too).
for t in gpu_tests gpu_data_tests gpu_bench_tests gpu_train_tests; do
    if [ -x "$(dirname "$bin")/$t" ]; then
        cp "$(dirname "$bin")/$t" "$dest/$t"
        strip --strip-debug "$dest/$t" 2>/dev/null || true
    fi
done
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
        *) cp -L "$path" "$dest/lib/$name" ;;
    esac
done
# What was built, for the results' summary (scripts/gpu-check.sh reads COMMIT).
git rev-parse HEAD > "$dest/COMMIT" 2>/dev/null || echo unknown > "$dest/COMMIT"
git diff --quiet HEAD 2>/dev/null || echo "+ uncommitted changes" >> "$dest/COMMIT"
echo "gpu-bundle: $(du -sh "$dest" | cut -f1) in $dest ($(ls "$dest/lib" | tr '\n' ' '))"
