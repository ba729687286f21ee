"""The steps of scripts/gpu-check.sh, in the order a short GPU window should spend its time:
what has never run on a GPU first (sanitizers on our shared-memory kernels, the CUDA trainer
against the CPU reference, Llama blocks on the CUDA trainer against the CPU backend, then the
trainer's 150 s GPT-2 bench), then the GPU benchmarks beside PyTorch, then what has run before
(doctor, topology, NVML), `validate` when the build has it, and the PyTorch GPT-2 comparison
last. Caps and minimums are seconds; docs/gpu-check.md lists them."""
import glob
import os
import re
import shutil
import time

import compare
import emulated
import llama_check
from context import PLUGINS
from runner import Step, Outcome, PASSED, FAILED, SKIPPED

# The shapes of tests/gpu/train_cuda_test.cpp the sanitizers run: GPT-2 at head size 32 over
# three full 64-query tiles and a partial one, and Llama at head size 128 with 4 query heads per
# key/value head over 16 tiles (tests/unit/train_device_match_test.cpp checks they exist).
SANITIZER_TESTS = ("*MatchesTheCpuReference/hs32_T200",
                   "*MatchesTheCpuReference/llama_hs128_G4_T1024")
# Where the CUDA trainer's kernels are (src/cuda/CMakeLists.txt builds them into the plugin).
KERNEL_SOURCES = ("src/train/cuda/**/*.cu", "src/train/cuda/**/*.cuh")
KERNEL = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")
GPU_BENCHES = ("h2d", "hbm", "gemm", "d2h", "p2p", "nccl", "burn")


def with_plugin(ctx):
    env = dict(ctx.env)
    env["TRAINRIG_TRAIN_PLUGIN"] = ctx.bundled("libtrainrig_train_cuda.so")
    return env


def capture(ctx, argv, name, env=None):
    rc = ctx.sh(argv, log=name, env=env)
    return rc, ctx.read_text(name)


def preflight(ctx):
    problems, numbers = [], {}
    packer = "scripts/gpu-bundle.sh" + (" --emulated" if ctx.emulated else "")
    if not os.path.isdir(ctx.bundle):
        problems.append(f"the bundle {ctx.bundle} is not there: build it with {packer} "
                        "and carry it (docs/gpu-check.md)")
    else:
        files = sorted(os.listdir(ctx.bundle))
        numbers["bundle_files"] = files
        numbers["bundle_bytes"] = sum(os.path.getsize(os.path.join(d, f))
                                      for d, _, fs in os.walk(ctx.bundle) for f in fs)
        for name in ("trainrig", *PLUGINS, "gpu_train_tests"):
            if name not in files:
                problems.append(f"{ctx.bundled(name)} is missing from the bundle: build with the "
                                "CUDA toolkit before scripts/gpu-bundle.sh")
        needs = set()
        for name in ("trainrig", *PLUGINS, "gpu_train_tests", "gpu_bench_tests"):
            if name not in files:
                continue
            _, text = capture(ctx, ["ldd", ctx.bundled(name)], f"ldd-{name}.txt")
            for line in text.splitlines():
                lib = line.split("=>")[0].strip()
                needs.add(lib.split(".so")[0] + ".so")
                if "not found" in line:
                    problems.append(f"{ctx.bundled(name)} needs {lib}, which is not found on "
                                    "this machine: carry it in the bundle's lib/")
        # An emulated bundle's results are the host CPU's: they must never pass for a GPU's.
        if (emulated.EMULATOR_LIB in needs) != ctx.emulated:
            problems.append(f"the bundle {ctx.bundle} is " + (
                "not one for the emulated device: pack it with scripts/gpu-bundle.sh --emulated"
                if ctx.emulated else "for the emulated CUDA device, not a GPU: run with "
                "--emulated, or pack the GPU build with scripts/gpu-bundle.sh"))
    if ctx.emulated:
        numbers["emulated"] = {k: ctx.env.get(k) for k in sorted(ctx.emulated_env)}
        for name in (emulated.FAKE_NVML_LIB, emulated.FAKE_NVML_FILE):
            path = ctx.emulated_env["TRAINRIG_NVML_LIBRARY" if name.endswith(".so")
                                    else "TRAINRIG_FAKE_NVML"]
            if not os.path.isfile(path):
                problems.append(f"{path} is not there: the emulated device's NVML needs it "
                                f"({packer} packs it)")
        if not ctx.emulated_env["TRAINRIG_EMULATED_GPUS"]:
            problems.append(f"{ctx.emulated_env['TRAINRIG_FAKE_NVML']} names no GPU bus id for "
                            "the emulated devices (or set TRAINRIG_EMULATED_GPUS)")
    elif shutil.which("nvidia-smi") is None:
        problems.append("nvidia-smi is not on this machine: there is no NVIDIA driver to run on "
                        "(--dry-run runs the script's control flow without one)")
    else:
        rc, text = capture(ctx, ["nvidia-smi", "-L"], "nvidia-smi-L.txt", env=ctx.system_env)
        gpus = [line for line in text.splitlines() if line.startswith("GPU ")]
        numbers["gpus"] = gpus
        if rc != 0 or not gpus:
            problems.append(f"nvidia-smi -L lists no GPU (exit {rc})")
        _, version = capture(ctx, ["cat", "/proc/driver/nvidia/version"], "driver.txt")
        numbers["driver"] = next((line for line in version.splitlines() if "NVRM" in line), None)
    numbers["compute_sanitizer"] = sanitizer_path()
    if problems:
        numbers["problems"] = problems
        more = f" (and {len(problems) - 1} more problems in summary.json)" if len(problems) > 1 else ""
        return Outcome(FAILED, problems[0] + more, numbers)
    return Outcome(PASSED, None, numbers)


def sanitizer_path():
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    default = "/usr/local/cuda/bin/compute-sanitizer"
    return default if os.path.exists(default) else None


def shared_memory_kernels(root):
    """The CUDA trainer's kernels that declare shared memory (`__shared__` in their body), by
    name, read from the sources: the ones racecheck has anything to check in."""
    found = set()
    for pattern in KERNEL_SOURCES:
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            with open(path, errors="replace") as f:
                text = f.read()
            for m in KERNEL.finditer(text):
                start = text.find("{", m.end())
                depth, end = 0, start
                for end in range(start, len(text)):
                    depth += {"{": 1, "}": -1}.get(text[end], 0)
                    if depth == 0:
                        break
                if "__shared__" in text[start:end]:
                    found.add(m.group(1))
    return sorted(found)


def sanitizer(tool):
    """compute-sanitizer's `tool` on a multi-tile GPT-2 shape and a Llama shape of the trainer
    test; racecheck only on our shared-memory kernels (cuBLASLt's are not ours), one kernel-name
    filter each (a kernel is checked when it matches any)."""
    def action(ctx):
        if ctx.emulated:
            return emulated_sanitizer(ctx, tool)
        cs = sanitizer_path()
        if cs is None:
            return Outcome(SKIPPED, "compute-sanitizer is not on this machine")
        _, usage = capture(ctx, [cs, "--help"], "help.txt")
        only = []
        if tool == "racecheck":
            kernels = shared_memory_kernels(ctx.root)
            if not kernels:
                return Outcome(FAILED, "no shared-memory kernel found in "
                                       f"{', '.join(KERNEL_SOURCES)} to check")
            option = "--kernel-name" if "--kernel-name" in usage else "--filter" if "--filter" in usage else None
            only = [a for k in kernels for a in (option, f"kns={k}")] if option else []
        rc = ctx.sh([cs, "--tool", tool, "--error-exitcode", "99", *only,
                     ctx.bundled("gpu_train_tests"), "--gtest_filter=" + ":".join(SANITIZER_TESTS),
                     "--gtest_output=json:" + ctx.path("gtest.json")],
                    log="sanitizer.log", env=with_plugin(ctx))
        numbers = compare.sanitizer_numbers(ctx.read_text("sanitizer.log"))
        numbers.update(exit_code=rc, kernel_filter=" ".join(only) or None,
                       tests=list(SANITIZER_TESTS))
        test = ctx.read_json("gtest.json")
        if test:
            numbers["test"] = compare.gtest_numbers(test)
        if numbers["device_not_supported"]:
            return Outcome(SKIPPED, "compute-sanitizer refuses this GPU (it does under some "
                                    "virtual machines)", numbers)
        if rc == 0 and numbers["errors"] == 0 and test and not numbers["test"].get("skipped"):
            return Outcome(PASSED, None, numbers)
        why = (f"{numbers['errors']} {tool} errors" if numbers["errors"]
               else f"the test did not pass under {tool} (exit {rc})")
        return Outcome(FAILED, why, numbers)
    return action


def emulated_sanitizer(ctx, tool):
    """On the emulated device racecheck is the emulator's race check: every launch run in two
    thread orders. Its memcheck is AddressSanitizer, which the sanitized build's tests run."""
    if tool == "memcheck":
        return Outcome(SKIPPED, "on the emulated device memcheck is AddressSanitizer: `make "
                                "test-asan` runs the emulated trainer tests under it")
    # One host thread: the checked launches gain nothing from more, and on a busy machine
    # (a CI runner) waiting for descheduled helper threads made the step four times slower.
    env = dict(with_plugin(ctx), TRAINRIG_EMULATED_RACE_CHECK="1",
               TRAINRIG_EMULATED_HOST_THREADS="1")
    rc = ctx.sh([ctx.bundled("gpu_train_tests"),
                 "--gtest_filter=" + ":".join(emulated.SANITIZER_TESTS),
                 "--gtest_output=json:" + ctx.path("gtest.json")], log="sanitizer.log", env=env)
    log = ctx.read_text("sanitizer.log")
    numbers = {"exit_code": rc, "tests": list(emulated.SANITIZER_TESTS),
               "errors": log.count("results depend on the order"),
               "launches_checked": sum(int(n) for n in emulated.RACE_CHECK_AGREED.findall(log))}
    test = ctx.read_json("gtest.json")
    if test:
        numbers["test"] = compare.gtest_numbers(test)
    if rc == 0 and not numbers["launches_checked"]:
        return Outcome(FAILED, "the race check checked no launch", numbers)
    if rc == 0 and numbers["errors"] == 0 and test and not numbers["test"].get("skipped"):
        return Outcome(PASSED, None, numbers)
    why = (f"{numbers['errors']} launches gave different results in the two thread orders"
           if numbers["errors"] else f"the test did not pass under the race check (exit {rc})")
    return Outcome(FAILED, why, numbers)


def gtest_step(binary, result, plugin=False, emulated_tests=None):
    """A GPU test binary of the bundle; a skipped test (no GPU seen) is not a pass. On the
    emulated device, only `emulated_tests` when given (the shapes it runs in seconds)."""
    def action(ctx):
        if not os.path.exists(ctx.bundled(binary)):
            return Outcome(SKIPPED, f"{binary} is not in the bundle (built without it)")
        only = (["--gtest_filter=" + ":".join(emulated_tests)]
                if ctx.emulated and emulated_tests else [])
        rc = ctx.sh([ctx.bundled(binary), *only, "--gtest_output=json:" + ctx.path(result)],
                    env=with_plugin(ctx) if plugin else None)
        doc = ctx.read_json(result)
        if doc is None:
            return Outcome(FAILED, f"{binary} wrote no result (exit {rc})", {"exit_code": rc})
        numbers = compare.gtest_numbers(doc)
        numbers["exit_code"] = rc
        if rc != 0 or numbers["failures"]:
            return Outcome(FAILED, f"{numbers['failures']} of {numbers['tests']} tests failed",
                           numbers)
        if numbers.get("skipped"):
            return Outcome(FAILED, f"{len(numbers['skipped'])} tests skipped: the GPU was not "
                                   "usable to them", numbers)
        return Outcome(PASSED, None, numbers)
    return action


def bench_train(ctx):
    shape = (emulated.TRAIN_BENCH if ctx.emulated else
             ("--train-model", "gpt2", "--train-seq", "1024", "--train-batch", "16"))
    rc = ctx.sh([ctx.bin, "bench", "run", "train", "--train-backend", "cuda", *shape, "--json",
                 "-o", ctx.path("bench-train.json")])
    doc = ctx.read_json("bench-train.json")
    if doc is None:
        return Outcome(FAILED, f"bench run train wrote no result (exit {rc})", {"exit_code": rc})
    numbers = compare.train_bench_numbers(doc)
    numbers["exit_code"] = rc
    return judged_records(ctx, doc, rc, numbers)


def judged_records(ctx, doc, rc, numbers):
    """A benchmark step's outcome: its exit code, every record's own data check, and on the
    emulated device every record labelled so and held to no expectation."""
    records = doc.get("results") or []
    unverified = [f"{r.get('bench')}/{r.get('name')}" for r in records
                  if r.get("verified") is False]
    if rc != 0:
        return Outcome(FAILED, f"exit {rc}", numbers)
    if unverified:
        return Outcome(FAILED, f"{len(unverified)} records failed their own data check: "
                               + ", ".join(unverified[:3]), numbers)
    if ctx.emulated:
        unlabelled = [f"{r.get('bench')}/{r.get('name')}" for r in records
                      if not str((r.get("target") or {}).get("gpu_name", "")).startswith(
                          emulated.DEVICE_PREFIX)
                      or r.get("expected") is not None or r.get("status") != "info"]
        if unlabelled:
            return Outcome(FAILED, f"{len(unlabelled)} records from the emulated device are not "
                                   "labelled so or are judged: " + ", ".join(unlabelled[:3]),
                           numbers)
    return Outcome(PASSED, None, numbers)


def torch_reference(ctx):
    rc = ctx.sh(["python3", os.path.join(ctx.root, "scripts/gpu-bench-torch.py"),
                 ctx.path("torch-reference.json"), "--quick"], env=ctx.system_env)
    doc = ctx.read_json("torch-reference.json")
    if rc != 0 or doc is None:
        return Outcome(FAILED, f"the PyTorch reference failed (exit {rc})", {"exit_code": rc})
    return Outcome(PASSED, None, compare.bench_numbers(doc))


def gpu_bench(name):
    def action(ctx):
        out = f"bench-{name}.json"
        # The emulated device's own sizes (its burn is 3 s) unless a GPU's 10 s.
        seconds = [] if ctx.emulated else ["--seconds", "10"]
        rc = ctx.sh([ctx.bin, "bench", "run", name, "--quick", *seconds, "--json", "-o",
                     ctx.path(out)])
        doc = ctx.read_json(out)
        if doc is None:
            return Outcome(FAILED, f"bench run {name} wrote no result (exit {rc})",
                           {"exit_code": rc})
        numbers = {"exit_code": rc, "records": compare.bench_numbers(doc),
                   "skipped": doc.get("skipped"), "errors": doc.get("errors")}
        if not doc.get("results") and doc.get("skipped") and rc == 0:
            if ctx.emulated:  # four emulated GPUs run every benchmark
                return Outcome(FAILED, "skipped on the emulated device: " + "; ".join(
                    s.get("reason", "") for s in doc["skipped"]), numbers)
            return Outcome(SKIPPED, "; ".join(s.get("reason", "") for s in doc["skipped"]),
                           numbers)
        return judged_records(ctx, doc, rc, numbers)
    return action


def bench_vs_torch(ctx):
    docs = [ctx.read_json_at(p) for p in (ctx.earlier(f"bench-{b}", f"bench-{b}.json")
                                          for b in GPU_BENCHES) if p]
    docs = [d for d in docs if d]
    torch_path = ctx.earlier("torch-reference", "torch-reference.json")
    torch = ctx.read_json_at(torch_path) if torch_path else None
    if not docs or not torch:
        return Outcome(SKIPPED, "no trainrig GPU benchmark or no PyTorch reference to compare")
    merged = compare.merge_bench_docs(docs)
    ctx.write_json("bench-gpu.json", merged)
    result = compare.bench_vs_torch(merged, torch)
    ctx.write_json("bench-vs-torch.json", result)
    return Outcome(PASSED, None, {r["bench"] + "/" + r["name"] + (
        "/" + "x".join(str(d) for d in r["shape"]) if r["shape"] else ""): round(r["ratio"], 3)
        for r in result["rows"]})


def doctor(ctx):
    b = ctx.bin
    ctx.sh([b, "doctor", "-v", "--no-color", "--data-dir", ctx.root], log="doctor.txt")
    ctx.sh([b, "doctor", "--json", "--data-dir", ctx.root, "-o", ctx.path("doctor.json")])
    ctx.sh([b, "collect", "--data-dir", ctx.root, "-o", ctx.path("snapshot.json")])
    ctx.sh([b, "doctor", "--json", "--snapshot", ctx.path("snapshot.json"), "-o",
            ctx.path("doctor-offline.json")])
    ctx.sh([b, "topo", "--no-color"], log="topo.txt")
    if ctx.emulated:
        return emulated_doctor(ctx)
    ctx.sh(["nvidia-smi", "topo", "-m"], log="topo.txt")
    ctx.sh([b, "topo", "--json", "-o", ctx.path("topo.json")])
    _, smi = capture(ctx, ["nvidia-smi", "--query-gpu=index,name,pci.bus_id,pci.device_id,"
                           "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
                           "pcie.link.width.max,memory.total", "--format=csv,noheader"],
                     "nvidia-smi.csv")
    _, memory = capture(ctx, ["nvidia-smi", "-q", "-d", "MEMORY"], "nvidia-smi-memory.txt")
    docs = [ctx.read_json(n) for n in ("doctor.json", "doctor-offline.json", "snapshot.json")]
    if any(d is None for d in docs):
        return Outcome(FAILED, "doctor, collect or the offline doctor wrote no JSON")
    rows = [[c.strip() for c in line.split(",")] for line in smi.splitlines()
            if line and not line.startswith("$")]
    check = compare.doctor_cross_check(*docs, rows, compare.bar1_total_mib(memory))
    ctx.write_json("doctor-check.json", check)
    agree = all(all((g.get("agree") or {"none": False}).values()) for g in check["gpus"])
    ok = check["offline_findings_identical"] and agree and check["gpus"]
    numbers = {k: check[k] for k in ("offline_findings_identical", "doctor_exit_code",
                                     "summary", "gpu_findings")}
    numbers["pci_facts_agree_with_nvidia_smi"] = agree
    return Outcome(PASSED if ok else FAILED, None if ok else
                   "doctor's offline findings or PCI facts disagree (doctor-check.json)", numbers)


def emulated_doctor(ctx):
    """Without a driver there is no nvidia-smi to hold doctor's facts against: the offline
    judgement must still equal the live one, and NVML (the fake) and the emulated CUDA devices
    must be the same GPUs, by bus id, as the GPU stages assume."""
    ctx.sh([ctx.bin, "topo", "--json", "-o", ctx.path("topo.json")])
    docs = [ctx.read_json(n) for n in ("doctor.json", "doctor-offline.json", "snapshot.json")]
    if any(d is None for d in docs):
        return Outcome(FAILED, "doctor, collect or the offline doctor wrote no JSON")
    live, offline, snapshot = docs
    nvml = [g.get("bus_id") for g in (snapshot.get("nvml") or {}).get("gpus") or []]
    cuda = ctx.env.get("TRAINRIG_EMULATED_GPUS", "").split(",")
    numbers = {"offline_findings_identical": live.get("findings") == offline.get("findings"),
               "doctor_exit_code": live.get("exit_code"), "summary": live.get("summary"),
               "nvml_bus_ids": nvml, "emulated_bus_ids": cuda,
               "pci_facts_against_nvidia_smi": "not compared: no NVIDIA driver"}
    if not numbers["offline_findings_identical"]:
        return Outcome(FAILED, "doctor's offline findings differ from its live ones", numbers)
    if sorted(nvml) != sorted(cuda):
        return Outcome(FAILED, f"NVML sees the GPUs {', '.join(nvml) or 'none'} and the emulated "
                               f"CUDA devices are {', '.join(cuda)}: not the same GPUs", numbers)
    return Outcome(PASSED, None, numbers)


def doctor_timing(ctx, pairs=10):
    a, b = [], []
    for _ in range(2):
        ctx.sh([ctx.bin, "doctor", "--json"], log="timing.log")
        ctx.sh(["nvidia-smi", "-q"], log="timing.log")
    for _ in range(pairs):
        for argv, into in (([ctx.bin, "doctor", "--json"], a), (["nvidia-smi", "-q"], b)):
            t = time.perf_counter()
            ctx.sh(argv, log="timing.log")
            into.append(time.perf_counter() - t)
    t = compare.paired_timing(a, b)
    return Outcome(PASSED, None, {"doctor_wall_s": t["a_wall_s"],
                                  "nvidia_smi_q_wall_s": t["b_wall_s"],
                                  "ratio_doctor_over_nvidia_smi_q": t["ratio_median"]})


def validate(ctx):
    if ctx.sh([ctx.bin, "validate", "--help"], log="help.txt") != 0:
        return Outcome(SKIPPED, "this build has no `trainrig validate`")
    # validate.json is report.json of the report directory, which stays in the work folder.
    # The fake NVML's driver is older than this machine's CUDA toolkit: the emulated run leaves
    # the stack stage out, as the emulated tests do.
    skip = ["--skip", "stack"] if ctx.emulated else []
    rc = ctx.sh([ctx.bin, "validate", "--level", "quick", *skip, "--json", "-o",
                 ctx.path("validate.json"), "--report", ctx.path("validate-report")])
    doc = ctx.read_json("validate.json") or {}
    # The signed report comes back in the archive (the report folder itself does not).
    report = os.path.join(ctx.path("validate-report"), "report.md")
    if os.path.isfile(report):
        shutil.copyfile(report, ctx.path("validate-report.md"))
    numbers = {"exit_code": rc, "verdict": doc.get("verdict"), "scope": doc.get("scope"),
               "stages": {s.get("name"): s.get("state") for s in doc.get("stages") or []}}
    if ctx.emulated:
        return emulated_verdict(rc, doc, numbers)
    # validate's own exit codes: 0 ready (with or without warnings), 1 not ready, 2 unknown.
    return Outcome(PASSED if rc == 0 else FAILED, None if rc == 0 else f"exit {rc}", numbers)


def emulated_verdict(rc, doc, numbers):
    """An emulated device can never make a GPU machine READY: validate must say UNKNOWN (exit 2)
    in the emulated scope, with every stage that touches the GPUs run and no finding drawn from
    an emulated timing."""
    not_run = [n for n in emulated.VALIDATE_STAGES if numbers["stages"].get(n) != "ran"]
    timed = [i.get("id") for i in doc.get("items") or [] if str(i.get("id")).startswith("bench.")]
    if rc != 2 or doc.get("verdict") != "UNKNOWN" or doc.get("scope") != "emulated":
        return Outcome(FAILED, f"validate on the emulated device said {doc.get('verdict')} in the "
                               f"{doc.get('scope')} scope (exit {rc}), not UNKNOWN in the "
                               "emulated scope", numbers)
    if not_run:
        return Outcome(FAILED, "stages that did not run: " + ", ".join(not_run), numbers)
    if timed:
        return Outcome(FAILED, "findings judged on emulated timings: " + ", ".join(timed[:3]),
                       numbers)
    return Outcome(PASSED, None, numbers)


def torch_gpt2(ctx):
    rc = ctx.sh(["python3", os.path.join(ctx.root, "bench/scripts/gpt2_torch.py"), "--device",
                 "cuda", "--seq", "1024", "--batch", "16", "--steps", "40", "--warmup-steps",
                 "15"], log="gpt2-torch.log", env=ctx.system_env)
    lines = [ln for ln in ctx.read_text("gpt2-torch.log").splitlines() if ln.startswith("{")]
    if rc != 0 or not lines:
        return Outcome(FAILED, f"the PyTorch GPT-2 run failed (exit {rc})", {"exit_code": rc})
    with open(ctx.path("train-torch-gpt2.json"), "w") as f:
        f.write(lines[-1] + "\n")
    doc = ctx.read_json("train-torch-gpt2.json") or {}
    return Outcome(PASSED, None, {k: doc.get(k) for k in ("tokens_per_s", "step_s")})


def train_vs_torch(ctx):
    ours = ctx.read_json_at(ctx.earlier("bench-train", "bench-train.json"))
    torch = ctx.read_json_at(ctx.earlier("torch-gpt2", "train-torch-gpt2.json"))
    if not ours or not torch:
        return Outcome(SKIPPED, "the trainrig or the PyTorch GPT-2 result is missing")
    row = compare.train_vs_torch(ours, torch)
    ctx.write_json("train-vs-torch.json", row)
    return Outcome(PASSED, None, {k: row[k] for k in ("ratio", "trainrig_tokens_per_s",
                                                      "torch_tokens_per_s", "trainrig_mfu")})


def plan():
    """The steps in order: name, cap (s), minimum (s), action, needs, files for the output folder."""
    pre = ("preflight",)
    steps = [
        Step("preflight", 30, 1, preflight),
        Step("sanitizer-memcheck", 75, 20, sanitizer("memcheck"), pre),
        Step("sanitizer-racecheck", 75, 20, sanitizer("racecheck"), pre),
        Step("train-test", 120, 30, gtest_step("gpu_train_tests", "train-tests.json", plugin=True,
                                               emulated_tests=emulated.TRAIN_TESTS),
             pre, primary=("train-tests.json",)),
        Step("train-llama", 60, 15, llama_check.action, pre),
        Step("bench-train", 150, 60, bench_train, pre, primary=("bench-train.json",)),
        Step("bench-plugin-tests", 60, 10, gtest_step("gpu_bench_tests", "gtest.json"), pre),
        Step("torch-reference", 90, 20, torch_reference, pre),
    ]
    steps += [Step(f"bench-{b}", 45, 10, gpu_bench(b), pre) for b in GPU_BENCHES]
    steps += [
        Step("bench-vs-torch", 15, 1, bench_vs_torch, pre, primary=("bench-vs-torch.json",)),
        Step("doctor", 40, 5, doctor, pre),
        Step("nvml-tests", 30, 5, gtest_step("gpu_tests", "gtest.json"), pre),
        Step("data-tests", 30, 5, gtest_step("gpu_data_tests", "gtest.json"), pre),
        Step("doctor-timing", 30, 10, doctor_timing, pre),
        Step("validate", 120, 30, validate, pre),
        Step("torch-gpt2", 180, 60, torch_gpt2, pre),
        Step("train-vs-torch", 15, 1, train_vs_torch, ("bench-train", "torch-gpt2"),
             primary=("train-vs-torch.json",)),
    ]
    return steps
