"""`trainrig slurm healthcheck` against a real Slurm (slurm_cluster.py: munged, slurmctld and one
slurmd per node name on this host). It drains a node that fails, with a reason whose check id
comes first; leaves an operator's reason alone; resumes only what it drained; refuses to drain
past the circuit breaker; runs as slurmd's own HealthCheckProgram and as a Prolog; and `srun`
runs `validate --fleet` across the nodes.

Usage: slurm_healthcheck_test.py TRAINRIG_BINARY SOURCE_DIR"""
import json
import os
import shutil
import sys
import tempfile
import time
import unittest
import subprocess

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from slurm_cluster import SlurmCluster, missing_requirements  # noqa: E402

BINARY, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
MACHINES = os.path.join(SOURCE, "tests/fixtures/machines")
HEALTHY = os.path.join(MACHINES, "epyc-4xa100-healthy")
BROKEN = os.path.join(MACHINES, "article-box")  # two GPUs off the bus, one at x8, Xid 79
WRAPPER = os.path.join(SOURCE, "packaging/slurm/slurm-healthcheck")


def healthcheck(cluster, node, root, *extra):
    """One run, as an operator types it; --report to an empty folder (a path given must exist)."""
    reports = os.path.join(cluster.dir, "no-reports")
    os.makedirs(reports, exist_ok=True)
    return subprocess.run(
        [BINARY, "slurm", "healthcheck", "--node", node, "--root", root,
         "--report", reports, *extra],
        env=cluster.env(), capture_output=True, text=True, timeout=60)


def write_script(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


class Cluster(unittest.TestCase):
    def setUp(self):
        problems = missing_requirements()
        if problems:
            self.fail("; ".join(problems))  # a stated failure, never a silent skip
        self.tmp = tempfile.mkdtemp(prefix="trh-", dir="/tmp")
        # The reports folder the wrapper and the prolog name: empty, so no report is read.
        os.mkdir(os.path.join(self.tmp, "none"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


class DrainAndResume(Cluster):
    def test_drain_leave_resume_and_breaker(self):
        with SlurmCluster(self.tmp, nodes=["n1", "n2", "n3", "n4"]) as c:
            # A failing node is drained, its check id first in the reason.
            r = healthcheck(c, "n1", BROKEN)
            self.assertEqual(r.returncode, 1, r.stderr + r.stdout)
            state, reason = c.node_state("n1")
            self.assertIn("DRAIN", state)
            self.assertTrue(reason.startswith("trainrig:pci.gpu-visible "), reason)
            self.assertLessEqual(len(reason), 80)
            self.assertTrue(c.sinfo("-R", "-h").stdout.split()[0].startswith("trainrig:pci"))
            # Run again: kept as it is, not re-drained.
            r = healthcheck(c, "n1", BROKEN)
            self.assertIn("stays drained", r.stdout)

            # An operator's reason is never replaced, nor resumed when healthy.
            c.scontrol("update", "nodename=n2", "state=drain", "reason=ops: replacing PSU")
            r = healthcheck(c, "n2", BROKEN)
            self.assertEqual(r.returncode, 1)
            self.assertIn("someone else's", r.stdout)
            self.assertEqual(c.node_state("n2")[1], "ops: replacing PSU")
            r = healthcheck(c, "n2", HEALTHY)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(c.node_state("n2"), ("IDLE+DRAIN", "ops: replacing PSU"))

            # Circuit breaker: with n1 and n3 drained by trainrig (2 of 4), n4 is not drained.
            self.assertEqual(healthcheck(c, "n3", BROKEN).returncode, 1)
            self.assertIn("DRAIN", c.node_state("n3")[0])
            r = healthcheck(c, "n4", BROKEN)
            self.assertEqual(r.returncode, 1)
            self.assertIn("already drained 2 of the 4 nodes", r.stdout)
            self.assertEqual(c.node_state("n4")[1], None)

            # Dry run: the command is printed, nothing changes.
            r = healthcheck(c, "n3", HEALTHY, "--dry-run")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("would run: ", r.stdout)
            self.assertIn("state=resume", r.stdout)
            self.assertIn("would resume it", r.stdout)
            self.assertNotIn("resuming", r.stdout)
            self.assertIn("DRAIN", c.node_state("n3")[0])

            # Healthy again: what trainrig drained is resumed.
            r = healthcheck(c, "n1", HEALTHY, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.loads(r.stdout)
            self.assertEqual(doc["schema"], "trainrig.slurm.healthcheck")
            self.assertEqual(doc["action"]["kind"], "resume")
            c.wait_for(lambda: c.node_state("n1") == ("IDLE", None), timeout=10,
                       what="n1 resumed")

    def test_unknown_node_and_unreachable_slurmctld_change_nothing(self):
        with SlurmCluster(self.tmp, nodes=["n1"]) as c:
            r = healthcheck(c, "nosuch", BROKEN)
            self.assertEqual(r.returncode, 2)
            self.assertIn("not in `scontrol show node`", r.stderr)
            env = c.env({"SLURM_CONF": os.path.join(self.tmp, "missing.conf")})
            r = subprocess.run([BINARY, "slurm", "healthcheck", "--node", "n1", "--root", BROKEN],
                               env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2)
            self.assertIn("scontrol", r.stderr)
            self.assertEqual(c.node_state("n1"), ("IDLE", None))


class AsSlurmRunsIt(Cluster):
    def test_health_check_program_drains_then_resumes(self):
        # slurmd runs it with no PATH and no SLURM_CONF, and no arguments: the wrapper gives them.
        # The machine it judges is named in a file, so the test can break and mend the node.
        # slurmd runs the check once before it registers: healthy, or the node never comes up.
        root_file = os.path.join(self.tmp, "root")
        with open(root_file, "w") as f:
            f.write(HEALTHY)
        # The packaged wrapper, with its settings where /etc/default/trainrig would be.
        defaults = os.path.join(self.tmp, "defaults")
        with open(defaults, "w") as f:
            f.write(f'TRAINRIG={BINARY}\nSLURM_CONF={self.tmp}/slurm/slurm.conf\n'
                    f'TRAINRIG_REPORTS={self.tmp}/none\n'
                    f'TRAINRIG_HEALTHCHECK_ARGS="--root $(cat {root_file})"\n')
        program = write_script(
            os.path.join(self.tmp, "healthcheck"),
            f'TRAINRIG_DEFAULTS={defaults} exec {WRAPPER}\n')
        with SlurmCluster(self.tmp, nodes=["n1"], health_check_program=program,
                          health_check_interval=2, start_timeout=60) as c:
            with open(root_file, "w") as f:
                f.write(BROKEN)
            c.wait_for(lambda: (c.node_state("n1")[1] or "").startswith("trainrig:"),
                       timeout=30, what="slurmd's health check draining n1")
            with open(root_file, "w") as f:
                f.write(HEALTHY)
            c.wait_for(lambda: c.node_state("n1")[1] is None, timeout=30,
                       what="the health check resuming n1")

    def test_prolog_keeps_a_job_off_a_bad_node_with_trainrigs_reason(self):
        prolog = write_script(
            os.path.join(self.tmp, "prolog"),
            f'PATH=/usr/sbin:/usr/bin:/sbin:/bin; export PATH\n'
            f'exec {BINARY} slurm healthcheck --root {BROKEN} --report {self.tmp}/none\n')
        with SlurmCluster(self.tmp, nodes=["n1"], prolog=prolog) as c:
            r = c.srun(["-N1", "true"], timeout=60)
            self.assertNotEqual(r.returncode, 0, "the job ran on a failing node")
            state, reason = c.node_state("n1")
            self.assertIn("DRAIN", state)
            # Slurm's own "Prolog error" does not replace the reason trainrig wrote first.
            self.assertTrue(reason.startswith("trainrig:pci.gpu-visible"), reason)


class SrunFleet(Cluster):
    def test_srun_runs_validate_fleet(self):
        trees = os.path.join(self.tmp, "trees")
        roots = []
        for i, name in enumerate(["gpu01", "gpu02"]):
            root = os.path.join(trees, name)
            shutil.copytree(HEALTHY, root, symlinks=True)
            with open(os.path.join(root, "proc/sys/kernel/hostname"), "w") as f:
                f.write(name + "\n")
            roots.append(root)
        rank = write_script(
            os.path.join(self.tmp, "rank.sh"),
            f'exec {BINARY} validate --fleet --no-report --json '
            f'--root {trees}/gpu0$((SLURM_PROCID + 1)) --fleet-report {self.tmp}/fleet\n')
        with SlurmCluster(self.tmp, nodes=["n1", "n2"]) as c:
            r = c.srun(["--mpi=pmix", "-N2", "-n2", rank], timeout=120,
                       env={"OMPI_MCA_btl": "self,tcp"})
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            doc = json.loads(r.stdout)
            self.assertEqual(sorted(n["name"] for n in doc["nodes"]), ["gpu01", "gpu02"])
            self.assertTrue(all(n["state"] == "READY" for n in doc["nodes"]))
            self.assertTrue(os.path.isfile(os.path.join(self.tmp, "fleet", "fleet-report.html")))

            # docs/fleet.md's first example: one command line on every node, one shared folder;
            # {host} is expanded by each node, so each writes its own directory.
            shared = os.path.join(self.tmp, "shared")
            os.mkdir(shared)
            each = write_script(
                os.path.join(self.tmp, "each.sh"),
                f'exec {BINARY} validate --root {trees}/gpu0$((SLURM_PROCID + 1)) "$@"\n')
            r = c.srun(["-N2", "--ntasks-per-node=1", each, "--report", shared + "/{host}"],
                       timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            self.assertEqual(sorted(os.listdir(shared)), ["gpu01", "gpu02"])
            judged = subprocess.run([BINARY, "fleet", "judge", "--json", shared],
                                    capture_output=True, text=True, timeout=60)
            self.assertEqual(judged.returncode, 0, judged.stderr)
            self.assertEqual(sorted(n["name"] for n in json.loads(judged.stdout)["nodes"]),
                             ["gpu01", "gpu02"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
