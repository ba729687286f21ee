"""tests/scripts/slurm_cluster.py against the real Slurm it starts: two nodes on this host come up
idle, srun runs as root on one and on both, a node drains with a reason kept verbatim and
resumes, teardown leaves no process behind even with jobs running or after a failure inside
the `with`. Then what `trainrig slurm healthcheck` relies on: a HealthCheckProgram runs at
slurmd start and every HealthCheckInterval (2 s here: with 1 a resumed node is never pinged
again), its exit status alone changes nothing, its own scontrol drain does; a failing Prolog
drains the node as "Prolog error" unless the prolog drained it first with its own reason.

Needs root and the packages slurmctld, slurmd, slurm-client and munge (scripts/install-deps.sh);
without them it fails and says so."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from slurm_cluster import SlurmCluster, SlurmError, missing_requirements  # noqa: E402


def leftovers(directory):
    """Processes whose command line, cwd or open files mention directory (a `ps` that also
    looks at /proc/PID/fd), other than this one."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            paths = [os.readlink(f"/proc/{entry}/cwd")]
            for fd in os.listdir(f"/proc/{entry}/fd"):
                try:
                    paths.append(os.readlink(f"/proc/{entry}/fd/{fd}"))
                except OSError:
                    pass
        except OSError:
            continue
        if directory in cmd or any(p.startswith(directory) for p in paths):
            found.append(f"{entry} {cmd}")
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    found += [line for line in ps.splitlines() if directory in line and "ps -eo" not in line
              and line.split()[0] != str(os.getpid()) and line not in found]
    return found


def scratch(test):
    """A temporary directory removed when the test (or class) is done."""
    d = tempfile.mkdtemp(prefix="slurm-test-")
    if isinstance(test, type):
        test.addClassCleanup(shutil.rmtree, d, True)
    else:
        test.addCleanup(shutil.rmtree, d, True)
    return d


def write_script(path, text):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + text)
    os.chmod(path, 0o755)
    return path


class TwoNodes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch(cls)
        cls.cluster = SlurmCluster(cls.tmp, nodes=["n1", "n2"])
        cls.cluster.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.__exit__(None, None, None)
        assert not leftovers(str(cls.cluster.dir)), leftovers(str(cls.cluster.dir))

    def test_both_nodes_come_up_idle_quickly(self):
        self.assertEqual(self.cluster.node_states(), {"n1": "idle", "n2": "idle"})
        self.assertLess(self.cluster.startup_seconds, 10)
        self.assertEqual(self.cluster.node_state("n1"), ("IDLE", None))

    def test_srun_runs_as_root_on_one_node_and_on_both(self):
        r = self.cluster.srun(["hostname"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), self.cluster.hostname)
        r = self.cluster.srun("-N2 -n2 -l printenv SLURMD_NODENAME")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(r.stdout.split()), ["0:", "1:", "n1", "n2"])

    def test_drain_keeps_the_reason_verbatim_and_resume_clears_it(self):
        c = self.cluster
        reason = "trainrig: gpu 3 xid=79 (fallen off the bus); nvlink [2] down; " + "x" * 40
        c.scontrol("update", "nodename=n2", "state=drain", f"reason={reason}")
        self.assertEqual(c.node_state("n2"), ("IDLE+DRAIN", reason))
        self.assertEqual(c.node_states()["n2"], "drained")
        # sinfo -R shows the reason cut to 20 characters; %E without a width shows all of it.
        short = c.sinfo("-R", "-h").stdout
        self.assertIn(reason[:20], short)
        self.assertNotIn(reason[:21], short)
        self.assertEqual(c.sinfo("-R", "-h", "-o", "%E|%N").stdout.strip(), f"{reason}|n2")
        # No job lands on a drained node.
        r = c.srun("-N1 printenv SLURMD_NODENAME")
        self.assertEqual(r.stdout.strip(), "n1")

        c.scontrol("update", "nodename=n2", "state=resume")
        state, why = c.wait_for(lambda: c.node_state("n2")[0] == "IDLE" and c.node_state("n2"),
                                10, "n2 idle again")
        self.assertIsNone(why)
        self.assertEqual(c.sinfo("-R", "-h").stdout.strip(), "")

    def test_drain_without_a_reason_is_refused(self):
        r = self.cluster.scontrol("update", "nodename=n1", "state=drain", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("must specify a reason", r.stderr)
        with self.assertRaises(SlurmError):
            self.cluster.scontrol("update", "nodename=n1", "state=drain")
        self.assertEqual(self.cluster.node_state("n1")[0], "IDLE")

    def test_parse_node_line(self):
        line = ("NodeName=n1 Arch=x86_64 OS=Linux 6.1 #1 SMP  State=MIXED+DRAIN Weight=1 "
                "ExtSensorsTemp=n/s Reason=a=b [c] d [root@2026-01-02T03:04:05] Comment=x y")
        self.assertEqual(SlurmCluster.parse_node_line(line), ("MIXED+DRAIN", "a=b [c] d"))
        self.assertEqual(SlurmCluster.parse_node_line("NodeName=n1 State=IDLE Weight=1"),
                         ("IDLE", None))


class Teardown(unittest.TestCase):
    def test_no_process_is_left_with_jobs_running(self):
        tmp = scratch(self)
        c = SlurmCluster(tmp, nodes=["n1", "n2"])
        with c:
            srun = subprocess.Popen(["srun", "-N2", "sleep", "300"], env=c.env(),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            c.wait_for(lambda: c.node_states() == {"n1": "mixed", "n2": "mixed"}, 15,
                       "the job on both nodes")

            def comms():
                names = []
                for pid in c.processes():
                    with open(f"/proc/{pid}/comm") as f:
                        names.append(f.read().strip())
                return names
            c.wait_for(lambda: comms().count("sleep") == 2, 15, "a task on each node")
            self.assertEqual(comms().count("slurmstepd"), 2)
            t = time.monotonic()
        self.assertLess(time.monotonic() - t, 15)
        self.assertIsNotNone(srun.wait(5))
        self.assertEqual(c.processes(), [])
        self.assertEqual(leftovers(str(c.dir)), [])

    def test_a_failure_inside_the_with_still_tears_down(self):
        tmp = scratch(self)
        c = SlurmCluster(tmp, nodes=["n1"])
        with self.assertRaises(ZeroDivisionError):
            with c:
                1 / 0
        self.assertEqual(leftovers(str(c.dir)), [])

    def test_a_daemon_that_cannot_start_is_reported_with_its_log(self):
        tmp = scratch(self)
        c = SlurmCluster(tmp, nodes=["n1"], extra_conf=["SelectType=select/none-such"])
        with self.assertRaises(SlurmError) as e:
            with c:
                pass
        self.assertIn("slurmctld", str(e.exception))
        self.assertIn("select/none-such", str(e.exception))
        self.assertEqual(leftovers(str(c.dir)), [])


class HealthCheckAndProlog(unittest.TestCase):
    """A health check and a prolog that do what a per-node mode file says; each test has a
    node of its own, so none has to be resumed."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch(cls)
        t = cls.tmp
        conf = os.path.join(t, "slurm", "slurm.conf")
        # The health check gets no SLURM_CONF and no PATH from slurmd; the prolog gets
        # SLURM_CONF but no PATH.
        drain = (f'SLURM_CONF={conf} /usr/bin/scontrol update nodename=$SLURMD_NODENAME '
                 f'state=drain reason="$1"')
        hc = write_script(os.path.join(t, "hc.sh"), f"""
mode=$(cat {t}/hc.$SLURMD_NODENAME 2>/dev/null)
echo "$SLURMD_NODENAME:${{mode:-ok}}" >> {t}/hc.calls
case "$mode" in
  fail) exit 1;;
  drain) set -- "trainrig healthcheck: test drain"; {drain}; exit 0;;
esac
exit 0
""")
        prolog = write_script(os.path.join(t, "prolog.sh"), f"""
case "$(cat {t}/prolog.$SLURMD_NODENAME 2>/dev/null)" in
  fail) exit 1;;
  drainfail) set -- "trainrig prolog: own reason"; {drain}; exit 1;;
esac
exit 0
""")
        cls.cluster = SlurmCluster(t, nodes=["n1", "n2", "n3", "n4"], health_check_program=hc,
                                   health_check_interval=2, prolog=prolog)
        cls.cluster.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.__exit__(None, None, None)
        assert not leftovers(str(cls.cluster.dir)), leftovers(str(cls.cluster.dir))

    def calls(self, node, mode=None):
        try:
            with open(os.path.join(self.tmp, "hc.calls")) as f:
                return [c for c in f.read().split() if c.split(":")[0] == node
                        and (mode is None or c.split(":")[1] == mode)]
        except FileNotFoundError:
            return []

    def mode(self, kind, node, mode):
        with open(os.path.join(self.tmp, f"{kind}.{node}"), "w") as f:
            f.write(mode)

    def slurmd_log(self, node):
        with open(os.path.join(self.cluster.log_dir, f"slurmd-{node}.log")) as f:
            return f.read()

    def test_health_check_runs_at_start_and_every_interval(self):
        # slurmd ran it once before registering, so the node was idle after at least one run.
        n = len(self.calls("n1"))
        self.assertGreaterEqual(n, 1)
        self.cluster.wait_for(lambda: len(self.calls("n1")) >= n + 2, 10, "two more checks")

    def test_a_failing_health_check_changes_nothing(self):
        self.mode("hc", "n1", "fail")
        try:
            self.cluster.wait_for(lambda: "health_check failed: rc:1" in self.slurmd_log("n1"),
                                  10, "a failed health check")
            self.assertEqual(self.cluster.node_state("n1"), ("IDLE", None))
            self.assertEqual(self.cluster.node_states()["n1"], "idle")
        finally:
            self.mode("hc", "n1", "ok")

    def test_a_health_check_drains_with_its_own_scontrol(self):
        c = self.cluster
        self.mode("hc", "n2", "drain")
        c.wait_for(lambda: c.node_state("n2")[0] == "IDLE+DRAIN", 10, "n2 drained")
        self.assertEqual(c.node_state("n2"), ("IDLE+DRAIN", "trainrig healthcheck: test drain"))

    def test_a_failing_prolog_drains_as_prolog_error(self):
        c = self.cluster
        self.mode("prolog", "n3", "fail")
        r = c.srun("-w n3 hostname")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Job prolog failed", r.stderr)
        c.wait_for(lambda: c.node_state("n3")[0] == "IDLE+DRAIN", 10, "n3 drained")
        self.assertEqual(c.node_state("n3"), ("IDLE+DRAIN", "Prolog error"))

    def test_a_prolog_that_drains_itself_keeps_its_reason(self):
        c = self.cluster
        self.mode("prolog", "n4", "drainfail")
        r = c.srun("-w n4 hostname")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Job prolog failed", r.stderr)
        c.wait_for(lambda: c.node_state("n4")[0] == "IDLE+DRAIN", 10, "n4 drained")
        # slurmctld logs nothing when the node it would drain is draining already: give the
        # prolog's failure time to arrive, then the prolog's reason must still be there.
        time.sleep(1.5)
        self.assertEqual(c.node_state("n4"), ("IDLE+DRAIN", "trainrig prolog: own reason"))


if __name__ == "__main__":
    problems = missing_requirements()
    if problems:
        print("slurm_cluster_test: cannot start a test Slurm cluster: " + "; ".join(problems),
              file=sys.stderr)
        sys.exit(1)
    unittest.main()
