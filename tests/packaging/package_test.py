"""The Debian package, built by CPack from an existing build tree (the test build's binary, not a
new build), checked without installing it: its fields and Depends against what its ELF files
need, its contents, its maintainer scripts, then the binary, man pages, unit and examples as
dpkg-deb -x unpacks them.

Usage: package_test.py --build-dir DIR --source-dir DIR --version X.Y.Z [--plugins a.so,b.so]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ARGS = None
FIXTURE = "tests/fixtures/machines/cpu-only"
PLUGIN_NOT_FOUND = "has no GPU benchmarks"
# Layout warnings (a word longer than the line, such as a long list of check ids), not errors.
LAYOUT_WARNING = re.compile(r"can't break line|cannot adjust line")


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=kw.pop("timeout", 120),
                          **kw)


def env_without_gpu():
    """The unpacked binary finds its own plugins and no GPU driver: NVML names no library."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("TRAINRIG_GPU_BENCH_PLUGIN", "TRAINRIG_TRAIN_PLUGIN",
                        "TRAINRIG_FAKE_NVML", "TRAINRIG_ROOT")}
    env.update(TRAINRIG_NVML_LIBRARY="libnvidia-ml-absent.so.1", NO_COLOR="1")
    return env


def command_paths(binary):
    """Every page the man pages should have, read from the binary's help as a user would:
    [] for trainrig itself, [cmd] for each command, [cmd, sub] for each subcommand."""
    def subcommands(*path):
        text = run([binary, *path, "--help"], env=env_without_gpu()).stdout
        block = re.search(r"\nSubcommands:\n((?: [^\n]*\n)*)", text)
        names = re.findall(r"^  ([A-Za-z0-9][A-Za-z0-9_-]*)", block.group(1), re.M) if block else []
        return [n for n in names if n != "help"]

    paths = [[]]
    for command in subcommands():
        paths.append([command])
        paths += [[command, sub] for sub in subcommands(command)]
    return paths


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="trainrig-package-test-")
        # gzip instead of the package's xz: the same package, packed in 10 s instead of 25 s.
        p = run(["cpack", "-G", "DEB", "--config",
                 os.path.join(ARGS.build_dir, "CPackConfig.cmake"), "-B",
                 os.path.join(cls.tmp, "cpack"), "-D", "CPACK_DEBIAN_COMPRESSION_TYPE=gzip"],
                timeout=600)
        if p.returncode != 0:
            raise AssertionError(f"cpack failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        arch = run(["dpkg", "--print-architecture"]).stdout.strip()
        cls.deb = os.path.join(cls.tmp, "cpack", f"trainrig_{ARGS.version}_{arch}.deb")
        cls.arch = arch
        cls.root = os.path.join(cls.tmp, "root")
        cls.control = os.path.join(cls.tmp, "control")
        if os.path.exists(cls.deb):
            run(["dpkg-deb", "-x", cls.deb, cls.root], timeout=300).check_returncode()
            run(["dpkg-deb", "-e", cls.deb, cls.control]).check_returncode()
        cls.binary = os.path.join(cls.root, "usr/bin/trainrig")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        made = os.listdir(os.path.dirname(self.deb))
        self.assertTrue(os.path.exists(self.deb),
                        f"cpack made no {os.path.basename(self.deb)}: {made}")

    def field(self, name):
        return run(["dpkg-deb", "--field", self.deb, name]).stdout.strip()

    def contents(self):
        """{path: (mode, owner)} from dpkg-deb --contents, paths without the leading '.'."""
        out = {}
        for line in run(["dpkg-deb", "--contents", self.deb]).stdout.splitlines():
            cols = line.split(None, 5)
            out[cols[5].split(" -> ")[0][1:]] = (cols[0], cols[1])
        return out

    def elf_files(self):
        files = [self.binary]
        plugin_dir = os.path.join(self.root, "usr/lib/trainrig")
        if os.path.isdir(plugin_dir):
            files += [os.path.join(plugin_dir, f) for f in sorted(os.listdir(plugin_dir))]
        return files

    # -- the control fields --------------------------------------------------------------------
    def test_fields(self):
        self.assertEqual(self.field("Package"), "trainrig")
        self.assertEqual(self.field("Version"), ARGS.version)
        self.assertEqual(self.field("Architecture"), self.arch)
        self.assertRegex(self.field("Maintainer"), r"^[^<>]+ <[^<>@]+@[^<>]+>$")
        self.assertTrue(self.field("Description"))

    def test_depends_names_the_package_of_every_library_the_files_need(self):
        depends = {d.split()[0] for d in self.field("Depends").split(", ")}
        for must in ("libc6", "libstdc++6", "passwd"):
            self.assertIn(must, depends)
        for prefix in ("libhwloc", "libfmt", "libsqlite3", "libssl"):
            self.assertTrue(any(d.startswith(prefix) for d in depends), f"{prefix}* in {depends}")
        self.assertFalse([d for d in depends if re.search(r"cuda|nvidia|nccl|cublas", d)],
                         "the GPU libraries are loaded at run time, never a dependency")
        needed_by = {}
        for f in self.elf_files():
            dyn = run(["objdump", "-p", f]).stdout
            for soname in re.findall(r"^\s+NEEDED\s+(\S+)$", dyn, re.M):
                needed_by.setdefault(soname, []).append(os.path.basename(f))
        owners_of = {soname: set() for soname in needed_by}
        # One query for all (dpkg -S exits 1 when some library is in no package).
        for line in run(["dpkg", "-S", *needed_by]).stdout.splitlines():
            package, path = line.split(": ", 1)
            if os.path.basename(path) in owners_of:
                owners_of[os.path.basename(path)] |= {
                    p.strip().split(":")[0] for p in package.split(",")}
        justified = {"passwd"}
        for soname, users in sorted(needed_by.items()):
            owners = owners_of[soname]
            if not owners:
                # Not from a Debian package (cuBLASLt, NCCL from the CUDA toolkit): only a plugin
                # may need such a library, and it is not a dependency.
                self.assertNotIn("trainrig", users, f"trainrig needs {soname}, in no package")
                continue
            self.assertTrue(owners & depends, f"{soname} ({users}) is in {owners}, not Depends")
            justified |= owners
        self.assertEqual(depends - justified, set(), "Depends lists what no file needs")

    # -- contents ------------------------------------------------------------------------------
    def test_contents(self):
        contents = self.contents()
        for path, (mode, owner) in contents.items():
            self.assertEqual(owner, "root/root", path)
            self.assertTrue(path.startswith("/usr/"), f"{path}: outside /usr (no conffiles)")
        self.assertEqual(contents["/usr/bin/trainrig"][0], "-rwxr-xr-x")
        self.assertIn("/usr/lib/systemd/system/trainrig-watch.service", contents)
        for example in ("watch-alerts.toml", "tune-overrides.toml", "plan-catalog.toml",
                        "trainrig-rules.yml", "trainrig-npd.yaml", "Dockerfile.npd"):
            self.assertIn(f"/usr/share/doc/trainrig/examples/{example}", contents)
        # slurm.conf's HealthCheckProgram, as docs/fleet.md names it.
        self.assertEqual(contents["/usr/lib/trainrig/slurm-healthcheck"][0], "-rwxr-xr-x")
        for doc in ("README.md", "docs/checks.md", "docs/formats.md"):
            self.assertIn(f"/usr/share/doc/trainrig/{doc}", contents)
        plugins = sorted(p for p in contents if p.startswith("/usr/lib/trainrig/") and
                         not p.endswith("/") and not p.endswith("/slurm-healthcheck"))
        self.assertEqual(plugins, sorted(f"/usr/lib/trainrig/{p}" for p in ARGS.plugins))

    def test_files_are_stripped(self):
        for f in self.elf_files():
            self.assertNotIn(".debug_info", run(["objdump", "-h", f]).stdout, f)

    def test_maintainer_scripts(self):
        self.assertFalse(os.path.exists(os.path.join(self.control, "conffiles")))
        for script in ("postinst", "prerm", "postrm"):
            path = os.path.join(self.control, script)
            self.assertTrue(os.access(path, os.X_OK), script)
            self.assertEqual(run(["sh", "-n", path]).returncode, 0, script)
        with open(os.path.join(self.control, "postinst")) as f:
            self.assertIn("useradd --system", f.read())

    # -- the unpacked package ------------------------------------------------------------------
    def test_binary_runs(self):
        p = run([self.binary, "--version"], env=env_without_gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith(f"trainrig {ARGS.version} "), p.stdout)
        missing = [l for l in run(["ldd", self.binary]).stdout.splitlines() if "not found" in l]
        self.assertEqual(missing, [])

    def test_doctor_judges_a_machine_tree(self):
        p = run([self.binary, "doctor", "--root", os.path.join(ARGS.source_dir, FIXTURE),
                 "--json"], env=env_without_gpu())
        self.assertIn(p.returncode, (0, 1), p.stderr)
        self.assertEqual(json.loads(p.stdout)["schema"], "trainrig.doctor")

    def test_plugins_are_found_beside_the_binary(self):
        out = run([self.binary, "bench", "list"], env=env_without_gpu()).stdout
        if "libtrainrig_gpu_bench.so" in ARGS.plugins:
            self.assertNotIn(PLUGIN_NOT_FOUND, out)
        else:
            self.assertIn(PLUGIN_NOT_FOUND, out)

    def test_examples_are_read_by_the_commands_they_are_for(self):
        examples = os.path.join(self.root, "usr/share/doc/trainrig/examples")
        tree = os.path.join(ARGS.source_dir, FIXTURE)
        for argv in (["plan", "--list", "--catalog", f"{examples}/plan-catalog.toml"],
                     ["tune", "show", "--root", tree, "--overrides",
                      f"{examples}/tune-overrides.toml"],
                     ["watch", "--once", "--root", tree, "--rules",
                      f"{examples}/watch-alerts.toml"]):
            p = run([self.binary, *argv], env=env_without_gpu())
            self.assertIn(p.returncode, (0, 1), f"{argv}: {p.stderr}")

    def test_unit_runs_the_packaged_binary(self):
        unit = os.path.join(self.root, "usr/lib/systemd/system/trainrig-watch.service")
        with open(unit) as f:
            text = f.read()
        self.assertRegex(text, r"\nExecStart=/usr/bin/trainrig watch ")
        self.assertRegex(text, r"\nUser=trainrig\n")
        if not shutil.which("systemd-analyze"):
            return
        # verify needs ExecStart's program to exist: the unpacked one.
        copy = os.path.join(self.tmp, "trainrig-watch.service")
        with open(copy, "w") as f:
            f.write(text.replace("ExecStart=/usr/bin/trainrig", f"ExecStart={self.binary}"))
        p = run(["systemd-analyze", "verify", "--man=no", copy])
        self.assertEqual((p.returncode, p.stderr.strip()), (0, ""))

    def test_man_pages_one_per_command_from_the_binary(self):
        man1 = os.path.join(self.root, "usr/share/man/man1")
        self.assertTrue(os.path.isdir(man1), "no man pages: install help2man "
                        "(scripts/install-deps.sh) and build again")
        pages = sorted(os.listdir(man1))
        paths = command_paths(self.binary)
        self.assertEqual(pages, sorted("-".join(["trainrig", *p]) + ".1.gz" for p in paths))
        # man's seccomp sandbox doubles the time of 30 renders and guards nothing here.
        env = dict(os.environ, MANWIDTH="80", MAN_DISABLE_SECCOMP="1")
        for path in paths:
            page = "-".join(["trainrig", *path])
            p = run(["man", "--warnings", "-l", os.path.join(man1, page + ".1.gz")], env=env)
            self.assertEqual(p.returncode, 0, f"{page}: {p.stderr}")
            warnings = [l for l in p.stderr.splitlines() if not LAYOUT_WARNING.search(l)]
            self.assertEqual(warnings, [], page)
            text = re.sub(r".\x08", "", p.stdout)
            self.assertIn(f"{page.upper()}(1)", text)
            for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO"):
                self.assertIn(f"\n{section}\n", text, page)
            self.assertIn(" ".join(["trainrig", *path]), text)

    def test_lintian_when_installed(self):
        if not shutil.which("lintian"):
            self.skipTest("lintian is not installed")
        # No copyright or changelog file is shipped: the project states no licence yet.
        p = run(["lintian", "--fail-on", "error", "--suppress-tags",
                 "no-copyright-file,debian-changelog-file-missing", self.deb], timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--plugins", default="")
    ARGS, rest = parser.parse_known_args()
    ARGS.plugins = [p for p in ARGS.plugins.split(",") if p]
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
