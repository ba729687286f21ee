"""--emulated: the steps of scripts/gpu-check.sh on the emulated CUDA device (tests/emulator,
docs/testing.md "The emulated GPU"), from a bundle that scripts/gpu-bundle.sh --emulated packed:
the same trainrig, the plugins built by the host compiler against the emulator, the GPU test
binaries, and the fake NVML with the file that describes its GPUs. Every step runs its own
command; the ones whose command needs a driver, PyTorch on CUDA or compute-sanitizer say so and
are skipped. Its numbers are the host CPU's: they never go into bench/results/ as a GPU's."""
import json
import os
import re

# How an emulated device names itself (kEmulatedGpuPrefix, src/core/emulated_gpu.h).
DEVICE_PREFIX = "emulated "
FAKE_NVML_LIB = "libtrainrig_fake_nvml.so"
FAKE_NVML_FILE = "fake-nvml.json"
EMULATOR_LIB = "libtrainrig_cuda_emulator.so"

# What the emulated devices are unless the environment says (docs/testing.md lists the
# variables): the fake NVML's GPUs, by their bus ids, as A100 80 GB SXM with 4 GiB each, which
# the trainer's and the benchmarks' emulated sizes fit many times over.
DEFAULT_MEMORY = "4G"
DEFAULT_MODEL = "a100-80g-sxm"

# What a process that ran the race check says at its end (tests/emulator/runtime/race_check.cpp).
RACE_CHECK_AGREED = re.compile(r"race check: launches that agreed in both thread orders: (\d+)")

# A run takes the host's time, not a lent GPU's window, and a CI machine may be busy with more
# than its own tests: the deadline is long, every step gets CAP_SCALE times its GPU cap, and the
# steps that take the host longest get several times what they take on two idle cores (race
# check 40 s, train-llama 41 s, validate 29 s). Beside two busy processes on two cores the whole
# run took 271 s: race check 64 s, train-llama 69 s, validate 51 s, bench-nccl 15 s (of a GPU cap
# of 45 s), every other step under 21 s.
DEFAULT_DEADLINE = 1200
CAP_SCALE = 3
CAPS = {"sanitizer-racecheck": 300, "train-llama": 240}


def cap(step):
    """A step's cap on the emulated device."""
    return max(CAPS.get(step.name, 0), CAP_SCALE * step.cap)

# The trainer test's shapes that run in seconds on the emulated device: GPT-2 over one full tile
# and Llama with one query head per key/value head, every kernel of both. (The emulated test
# suite runs every shape; this step proves the step.)
TRAIN_TESTS = ("*MatchesTheCpuReference/hs16_T64", "*MatchesTheCpuReference/llama_hs32_G1_T64")
# The race check on GPT-2 over three full 64-query tiles and a partial one,
# as on a GPU, and on Llama with two query heads per key/value head over as many tiles: the GPU
# step's Llama shape (head size 128, T = 1024) takes the host minutes.
SANITIZER_TESTS = ("*MatchesTheCpuReference/hs32_T200",
                   "*MatchesTheCpuReference/llama_hs64_G2_T200")
# The trainer benchmark's smallest model at a sequence and batch the host runs in seconds.
TRAIN_BENCH = ("--train-model", "tiny", "--train-seq", "64", "--train-batch", "2")

# The stages of `validate --level quick` that touch the GPUs: each must have run.
VALIDATE_STAGES = ("doctor", "topology", "gpu-bench", "training", "watch")

# Why a step cannot run on the emulated device, by step.
NOT_HERE = {
    "torch-reference": "PyTorch has no emulated CUDA device to run on",
    "nvml-tests": "gpu_tests compare NVML with nvidia-smi, which needs an NVIDIA driver",
    "data-tests": "gpu_data_tests link the CUDA runtime itself, which needs an NVIDIA driver",
    "doctor-timing": "it times doctor against nvidia-smi -q, which needs an NVIDIA driver",
    "torch-gpt2": "PyTorch has no emulated CUDA device to run on",
    "train-vs-torch": "there is no PyTorch GPT-2 run to compare with",
}


def bus_ids(fixture):
    """The fake NVML's GPUs' bus ids in the emulator's form (4-digit domain)."""
    with open(fixture) as f:
        doc = json.load(f)
    out = []
    for gpu in doc.get("gpus") or []:
        domain, _, rest = gpu["pci_bus_id"].lower().partition(":")
        out.append(f"{int(domain, 16):04x}:{rest}")
    return out


def environment(bundle, inherited):
    """The variables that describe the emulated GPUs to the emulator and the fake NVML alike,
    each one taken from `inherited` when it is set there."""
    fixture = inherited.get("TRAINRIG_FAKE_NVML") or os.path.join(bundle, FAKE_NVML_FILE)
    env = {"TRAINRIG_NVML_LIBRARY": inherited.get("TRAINRIG_NVML_LIBRARY")
           or os.path.join(bundle, FAKE_NVML_LIB),
           "TRAINRIG_FAKE_NVML": fixture,
           "TRAINRIG_EMULATED_GPU_MEMORY": inherited.get("TRAINRIG_EMULATED_GPU_MEMORY")
           or DEFAULT_MEMORY,
           "TRAINRIG_EMULATED_GPU_MODEL": inherited.get("TRAINRIG_EMULATED_GPU_MODEL")
           or DEFAULT_MODEL}
    gpus = inherited.get("TRAINRIG_EMULATED_GPUS")
    if not gpus:
        try:
            gpus = ",".join(bus_ids(fixture))
        except (OSError, ValueError, KeyError, TypeError):
            gpus = ""  # pre-flight names the missing or unreadable file
    env["TRAINRIG_EMULATED_GPUS"] = gpus
    return env
