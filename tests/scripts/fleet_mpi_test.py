"""`trainrig validate --fleet` under a real mpirun (Open MPI, oversubscribed on this machine).
Four ranks each validate a different machine tree through the fake NVML: two healthy, one with an
older driver, one with a GPU whose link trained at x8. Rank 0 gathers the reports over MPI and its
fleet verdict names exactly the two bad nodes, and why; every rank exits with the fleet's code.
Then the gather itself (mpi_gather_probe): megabytes per rank arrive whole, and a rank that never
reports is UNKNOWN without holding the others.

Usage: fleet_mpi_test.py TRAINRIG_BINARY GATHER_PROBE SOURCE_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

BINARY, PROBE, SOURCE = sys.argv[1], sys.argv[2], sys.argv[3]
MPIRUN = shutil.which("mpirun")
TREE = os.path.join(SOURCE, "tests/fixtures/machines/epyc-4xa100-healthy")
NVML = os.path.join(SOURCE, "tests/fixtures/nvml/epyc-4xa100-healthy.json")
OLD_DRIVER = "535.104.05"


def mpi_env():
    env = dict(os.environ)
    # Open MPI refuses to start as root without these (CI runs as root).
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    return env


def mpirun(n, *argv, timeout=240):
    return subprocess.run([MPIRUN, "-np", str(n), "--oversubscribe", *argv], env=mpi_env(),
                          capture_output=True, text=True, timeout=timeout)


def make_node(base, name, driver=None, x8=False):
    """A copy of the healthy tree with its own host name, and its own NVML answers."""
    root = os.path.join(base, name)
    shutil.copytree(TREE, root, symlinks=True)
    with open(os.path.join(root, "proc/sys/kernel/hostname"), "w") as f:
        f.write(name + "\n")
    with open(NVML) as f:
        model = json.load(f)
    if driver:
        model["driver_version"] = driver
        version = os.path.join(root, "proc/driver/nvidia/version")
        with open(version) as f:
            text = f.read()
        with open(version, "w") as f:
            f.write(text.replace(model_driver(), driver))
    if x8:
        model["gpus"][0]["pcie"]["width"] = 8
    nvml = os.path.join(base, name + ".nvml.json")
    with open(nvml, "w") as f:
        json.dump(model, f)
    return root, nvml


def model_driver():
    with open(NVML) as f:
        return json.load(f)["driver_version"]


def rank_wrapper(base, nodes, *options):
    """`validate --fleet` in which each rank picks its own tree: what a real fleet gets from its
    own disk."""
    wrapper = os.path.join(base, "rank.sh")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nset -e\nrank=$OMPI_COMM_WORLD_RANK\n")
        for i, (root, nvml) in enumerate(nodes):
            f.write(f'[ "$rank" = {i} ] && export TRAINRIG_FAKE_NVML={nvml} ROOT={root}\n')
        f.write(f'exec {BINARY} validate --fleet {" ".join(options)} --root "$ROOT" "$@"\n')
    os.chmod(wrapper, 0o755)
    return wrapper


@unittest.skipIf(MPIRUN is None, "mpirun is missing: run scripts/install-deps.sh (openmpi-bin)")
class FleetUnderMpirun(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="trainrig-fleet-mpi-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_rank0_names_exactly_the_two_bad_nodes(self):
        nodes = [make_node(self.dir, "node01"), make_node(self.dir, "node02"),
                 make_node(self.dir, "node03", driver=OLD_DRIVER),
                 make_node(self.dir, "node04", x8=True)]
        wrapper = rank_wrapper(self.dir, nodes, "--no-report")
        report = os.path.join(self.dir, "fleet")
        r = mpirun(4, wrapper, "--json", "--fleet-report", report)
        self.assertEqual(r.returncode, 1, r.stdout[-3000:] + r.stderr[-3000:])
        doc = json.loads(r.stdout)  # only rank 0 prints
        self.assertEqual(doc["schema"], "trainrig.fleet")
        self.assertEqual(doc["command"], "validate --fleet")
        states = {n["name"]: n["state"] for n in doc["nodes"]}
        self.assertEqual(states, {"node01": "READY", "node02": "READY", "node03": "DRIFTED",
                                  "node04": "DRAIN"}, json.dumps(doc["nodes"], indent=1))
        reasons = {n["name"]: " ".join(n["reasons"]) for n in doc["nodes"]}
        self.assertIn("drift.driver", reasons["node03"])
        self.assertIn("gpu.pcie-link", reasons["node04"])
        # The report holds every node's own report, and judges the same again offline.
        for name in ("fleet-report.json", "fleet-report.md", "fleet-report.html", "SHA256SUMS"):
            self.assertTrue(os.path.isfile(os.path.join(report, name)), name)
        again = subprocess.run([BINARY, "fleet", "judge", "--json", os.path.join(report, "nodes")],
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(again.returncode, 1, again.stderr)
        self.assertEqual({n["name"]: n["state"] for n in json.loads(again.stdout)["nodes"]},
                         states)

    def test_a_node_that_cannot_write_its_report_is_judged_from_what_it_sent(self):
        nodes = [make_node(self.dir, "node01"), make_node(self.dir, "node02")]
        wrapper = rank_wrapper(self.dir, nodes)
        # node02's report path is taken (a file is there): its own write fails.
        reports = os.path.join(self.dir, "reports")
        os.mkdir(reports)
        with open(os.path.join(reports, "node02-1"), "w") as f:
            f.write("in the way\n")
        fleet = os.path.join(self.dir, "fleet-{host}")
        r = mpirun(2, wrapper, "--json", "--report", reports + "/{host}-{rank}",
                   "--fleet-report", fleet)
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
        doc = json.loads(r.stdout)
        states = {n["name"]: n["state"] for n in doc["nodes"]}
        self.assertEqual(states, {"node01": "READY", "node02": "READY"})
        warnings = {n["name"]: n["warnings"] for n in doc["nodes"]}
        self.assertEqual(warnings["node01"], [])
        self.assertEqual(len(warnings["node02"]), 1, warnings)
        self.assertIn("node02-1", warnings["node02"][0])
        self.assertTrue(os.path.isdir(os.path.join(reports, "node01-0")))
        self.assertTrue(os.path.isfile(os.path.join(self.dir, "fleet-node01",
                                                    "fleet-report.json")))

    def test_srun_tasks_without_mpi_are_refused(self):
        env = dict(os.environ, SLURM_NTASKS="4")
        r = subprocess.run([BINARY, "validate", "--fleet", "--no-report", "--root", TREE],
                           env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--mpi=pmix", r.stderr)


@unittest.skipIf(MPIRUN is None, "mpirun is missing: run scripts/install-deps.sh (openmpi-bin)")
class GatherUnderMpirun(unittest.TestCase):
    def test_megabytes_arrive_whole(self):
        r = mpirun(3, PROBE, "0", timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split("\n")[:3], ["0: 1048576 bytes ok", "1: 2097152 bytes ok",
                                                    "2: 3145728 bytes ok"])

    def test_a_rank_that_never_reports_does_not_hold_the_others(self):
        started = time.monotonic()
        r = mpirun(3, PROBE, "30", timeout=60)
        elapsed = time.monotonic() - started
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("2: missing", r.stdout)
        self.assertLess(elapsed, 20, "rank 0 waited for the silent rank")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
