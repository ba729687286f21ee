"""scripts/gpu-check.sh without a GPU: the dry mode's control flow (order, deadline accounting,
a step that runs out is not run, the result set within what comes back from the GPU machine),
the real pre-flight refusing a machine without a bundle or a driver, and the pure readings of
scripts/gpu_check/compare.py."""
import glob
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest
from array import array

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "gpu-check.sh")
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu_check"))

import compare  # noqa: E402
import llama_check  # noqa: E402
import steps  # noqa: E402

# What the GPU machine returns (its device tool's limits): at most 8 files of 16 MiB, no deeper
# than two folders, names of letters, digits, '.', '_' and '-'. The script promises 6.
MAX_FILES, MAX_BYTES = 6, 16 << 20
NAME = re.compile(r"^[A-Za-z0-9._-]+$")


def run(*args, dry="", scale="0.02", deadline=None, timeout=60):
    out = tempfile.mkdtemp(prefix="gpu-check-test-")
    env = dict(os.environ, OUT=out, TRAINRIG_GPU_CHECK_DRY=dry,
               TRAINRIG_GPU_CHECK_DRY_SCALE=scale)
    argv = [SCRIPT, *args] + (["--deadline", str(deadline)] if deadline else [])
    t = time.monotonic()
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t
    summary = None
    if os.path.exists(os.path.join(out, "summary.json")):
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
    return p, out, summary, wall


def by_name(summary):
    return {s["name"]: s for s in summary["steps"]}


def stand_in_group(summary_path, step, wait=30):
    """The process group of `step`'s dry stand-in once it has started: the runner's work folder
    is in the summary, and the stand-in leaves its pid there (dry.py)."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            with open(summary_path) as f:
                work = json.load(f)["work_dir"]
            for path in glob.glob(os.path.join(work, f"*-{step}", "stand-in.pid")):
                with open(path) as f:
                    return os.getpgid(int(f.read()))
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"the stand-in of {step} did not start")


def group_members(pgid):
    """Live processes of a process group (zombies, already dead, are not counted)."""
    members = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rfind(")") + 2:].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(stat.split("/")[2]))
    return members


class ResultSet(unittest.TestCase):
    def check_result_set(self, out):
        files = []
        for d, dirs, fs in os.walk(out):
            self.assertEqual(dirs, [], "the output folder has no subfolders")
            files += [os.path.join(d, f) for f in fs]
        self.assertLessEqual(len(files), MAX_FILES, files)
        for f in files:
            self.assertRegex(os.path.basename(f), NAME)
            self.assertLess(os.path.getsize(f), MAX_BYTES)

    def test_the_plan_promises_at_most_six_files(self):
        primary = [f for s in steps.plan() for f in s.primary]
        self.assertEqual(len(primary), len(set(primary)))
        self.assertLessEqual(len(primary) + 2, MAX_FILES)  # + summary.json and details.tar
        for f in primary:
            self.assertRegex(f, NAME)

    def test_the_order_puts_what_never_ran_first_and_pytorch_last(self):
        names = [s.name for s in steps.plan()]
        # The Llama check before the 150 s GPT-2 bench: a short window answers it first.
        self.assertEqual(names[:6], ["preflight", "sanitizer-memcheck", "sanitizer-racecheck",
                                     "train-test", "train-llama", "bench-train"])
        self.assertLess(names.index("bench-gemm"), names.index("validate"))
        self.assertEqual(names[-2:], ["torch-gpt2", "train-vs-torch"])

    def test_a_dry_run_passes_every_step_in_order_within_the_deadline(self):
        p, out, summary, _ = run("--dry-run", scale="0.05")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([s["name"] for s in summary["steps"]], [s.name for s in steps.plan()])
        self.assertTrue(all(s["status"] == "passed" for s in summary["steps"]))
        self.assertEqual(summary["mode"], "dry-run")
        # The default deadline leaves a 15-minute GPU window room to start the machine and rerun.
        self.assertEqual(summary["deadline_s"], 300)
        self.assertTrue(p.stdout.startswith(
            "gpu-check (dry-run): %d steps under a 300 s deadline: preflight, sanitizer-memcheck, "
            "sanitizer-racecheck, train-test, train-llama, bench-train, " % len(steps.plan())),
            p.stdout)
        self.assertLessEqual(sum(s["seconds"] for s in summary["steps"]), summary["deadline_s"])
        self.check_result_set(out)
        self.assertEqual(sorted(os.listdir(out)),
                         ["bench-train.json", "bench-vs-torch.json", "details.tar",
                          "summary.json", "train-tests.json", "train-vs-torch.json"])
        with tarfile.open(os.path.join(out, "details.tar")) as tar:
            logged = {n.split("/")[0] for n in tar.getnames() if n.endswith("step.log")}
        self.assertEqual(len(logged), len(summary["steps"]))

    def test_a_step_that_runs_out_is_not_run_and_the_rest_go_on(self):
        p, out, summary, _ = run("--dry-run", dry="train-test=hang", scale="0.02")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        s = by_name(summary)
        hung = s["train-test"]
        self.assertEqual(hung["status"], "not_run")
        self.assertTrue(hung["timed_out"])
        self.assertIn("ran out of its 120 s", hung["reason"])
        # Stopped at its timeout (plus the SIGTERM grace, which the stand-in ignores, and
        # process start-ups under load).
        self.assertGreaterEqual(hung["seconds"], hung["timeout_s"])
        self.assertLessEqual(hung["seconds"], hung["timeout_s"] * 1.1 + 5)
        self.assertEqual(s["bench-train"]["status"], "passed")
        self.assertNotIn("train-tests.json", os.listdir(out))
        self.check_result_set(out)

    def test_a_short_deadline_starts_no_step_it_cannot_finish(self):
        p, out, summary, wall = run("--dry-run", dry="sanitizer-memcheck=hang", scale="0.05",
                                    deadline=100)
        self.assertEqual(p.returncode, 1)
        s = by_name(summary)
        self.assertEqual(s["sanitizer-memcheck"]["status"], "not_run")
        self.assertEqual(s["sanitizer-memcheck"]["timeout_s"], 75)
        late = [r for r in summary["steps"] if r["status"] == "not_run"
                and not r.get("timed_out") and not r["reason"].startswith("needs ")]
        self.assertTrue(late, "some steps find too little time left")
        for r in late:
            self.assertIn("of the deadline left", r["reason"])
            self.assertIsNone(r["timeout_s"])
        for r in summary["steps"]:
            if r["timeout_s"] is not None:
                self.assertLessEqual(r["timeout_s"], r["cap_s"])
        # Within the deadline, up to the grace and reserve, and process start-ups under load.
        self.assertLessEqual(summary["seconds"], 100 * 1.1)
        self.assertLess(wall, 100 * 0.05 + 5)
        self.check_result_set(out)

    def test_an_earlier_runs_results_do_not_mix_in(self):
        out = tempfile.mkdtemp(prefix="gpu-check-test-")
        stale = os.path.join(out, "train-tests.json")
        with open(stale, "w") as f:
            f.write("{}")
        env = dict(os.environ, OUT=out, TRAINRIG_GPU_CHECK_DRY="preflight=fail")
        subprocess.run([SCRIPT, "--dry-run"], env=env, capture_output=True, timeout=60)
        self.assertFalse(os.path.exists(stale))

    def test_a_failed_step_is_reported_and_later_steps_run(self):
        p, out, summary, _ = run("--dry-run", dry="bench-gemm=fail")
        self.assertEqual(p.returncode, 1)
        s = by_name(summary)
        self.assertEqual(s["bench-gemm"]["status"], "failed")
        self.assertEqual(s["bench-d2h"]["status"], "passed")
        self.assertEqual(s["train-vs-torch"]["status"], "passed")

    def test_a_step_whose_inputs_did_not_pass_is_not_run(self):
        p, out, summary, _ = run("--dry-run", dry="torch-gpt2=fail")
        s = by_name(summary)
        self.assertEqual(s["train-vs-torch"]["status"], "not_run")
        self.assertIn("needs torch-gpt2", s["train-vs-torch"]["reason"])
        self.assertNotIn("train-vs-torch.json", os.listdir(out))

    def test_a_failed_preflight_exits_2_and_runs_nothing(self):
        p, out, summary, _ = run("--dry-run", dry="preflight=fail")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertTrue(p.stderr.startswith("gpu-check: cannot run:"))
        self.assertTrue(all(r["status"] == "not_run" for r in summary["steps"][1:]))
        self.check_result_set(out)

    def test_without_a_bundle_or_a_driver_the_real_preflight_says_so(self):
        missing = os.path.join(tempfile.mkdtemp(), "no-bundle")
        p, out, summary, _ = run("--bundle", missing, deadline=60)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(missing, p.stderr)
        self.assertIn("gpu-bundle.sh", p.stderr)
        pre = summary["steps"][0]
        self.assertEqual(pre["status"], "failed")
        if not any(os.access(os.path.join(d, "nvidia-smi"), os.X_OK)
                   for d in os.environ.get("PATH", "").split(os.pathsep)):
            self.assertTrue(any("nvidia-smi" in x for x in pre["numbers"]["problems"]))
        self.assertEqual(summary["mode"], "gpu")

    def test_stopped_from_outside_it_keeps_what_it_measured(self):
        out = tempfile.mkdtemp(prefix="gpu-check-test-")
        env = dict(os.environ, OUT=out, TRAINRIG_GPU_CHECK_DRY="bench-train=hang",
                   TRAINRIG_GPU_CHECK_DRY_SCALE="0.05")
        p = subprocess.Popen([SCRIPT, "--dry-run"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        summary_path = os.path.join(out, "summary.json")
        for _ in range(200):  # until train-llama (the step before the hang) is recorded
            time.sleep(0.05)
            try:
                with open(summary_path) as f:
                    if any(s["name"] == "train-llama" for s in json.load(f)["steps"]):
                        break
            except (OSError, ValueError):
                pass
        group = stand_in_group(summary_path, "bench-train")
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM)
        with open(summary_path) as f:
            summary = json.load(f)
        self.assertEqual(summary["interrupted_by_signal"], signal.SIGTERM)
        last = summary["steps"][-1]
        self.assertEqual((last["name"], last["status"]), ("bench-train", "not_run"))
        self.assertIn("train-tests.json", os.listdir(out))
        with tarfile.open(os.path.join(out, "details.tar")) as tar:
            self.assertTrue(any(n.startswith("03-train-test/") for n in tar.getnames()))
        # The stand-in (it ignores SIGTERM) was killed with its group before the runner exited.
        self.assertEqual(group_members(group), [])
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        self.assertNotIn(summary["work_dir"], ps)
        self.check_result_set(out)

    def test_a_runner_killed_outright_takes_its_step_with_it(self):
        # SIGKILL runs no handler (a device tool's timeout sends it): the watcher in the step's
        # group sees the runner gone and stops the group, sleeping stand-in included.
        out = tempfile.mkdtemp(prefix="gpu-check-test-")
        env = dict(os.environ, OUT=out, TRAINRIG_GPU_CHECK_DRY="train-test=hang",
                   TRAINRIG_GPU_CHECK_DRY_SCALE="0.05")
        p = subprocess.Popen([SCRIPT, "--dry-run"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        group = stand_in_group(os.path.join(out, "summary.json"), "train-test")
        self.assertTrue(group_members(group), "the hung stand-in runs")
        p.kill()
        p.wait(timeout=10)
        for _ in range(100):
            if not group_members(group):
                break
            time.sleep(0.1)
        self.assertEqual(group_members(group), [], "the step's processes outlived the runner")
        with open(os.path.join(out, "summary.json")) as f:
            shutil.rmtree(json.load(f)["work_dir"], ignore_errors=True)

    def test_a_bad_dry_spec_is_one_clear_error(self):
        p, _, _, _ = run("--dry-run", dry="train-test=explode")
        self.assertEqual(p.returncode, 2)
        self.assertIn("'train-test=explode' is not STEP=ok|fail|hang", p.stderr)


class Readings(unittest.TestCase):
    def test_gtest_counts_failures_skips_and_margins(self):
        doc = {"tests": 3, "failures": 1, "disabled": 0, "testsuites": [{
            "name": "TrainCuda", "testsuite": [
                {"name": "MatchesTheCpuReference/hs16_T64", "status": "RUN",
                 "result": "COMPLETED", "worst_update": "0.41"},
                {"name": "MatchesTheCpuReference/hs64_T100", "status": "RUN",
                 "result": "COMPLETED", "failures": [{"failure": "grad qkv_w: 0.2 exceeds 0.05\n"
                                                                  "more"}]},
                {"name": "MatchesTheCpuReference/hs32_T200", "status": "RUN",
                 "result": "SKIPPED"}]}]}
        n = compare.gtest_numbers(doc)
        self.assertEqual(n["failures"], 1)
        self.assertEqual(n["failed"][0]["first"][0], "grad qkv_w: 0.2 exceeds 0.05")
        self.assertEqual(n["skipped"], ["TrainCuda.MatchesTheCpuReference/hs32_T200"])
        self.assertEqual(n["properties"]["TrainCuda.MatchesTheCpuReference/hs16_T64"],
                         {"worst_update": "0.41"})

    def test_sanitizer_summaries(self):
        self.assertEqual(compare.sanitizer_numbers("========= ERROR SUMMARY: 0 errors\n")["errors"], 0)
        text = "========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)\n"
        self.assertEqual(compare.sanitizer_numbers(text)["errors"], 3)
        self.assertTrue(compare.sanitizer_numbers("Device not supported")["device_not_supported"])

    def test_bench_against_torch_matches_records_and_shapes(self):
        ours = {"results": [
            {"bench": "gemm", "name": "bf16", "median": 700, "params": {"m": 8192, "n": 8192, "k": 8192}},
            {"bench": "gemm", "name": "bf16", "median": 500, "params": {"m": 4096, "n": 4096, "k": 4096}},
            {"bench": "hbm", "name": "copy", "median": 4.0e12, "params": {}},
            {"bench": "hbm", "name": "copy", "median": 1.0, "params": {"summary": "all"}}]}
        torch = {"results": [
            {"bench": "gemm", "name": "bf16", "median": 770, "unit": "FLOP/s", "params": {"m": 8192, "n": 8192, "k": 8192}},
            {"bench": "gemm", "name": "bf16", "median": 600, "params": {"m": 4096, "n": 4096, "k": 4096}},
            {"bench": "hbm", "name": "copy", "median": 4.0e12, "params": {}}]}
        r = compare.bench_vs_torch(ours, torch)
        self.assertEqual(len(r["rows"]), 3)
        best = r["summary"]["gemm_bf16_at_torch_best_shape"]
        self.assertEqual(best["shape"], [8192, 8192, 8192])
        self.assertAlmostEqual(best["ratio"], 700 / 770)
        self.assertEqual(compare.merge_bench_docs([{"results": [1], "skipped": []},
                                                   {"results": [2], "skipped": [3]}]),
                         {"results": [1, 2], "skipped": [3], "errors": []})

    def test_train_against_torch(self):
        ours = {"results": [{"name": "tokens", "median": 600000, "verified": True,
                             "counted": {"median_phase_s": {"forward": 0.1}}},
                            {"name": "mfu", "median": 0.45},
                            {"name": "peak-memory", "counted": {"bytes": 5}}]}
        row = compare.train_vs_torch(ours, {"tokens_per_s": 500000, "losses": [1, 2]})
        self.assertAlmostEqual(row["ratio"], 1.2)
        self.assertEqual(row["trainrig_mfu"], 0.45)
        self.assertNotIn("losses", row["torch"])
        self.assertIsNone(compare.train_vs_torch(ours, {})["ratio"])

    def test_doctor_against_nvidia_smi(self):
        doctor = {"findings": [{"id": "gpu.count", "status": "pass", "summary": "1 GPU"}],
                  "exit_code": 0, "summary": {"pass": 1}}
        snap = {"pci_devices": [{"address": "0000:00:05.0", "max_link_width": 16, "max_link_speed": 32.0,
                                 "resources": [{"start": 0, "end": (16 << 20) - 1},
                                               {"start": 0, "end": (256 << 30) - 1}]}]}
        row = ["0", "NVIDIA H200", "00000000:00:05.0", "0x233510DE", "1", "5", "16", "16", "143771 MiB"]
        check = compare.doctor_cross_check(doctor, dict(doctor), snap, [row], 262144)
        self.assertTrue(check["offline_findings_identical"])
        self.assertEqual(check["gpus"][0]["agree"], {"max_width": True, "max_speed": True, "bar1": True})
        text = "    BAR1 Memory Usage\n        Total                             : 262144 MiB\n"
        self.assertEqual(compare.bar1_total_mib(text), 262144)


def write_checkpoint(folder, model, tensors):
    """A step-1 checkpoint as `trainrig train` writes it: state.json and model.bin."""
    step = llama_check.first_checkpoint(folder)
    os.makedirs(step)
    values, meta = array("f"), []
    for name, vals in tensors.items():
        meta.append({"name": name, "offset": len(values), "elements": len(vals)})
        values.extend(vals)
    if sys.byteorder == "big":
        values.byteswap()
    with open(os.path.join(step, "state.json"), "w") as f:
        json.dump({"format": "trainrig.train.checkpoint", "step": 1, "model": model,
                   "tensors": meta}, f)
    with open(os.path.join(step, "model.bin"), "wb") as f:
        f.write(values.tobytes())


class LlamaUpdates(unittest.TestCase):
    """train-llama's judgement on synthetic runs: the curves agree exactly, and the first step's
    updates are Adam's ±lr per element (the sign of each gradient), as on a real first step."""
    MODEL = {"arch": "llama", "layers": 1, "heads": 4, "kv_heads": 2, "channels": 16,
             "qkv_bias": True}
    LR = 1e-3

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="llama-check-test-")
        self.addCleanup(shutil.rmtree, self.folder, ignore_errors=True)
        self.limits = llama_check.load_limits(ROOT)
        rng = random.Random(7)
        width = 16 + 2 * 2 * 4  # q | k | v rows of qkv_w and qkv_b
        shapes = {"wte": 64 * 16, "wpe": 0, "ln1_w": 16, "qkv_w": width * 16, "qkv_b": width,
                  "attn_proj_w": 256, "fc_w": 2 * 32 * 16, "lm_head": 64 * 16}
        self.p0 = {n: [rng.gauss(0, 0.02) for _ in range(k)] for n, k in shapes.items()}
        self.grad = {n: [rng.gauss(0, 1) for _ in range(k)] for n, k in shapes.items()}

    def step(self, flip=None):
        """p₀ − lr·sign(g), with the elements for which flip(name, i) holds stepping the other
        way (a gradient of the wrong sign there)."""
        out = {}
        for name, p0 in self.p0.items():
            g = self.grad[name]
            out[name] = [p - self.LR * math.copysign(1, -x if flip and flip(name, i) else x)
                         for i, (p, x) in enumerate(zip(p0, g))]
        return out

    def write_runs(self, cuda_params, name="shape"):
        lines = [{"step": s, "loss": 4.0 - 0.1 * s, "grad_norm": 1.5} for s in range(1, 5)]
        lines[-1]["val_loss"] = 3.7
        for backend in ("cpu", "cuda"):
            with open(os.path.join(self.folder, f"{name}-{backend}.jsonl"), "w") as f:
                f.writelines(json.dumps(line) + "\n" for line in lines)
            with open(os.path.join(self.folder, f"{name}-{backend}.json"), "w") as f:
                json.dump({"first_val_loss": 4.1}, f)
        write_checkpoint(os.path.join(self.folder, f"{name}-initial"), self.MODEL, self.p0)
        write_checkpoint(os.path.join(self.folder, f"{name}-cpu"), self.MODEL, self.step())
        write_checkpoint(os.path.join(self.folder, f"{name}-cuda"), self.MODEL, cuda_params)
        return llama_check.judge(self.folder, name, self.limits)

    def test_the_limits_are_backend_matchs(self):
        with open(os.path.join(ROOT, "tests/support/match_limits.json")) as f:
            doc = json.load(f)
        self.assertEqual(self.limits["updates"], doc["updates"])
        # backend_match.h: update_limit(g) = 2·√(2g/π) at the gradient limit.
        self.assertAlmostEqual(doc["updates"], 2 * math.sqrt(2 * doc["grads"] / math.pi), 12)
        self.assertEqual(self.limits["loss"], doc["loss"])

    def test_updates_that_differ_in_a_few_signs_pass(self):
        # 1 % of the elements of the large tensors step the other way: a relative error of
        # 2·√0.01 = 0.2.
        r = self.write_runs(self.step(lambda n, i: len(self.p0[n]) > 500 and i % 100 == 0))
        self.assertEqual(r["problems"], [])
        self.assertLess(r["updates"]["worst"], 1)
        self.assertEqual(r["updates"]["limit"], self.limits["updates"])

    def test_one_wrong_tensor_fails_while_the_curves_agree(self):
        # The key rows of qkv_w step the wrong way, as with dK from one head of the group or a
        # RoPE backward of the wrong sign; the loss and gradient norm are untouched.
        k_rows = range(16 * 16, 24 * 16)
        r = self.write_runs(self.step(lambda n, i: n == "qkv_w" and i in k_rows))
        self.assertEqual(r["worst"]["loss"], 0)
        self.assertEqual(r["worst"]["grad_norm"], 0)
        self.assertEqual(len(r["problems"]), 1, r["problems"])
        self.assertIn("shape: the update of qkv_w after step 1", r["problems"][0])
        self.assertGreater(r["updates"]["errors"]["qkv_w"], self.limits["updates"])
        self.assertLess(r["updates"]["errors"]["attn_proj_w"], 1e-12)

    def test_the_k_biases_are_left_out_and_the_q_biases_are_not(self):
        k_bias = set(range(16, 24))
        self.assertEqual(compare.k_bias_positions(self.MODEL, 32), k_bias)
        r = self.write_runs(self.step(lambda n, i: n == "qkv_b" and i in k_bias))
        self.assertEqual(r["problems"], [])
        self.assertIn("qkv_b (q, v)", r["updates"]["errors"])
        r = self.write_runs(self.step(lambda n, i: n == "qkv_b" and i < 4), name="q")
        self.assertEqual(len(r["problems"]), 1, r["problems"])
        self.assertIn("qkv_b (q, v)", r["problems"][0])

    def test_a_missing_checkpoint_or_a_nan_fails(self):
        bad = self.step()
        bad["ln1_w"][3] = float("nan")
        r = self.write_runs(bad)
        self.assertEqual(len(r["problems"]), 1, r["problems"])
        self.assertIn("ln1_w", r["problems"][0])
        self.assertEqual(r["updates"]["worst"], float("inf"))
        os.remove(os.path.join(llama_check.first_checkpoint(
            os.path.join(self.folder, "shape-initial")), "model.bin"))
        r = llama_check.judge(self.folder, "shape", self.limits)
        self.assertIn("no step-1 checkpoint of the initial run", r["problems"][0])


@unittest.skipUnless(os.environ.get("TRAINRIG_BINARY") and os.environ.get("TRAINRIG_FAKE_TRAIN_LIB"),
                     "needs TRAINRIG_BINARY and TRAINRIG_FAKE_TRAIN_LIB (set by CTest)")
class LlamaCheckOnTheStandInPlugin(unittest.TestCase):
    """The train-llama step itself, `trainrig train` and all, with the CPU stand-in for the CUDA
    plugin (tests/fakes/fake_train_plugin.cpp) in the bundle: the two backends agree to the bit,
    so every tensor's update is compared and found equal. The Qwen2-style shape only (q/k/v
    biases, so the K-bias cut is taken); llama-tiny's 50257-token vocabulary takes long here."""

    def test_the_step_passes_and_compares_every_tensor(self):
        bundle, out, work = (tempfile.mkdtemp(prefix=f"gpu-check-{p}-")
                             for p in ("bundle", "out", "work"))
        for d in (bundle, out, work):
            self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        os.symlink(os.environ["TRAINRIG_BINARY"], os.path.join(bundle, "trainrig"))
        os.symlink(os.environ["TRAINRIG_FAKE_TRAIN_LIB"],
                   os.path.join(bundle, "libtrainrig_train_cuda.so"))
        shapes = llama_check.SHAPES
        llama_check.SHAPES = tuple(s for s in shapes if s[0] == "qwen2-style")
        try:
            from context import Context
            from runner import Run
            run = Run(out, work, 300)
            record = run.execute(steps.Step("train-llama", 120, 15, llama_check.action),
                                 Context(ROOT, bundle))
        finally:
            llama_check.SHAPES = shapes
        self.assertEqual(record["status"], "passed", json.dumps(record, indent=1))
        shape = record["numbers"]["qwen2-style"]
        self.assertEqual(set(shape["updates"]["errors"]),
                         {"wte", "ln1_w", "qkv_w", "qkv_b (q, v)", "attn_proj_w", "ln2_w", "fc_w",
                          "fc_proj_w", "lnf_w"})
        self.assertEqual(shape["updates"]["worst"], 0)
        self.assertEqual(shape["worst"], {"loss": 0, "grad_norm": 0, "val_loss": 0})


if __name__ == "__main__":
    unittest.main()
