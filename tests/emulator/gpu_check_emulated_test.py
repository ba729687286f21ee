"""scripts/gpu-check.sh --emulated for real: a bundle packed by scripts/gpu-bundle.sh --emulated,
and every step's own command on the emulated CUDA device (docs/gpu-check.md, "On the emulated
device"). Every step that can run there passes, each of the others is skipped for its stated
reason; the race check ran the trainer's kernels in two thread orders; every benchmark record is
labelled emulated and judged by nothing; validate says UNKNOWN, never READY; and neither mode
takes the other's bundle. Usage: gpu_check_emulated_test.py TRAINRIG FAKE_NVML_LIB (the build's
emulated trainrig, beside its plugins and test binaries, and the fake NVML library)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu_check"))

import emulated  # noqa: E402

BINARY, FAKE_NVML_LIB = sys.argv[1], sys.argv[2]

# The steps whose command needs what the emulated device is not (a driver, PyTorch on CUDA, an
# AddressSanitizer build) and the comparisons that need their results.
INHERITED = ("TRAINRIG_EMULATED_GPUS", "TRAINRIG_EMULATED_GPU_MEMORY",
             "TRAINRIG_EMULATED_GPU_MODEL", "TRAINRIG_EMULATED_RACE_CHECK",
             "TRAINRIG_NVML_LIBRARY", "TRAINRIG_FAKE_NVML")
SKIPPED_HERE = {"sanitizer-memcheck", "torch-reference", "bench-vs-torch", "nvml-tests",
                "data-tests", "doctor-timing", "torch-gpt2", "train-vs-torch"}


def no_expectation_text():
    """kEmulatedNoExpectation, as src/core/emulated_gpu.h defines it."""
    with open(os.path.join(ROOT, "src/core/emulated_gpu.h")) as f:
        text = f.read()
    m = re.search(r'kEmulatedNoExpectation\s*=\s*((?:\s*"[^"]*")+)', text)
    return "".join(re.findall(r'"([^"]*)"', m.group(1)))


class EmulatedGpuCheck(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gpu-check-emulated-")
        cls.bundle, cls.out = os.path.join(cls.tmp, "bundle"), os.path.join(cls.tmp, "out")
        # The devices as the bundle describes them: nothing inherited.
        cls.env = {k: v for k, v in os.environ.items() if k not in INHERITED}
        packed = subprocess.run([os.path.join(ROOT, "scripts/gpu-bundle.sh"), "--emulated",
                                 cls.bundle], capture_output=True, text=True,
                                env=dict(cls.env, TRAINRIG_BIN=os.path.abspath(BINARY),
                                         TRAINRIG_FAKE_NVML_LIB=os.path.abspath(FAKE_NVML_LIB)))
        assert packed.returncode == 0, packed.stderr
        cls.check = subprocess.run([os.path.join(ROOT, "scripts/gpu-check.sh"), "--emulated",
                                  "--bundle", cls.bundle, "--out", cls.out],
                                 env=cls.env, capture_output=True, text=True, timeout=1500)
        with open(os.path.join(cls.out, "summary.json")) as f:
            cls.summary = json.load(f)
        cls.steps = {s["name"]: s for s in cls.summary["steps"]}
        cls.archive = tarfile.open(os.path.join(cls.out, "details.tar"))

    @classmethod
    def tearDownClass(cls):
        cls.archive.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def result(self, step):
        """A step's JSON of the same name: in the output folder, or else in the archive."""
        path = os.path.join(self.out, f"{step}.json")
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        return json.loads(self.archived(step, f"{step}.json"))

    def archived(self, step, name):
        for member in self.archive.getnames():
            if member.endswith(f"-{step}/{name}"):
                return self.archive.extractfile(member).read().decode()
        self.fail(f"{step}/{name} is not in details.tar")

    def test_every_step_that_can_run_passes_and_the_others_say_why(self):
        self.assertEqual(self.check.returncode, 0, self.check.stdout[-3000:] + self.check.stderr)
        self.assertEqual(self.summary["mode"], "emulated")
        for name, step in self.steps.items():
            with self.subTest(step=name):
                if name in SKIPPED_HERE:
                    self.assertEqual(step["status"], "skipped", step)
                    self.assertTrue(step.get("reason"), step)
                else:
                    self.assertEqual(step["status"], "passed", step)
        gpus = self.steps["preflight"]["numbers"]["emulated"]["TRAINRIG_EMULATED_GPUS"]
        self.assertEqual(gpus, "0000:41:00.0,0000:61:00.0,0000:a1:00.0,0000:c1:00.0")

    def test_the_race_check_ran_the_trainer_kernels_in_two_orders(self):
        step = self.steps["sanitizer-racecheck"]["numbers"]
        self.assertEqual(step["errors"], 0)
        self.assertEqual(step["test"]["tests"], len(emulated.SANITIZER_TESTS), step)
        # Four training steps of two models launch hundreds of kernels.
        self.assertGreater(step["launches_checked"], 200, step)

    def test_every_benchmark_record_is_emulated_verified_and_unjudged(self):
        text = no_expectation_text()
        benches = [n for n in self.steps if n.startswith("bench-") and n not in SKIPPED_HERE
                   and n != "bench-plugin-tests"]
        self.assertEqual(len(benches), 8, benches)  # seven GPU benchmarks and the trainer's
        for name in benches:
            doc = self.result(name)
            self.assertTrue(doc["results"], name)
            self.assertFalse(doc["errors"], name)
            self.assertFalse(doc["skipped"], name)
            for r in doc["results"]:
                with self.subTest(bench=name, record=r["name"]):
                    self.assertTrue(r["target"]["gpu_name"].startswith(emulated.DEVICE_PREFIX))
                    self.assertIs(r["verified"], True)
                    self.assertIsNone(r["expected"])
                    self.assertEqual(r["no_expectation"], text)
                    self.assertEqual(r["status"], "info")
                    self.assertTrue(r["samples"])
            self.assertEqual(doc["summary"]["pass"] + doc["summary"]["fail"], 0, name)

    def test_validate_trains_on_the_emulated_gpu_and_is_never_ready(self):
        doc = self.result("validate")
        self.assertEqual((doc["scope"], doc["verdict"]), ("emulated", "UNKNOWN"))
        self.assertIn("emulated GPU", doc["verdict_line"])
        self.assertIn("emulated GPU", self.archived("validate", "validate-report.md"))
        trained = [r for r in doc["bench"]["results"] if r["bench"] == "train"]
        self.assertTrue(trained)
        self.assertTrue(all(r["params"]["backend"] == "cuda" for r in trained), trained)

    def test_neither_mode_takes_the_other_modes_bundle(self):
        gpu = subprocess.run([os.path.join(ROOT, "scripts/gpu-check.sh"), "--bundle", self.bundle,
                              "--out", os.path.join(self.tmp, "gpu-out")], env=self.env,
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(gpu.returncode, 2, gpu.stdout[-2000:])
        self.assertIn("for the emulated CUDA device, not a GPU", gpu.stderr)
        # A bundle whose plugins do not link the emulator (libraries that stand in for a GPU
        # build's, which this machine need not have).
        plain = os.path.join(self.tmp, "plain")
        shutil.copytree(self.bundle, plain)
        for plugin in ("libtrainrig_gpu_bench.so", "libtrainrig_train_cuda.so"):
            shutil.copyfile(os.path.join(plain, emulated.FAKE_NVML_LIB),
                            os.path.join(plain, plugin))
        emu = subprocess.run([os.path.join(ROOT, "scripts/gpu-check.sh"), "--emulated",
                              "--bundle", plain, "--out", os.path.join(self.tmp, "emu-out")],
                             env=self.env, capture_output=True, text=True, timeout=120)
        self.assertEqual(emu.returncode, 2, emu.stdout[-2000:])
        self.assertIn("not one for the emulated device", emu.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
