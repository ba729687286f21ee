"""Where a gpu-check run finds what it runs: the carried bundle (scripts/gpu-bundle.sh), the
library path its binaries need there, and the step in flight (its folder and time)."""
import glob
import json
import os
import subprocess

import emulated as emulated_device

PLUGINS = ("libtrainrig_gpu_bench.so", "libtrainrig_train_cuda.so")
TESTS = ("gpu_train_tests", "gpu_bench_tests", "gpu_tests", "gpu_data_tests")


def library_path(bundle, inherited):
    """The bundle's own libraries first, then the toolkit's, then the CUDA libraries PyTorch's
    wheels carry (cuBLASLt and NCCL, when the machine has no toolkit copy of them)."""
    dirs = [os.path.join(bundle, "lib")]
    if inherited:
        dirs.append(inherited)
    dirs.append("/usr/local/cuda/lib64")
    try:
        out = subprocess.run(["python3", "-c", "import nvidia; print(list(nvidia.__path__)[0])"],
                             capture_output=True, text=True, timeout=20)
        root = out.stdout.strip()
        if root:
            dirs += sorted(glob.glob(os.path.join(root, "*", "lib")))
    except (OSError, subprocess.SubprocessError):
        pass
    return ":".join(dirs)


class Context:
    def __init__(self, root, bundle, dry=None, emulated=False):
        self.root, self.bundle, self.dry = root, os.path.abspath(bundle), dry
        self.bin = os.path.join(self.bundle, "trainrig")
        # Python and nvidia-smi run with the machine's own libraries; trainrig and the tests
        # with the bundle's first.
        self.system_env = dict(os.environ)
        self.env = dict(os.environ)
        if dry is None:
            self.env["LD_LIBRARY_PATH"] = library_path(self.bundle,
                                                       os.environ.get("LD_LIBRARY_PATH"))
        # On the emulated device (emulated.py) the same GPUs for the emulator and the fake NVML.
        self.emulated = emulated
        self.emulated_env = (emulated_device.environment(self.bundle, os.environ)
                             if emulated else {})
        self.env.update(self.emulated_env)
        self.run = self.step = self.folder = None

    def begin(self, run, step, folder):
        self.run, self.step, self.folder = run, step, folder

    def path(self, name):
        return os.path.join(self.folder, name)

    def bundled(self, name):
        return os.path.join(self.bundle, name)

    def sh(self, argv, log="step.log", env=None):
        """Runs argv for the step in flight; its exit code (StepTimeout when time runs out)."""
        return self.run.run_command(argv, self.path(log), env=env or self.env, cwd=self.root)

    def read_json(self, name):
        return self.read_json_at(self.path(name))

    @staticmethod
    def read_json_at(path):
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, TypeError, ValueError):
            return None

    def read_text(self, name):
        try:
            with open(self.path(name), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def write_json(self, name, doc):
        with open(self.path(name), "w") as f:
            json.dump(doc, f, indent=1)

    def earlier(self, step_name, file_name):
        """A file an earlier step left in its folder."""
        for d in sorted(glob.glob(os.path.join(self.run.work, f"*-{step_name}"))):
            p = os.path.join(d, file_name)
            if os.path.exists(p):
                return p
        return None
