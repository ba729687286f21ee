"""A private, single-host Slurm cluster for one test: munged, slurmctld and one slurmd per node
name, all under a temporary directory, torn down completely on exit.

    with SlurmCluster(tmp, nodes=["n1", "n2"], health_check_program=script,
                      health_check_interval=2) as cluster:
        cluster.scontrol("update", "nodename=n1", "state=drain", "reason=bad gpu")
        assert cluster.node_state("n1") == ("IDLE+DRAIN", "bad gpu")
        result = cluster.srun(["-N2", "hostname"])

Python's standard library only. Needs root and Debian 12's packages slurmctld, slurmd,
slurm-client and munge (Slurm 22.05.8, munge 0.5.15), which scripts/install-deps.sh installs.
Nothing outside the temporary directory is written or read: munged gets its own key, socket,
pid and seed files (a system munged, if any, is neither used nor disturbed), Slurm is pointed
at that socket with AuthInfo=socket=..., and the clients find the cluster through SLURM_CONF
(env()). Ports are picked free at start-up. Start-up, until sinfo shows every node idle, takes
0.4 to 0.6 s for one to four nodes on two cores; a HealthCheckProgram adds its own run time,
since slurmd runs it once before it registers.

How Slurm 22.05.8 as packaged in Debian 12 behaves here (measured on this setup, root, no
systemd, no cgroups):

(0) Several node names on one host work: each node is its own `slurmd -N NAME` with its own
    Port, NodeHostname=<this host>, NodeAddr=127.0.0.1, and the per-node paths
    SlurmdSpoolDir/SlurmdPidFile/SlurmdLogFile/TmpFS use %n. `srun -N2` spreads over them.
    TmpFS must be per node: the pmix plugin creates TmpFS/spmix_appdir_<uid>_<job>.<step>,
    and two slurmd sharing /tmp collide on it (the second node's step launch then fails).

(1) srun works as root (SlurmUser=root): `srun hostname`, `srun -N2 -n2 ...`, `srun -w n2`.

(2) `srun --mpi=list` prints the plugin types pmix, none, cray_shasta, pmi2 and
    "specific pmix plugin versions available: pmix_v4". An Open MPI 4.1.4 program (mpicc from
    libopenmpi-dev) runs under `srun --mpi=pmix -n 2` (also -N2 across two node names, given the
    per-node TmpFS above); MPI_Init, the ranks and an MPI_Allreduce are right. Under
    `--mpi=pmi2` and `--mpi=none` MPI_Init aborts: Debian's Open MPI is built without Slurm's
    PMI-1/PMI-2 support ("OMPI was not built with SLURM's PMI support"). A task under
    --mpi=pmix sees PMIX_RANK, PMIX_NAMESPACE=slurm.pmix.<job>.<step>, PMIX_SERVER_URI*,
    PMIX_SERVER_TMPDIR (in the node's spool dir), SLURM_MPI_TYPE=pmix, SLURM_PROCID,
    SLURM_LOCALID, SLURM_NODEID, SLURM_NTASKS, SLURM_JOB_ID, SLURM_STEP_ID, SLURMD_NODENAME...
    and no PMI_RANK and no OMPI_* variable (OMPI_COMM_WORLD_RANK stays unset even after
    MPI_Init: only mpirun sets those). A rank is therefore read from PMIX_RANK or SLURM_PROCID.
    Several tasks per node on several node names of this one host (`-N2 -n4`) crash or hang
    in Open MPI's shared-memory transport (segfault in mca_btl_vader: both "nodes" name their
    segments after the same hostname); OMPI_MCA_btl=self,tcp makes that reliable. One task
    per node, or all tasks on one node, need nothing.

(3) `scontrol update nodename=X state=drain reason="..."` succeeds (rc 0); the node becomes
    IDLE+DRAIN (sinfo: drained) when idle, or MIXED+DRAIN / ALLOCATED+DRAIN (sinfo: draining)
    while a job runs; the job is not killed and the node turns IDLE+DRAIN when it ends. Without
    a reason it fails, rc 1: "You must specify a reason when DOWNING or DRAINING a node.
    Request denied". `state=resume` clears the drain and the reason at once; the node shows
    IDLE+NOT_RESPONDING (sinfo "idle*") for about a second until slurmctld has pinged it, then
    IDLE. In `scontrol show node X -o` (one line of Key=Value pairs, values may hold spaces)
    the reason appears only while set, as
        Reason=<text as given> [<user>@<YYYY-MM-DDTHH:MM:SS>]
    after ExtSensorsTemp= and before Comment=/Extra= (those two only when set); the state is
    State=<BASE>[+<FLAG>...], e.g. IDLE, IDLE+DRAIN, MIXED+DRAIN, DOWN+NOT_RESPONDING. The
    full reason (tested 126 characters, with spaces, '=', ';' and brackets) is kept verbatim.
    `sinfo -R` prints "%20E %9u %19H %N": only the first 20 characters of the reason;
    `sinfo -R -o '%E|%N'` (or %100E) prints all of it.

(4) HealthCheckProgram exiting non-zero: Slurm does nothing to the node (it stays IDLE, no
    reason); slurmd only logs "error: health_check failed: rc:N output:<stdout>" (stdout only,
    stderr is dropped). A health check has to drain the node itself with scontrol. It runs
    with almost no environment: SLURMD_NODENAME and PWD only, no PATH and no SLURM_CONF (so
    scontrol must be called by absolute path; a cluster not at /etc/slurm/slurm.conf needs
    SLURM_CONF given some other way), cwd = slurmd's cwd. slurm.conf(5) agrees ("Any action to
    be taken must be explicitly performed by the program") and adds that it is killed after
    60 s and skipped on NOT_RESPONDING nodes.
    Prolog exiting non-zero: slurmctld drains the node with Reason="Prolog error" (user root)
    and logs "validate_node_specs: Prolog or job env setup failure on node X, draining the
    node"; srun fails ("Task launch for StepId=J.0 failed on node X: Job prolog failed", exit
    182) and its job ends FAILED (JobLaunchFailure); an sbatch job is requeued and held
    (launch_failed_requeued_held). When the prolog itself drained the node with scontrol
    before exiting non-zero, its own reason is kept: slurmctld does not overwrite the reason
    of a node that is already draining. A prolog that drains the node and exits 0 lets the job
    run; the node is IDLE+DRAIN with the prolog's reason afterwards. The prolog runs (as root,
    on the first step launch of a job on that node) with SLURM_CONF, SLURM_JOB_ID,
    SLURM_JOB_USER, SLURM_JOB_UID, SLURM_NODELIST, SLURMD_NODENAME,
    SLURM_SCRIPT_CONTEXT=prolog_slurmd and no PATH; its stdout and stderr go to the slurmd log
    on failure.

(5) slurmd runs HealthCheckProgram once at start-up, before it registers (a 4 s health check
    delays the node's first "idle" by 4 s), but only when HealthCheckInterval > 0; with
    HealthCheckInterval=0 (the default) the program never runs. A failing start-up run
    changes nothing either. The periodic runs are triggered by slurmctld (none while
    slurmctld is stopped), on every node in HealthCheckNodeState (default ANY).

(6) HealthCheckInterval takes any whole number of seconds; 0 disables it. With 1 the program
    runs about every second on every node, drained ones included, but slurmctld then no
    longer pings the nodes (a ping and a health-check agent never run at once, and the health
    check is due again every time), so a node just resumed stays IDLE+NOT_RESPONDING ("idle*":
    not schedulable, and skipped by the health check) for as long as that lasts (still so
    after 14 s). With 2 a resume is seen within about 2 s, with 3 within about 0.3 s. 2 is the
    smallest usable value; production intervals are minutes.
"""

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

# Binaries the cluster needs, with the Debian package that has them.
REQUIRED = {
    "munged": "munge",
    "slurmctld": "slurmctld",
    "slurmd": "slurmd",
    "scontrol": "slurm-client",
    "sinfo": "slurm-client",
    "squeue": "slurm-client",
    "scancel": "slurm-client",
    "srun": "slurm-client",
}

_REASON_RE = re.compile(r"(?:^| )Reason=(.*?) \[([^\]@]*)@([^\]]*)\](?= [A-Za-z]+=|\s*$)")
_STATE_RE = re.compile(r"(?:^| )State=(\S+)")


class SlurmError(RuntimeError):
    pass


def find_binary(name):
    """Absolute path of a Slurm or munge binary, or None (looks in /usr/sbin too)."""
    dirs = os.environ.get("PATH", "").split(os.pathsep) + ["/usr/sbin", "/sbin", "/usr/bin"]
    for d in dirs:
        p = os.path.join(d, name)
        if d and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def missing_requirements():
    """What keeps a cluster from starting here: missing binaries or not being root."""
    missing = [f"{b} (package {pkg})" for b, pkg in REQUIRED.items() if not find_binary(b)]
    problems = []
    if missing:
        problems.append("missing " + ", ".join(missing) + "; run scripts/install-deps.sh")
    if os.geteuid() != 0:
        problems.append("a test Slurm cluster needs root (SlurmUser=root, slurmd)")
    return problems


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _proc_table():
    """{pid: ppid} of every process now."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        rest = stat[stat.rfind(b")") + 2:].split()
        table[int(entry)] = int(rest[1])
    return table


def _start_time(pid):
    """The process's start time in clock ticks since boot (stat field 22), or None if gone:
    with the pid, it names one process even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rfind(b")") + 2:].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def _holds_path_under(pid, root):
    """Whether the process has an open file or its cwd under root."""
    prefix = str(root) + "/"
    try:
        if (os.readlink(f"/proc/{pid}/cwd") + "/").startswith(prefix):
            return True
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(prefix):
                    return True
            except OSError:
                pass
    except OSError:
        pass
    return False


def _has_env(pid, needle):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return needle in f.read().split(b"\0")
    except OSError:
        return False


class SlurmCluster:
    """A Slurm cluster on this host under tmpdir/slurm; a context manager.

    nodes: node names, one slurmd each (all on this host). cpus/real_memory: what each node
    declares (SlurmdParameters=config_overrides, so more CPUs than the host has are fine).
    health_check_program/health_check_interval/health_check_node_state: HealthCheckProgram,
    HealthCheckInterval (seconds; 0 never runs it), HealthCheckNodeState. prolog/epilog:
    Prolog/Epilog scripts (absolute paths, executable). extra_conf: more slurm.conf lines
    (appended before the node lines; a key given twice: the last one wins). node_conf: more
    parameters for every NodeName line (e.g. "Features=gpu"). debug: SlurmctldDebug and
    SlurmdDebug. start_timeout: seconds until every node must be idle.

    Layout under tmpdir/slurm: slurm.conf, munge/ (key, socket, pid, seed), state/
    (StateSaveLocation), spool/<node>/, tmp/<node>/ (TmpFS), run/ (pid files), log/
    (slurmctld.log, slurmd-<node>.log, and <daemon>.out with each daemon's stdout/stderr;
    munged, in the foreground, logs to munged.out).
    """

    def __init__(self, tmpdir, nodes=("node1",), cpus=2, real_memory=1000,
                 health_check_program=None, health_check_interval=0,
                 health_check_node_state="ANY", prolog=None, epilog=None, extra_conf=(),
                 node_conf="", partition="debug", debug="info", start_timeout=30):
        self.dir = Path(tmpdir).resolve() / "slurm"
        self.nodes = list(nodes)
        if not self.nodes or len(set(self.nodes)) != len(self.nodes):
            raise ValueError("nodes: give one or more distinct names")
        for n in self.nodes:
            if not re.fullmatch(r"[a-z][a-z0-9-]*", n):
                raise ValueError(f"node name {n!r}: lower-case letters, digits and '-'")
        self.cpus = cpus
        self.real_memory = real_memory
        self.health_check_program = health_check_program
        self.health_check_interval = health_check_interval
        self.health_check_node_state = health_check_node_state
        self.prolog = prolog
        self.epilog = epilog
        self.extra_conf = list(extra_conf)
        self.node_conf = node_conf
        self.partition = partition
        self.debug = debug
        self.start_timeout = start_timeout
        self.conf = self.dir / "slurm.conf"
        self.log_dir = self.dir / "log"
        self.munge_socket = self.dir / "munge" / "munge.socket"
        self.hostname = socket.gethostname().split(".")[0]
        self.procs = {}  # daemon name -> Popen, in start order
        self.ctld_port = None
        self.node_ports = {}
        self.startup_seconds = None

    # ---- lifecycle

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self._stop_quietly()
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.stop()
        else:
            self._stop_quietly()
        return False

    def _stop_quietly(self):
        try:
            self.stop()
        except Exception as e:  # the test's own exception matters more
            print(f"slurm_cluster: teardown: {e}", file=sys.stderr)

    def start(self):
        problems = missing_requirements()
        if problems:
            raise SlurmError("; ".join(problems))
        if len(str(self.munge_socket)) > 100:
            raise SlurmError(f"{self.dir}: too long a path for Unix sockets; use a shorter tmpdir")
        t0 = time.monotonic()
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        for sub in ("munge", "state", "log", "run"):
            (self.dir / sub).mkdir()
        for n in self.nodes:
            (self.dir / "spool" / n).mkdir(parents=True)
            (self.dir / "tmp" / n).mkdir(parents=True)
        # munged refuses a key readable by others and a key or socket directory writable by
        # others: 0700 on our directories and 0600 on the key satisfy it (root owns both). It
        # also wants the socket's directory and its parents executable by all, for clients of
        # other users; a test tmpdir (mkdtemp: 0700) is not, and every client here is root, so
        # --force turns that error into a warning.
        os.chmod(self.dir, 0o700)
        os.chmod(self.dir / "munge", 0o700)
        key = self.dir / "munge" / "munge.key"
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(1024))  # what `dd if=/dev/urandom bs=1024 count=1` makes

        self._spawn("munged", [find_binary("munged"), "--foreground", "--force",
                               "--socket", str(self.munge_socket),
                               "--key-file", str(key),
                               "--pid-file", str(self.dir / "munge" / "munged.pid"),
                               "--log-file", str(self.log_dir / "munged.log"),
                               "--seed-file", str(self.dir / "munge" / "munged.seed")])
        self.wait_for(self.munge_socket.exists, 10, "munged's socket")

        self.ctld_port = _free_port()
        self.node_ports = {}
        while len(self.node_ports) < len(self.nodes):
            p = _free_port()
            if p != self.ctld_port and p not in self.node_ports.values():
                self.node_ports[self.nodes[len(self.node_ports)]] = p
        self.conf.write_text(self.slurm_conf())

        self._spawn("slurmctld", [find_binary("slurmctld"), "-D", "-i", "-f", str(self.conf)])
        for n in self.nodes:
            self._spawn(f"slurmd-{n}", [find_binary("slurmd"), "-D", "-N", n, "-f", str(self.conf)])
        self.wait_for(self._all_idle, self.start_timeout, "every node idle in sinfo")
        self.startup_seconds = time.monotonic() - t0

    def stop(self):
        """Stops everything the cluster started; raises SlurmError if a process survives."""
        if not self.procs:
            return
        # Noted before anything is stopped: a task whose parent dies first is orphaned and may
        # no longer be recognisable as ours (proctrack/linuxproc loses it too).
        doomed = {pid: _start_time(pid) for pid in self.processes()}
        ctld = self.procs.get("slurmctld")
        if ctld is not None and ctld.poll() is None:
            self._cancel_jobs()
        # slurmd first (no new steps), then slurmctld (saves state), munged last.
        for name in reversed(list(self.procs)):
            p = self.procs[name]
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.send_signal(signal.SIGCONT)  # in case a test stopped it
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        # Whatever is left: slurmstepd (they detach from slurmd), job tasks, prolog, epilog,
        # health checks, slurmctld's slurmscriptd.
        deadline = time.monotonic() + 5
        while True:
            doomed.update({pid: _start_time(pid) for pid in self.processes()})
            for pid, started in doomed.items():
                if started is not None and _start_time(pid) == started:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            left = self.processes()
            if not left:
                break
            if time.monotonic() > deadline:
                raise SlurmError(f"processes left after teardown: {self._describe(left)}")
            time.sleep(0.05)
        self.procs = {}

    def processes(self):
        """Pids of the processes that belong to this cluster and still run: its daemons, any
        slurmstepd logging into its directory, any process whose environment names its
        slurm.conf (job tasks, prolog, epilog, srun clients), any process with its cwd or an
        open file in its directory, and the descendants of all those; not zombies, and never this
        process or its ancestors. A process the test started with env() counts too."""
        table = _proc_table()
        me, exempt = os.getpid(), set()
        p = me
        while p in table and p not in exempt:
            exempt.add(p)
            p = table[p]
        needle = f"SLURM_CONF={self.conf}".encode()
        roots = {p.pid for p in self.procs.values() if p.poll() is None}
        for pid in table:
            if pid in exempt or pid in roots:
                continue
            if _holds_path_under(pid, self.dir) or _has_env(pid, needle):
                roots.add(pid)
        children = {}
        for pid, ppid in table.items():
            children.setdefault(ppid, []).append(pid)
        found, todo = set(), [r for r in roots if r in table]
        while todo:
            pid = todo.pop()
            if pid in found or pid in exempt:
                continue
            found.add(pid)
            todo += children.get(pid, [])
        # A zombie child of ours (a daemon not yet waited for) is not running.
        return sorted(pid for pid in found if self._running(pid))

    @staticmethod
    def _running(pid):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")
        except OSError:
            return False

    @staticmethod
    def _describe(pids):
        out = []
        for pid in pids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                cmd = "?"
            out.append(f"{pid} {cmd or _comm(pid)}")
        return "; ".join(out)

    def _cancel_jobs(self):
        """Cancels every job and waits up to 3 s for them to finish (squeue lists pending,
        running and completing jobs)."""
        try:
            jobs = self._client("squeue", ["-h", "-o", "%A"], timeout=5).stdout.split()
            if not jobs:
                return
            self._client("scancel", jobs, timeout=5)
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                if not self._client("squeue", ["-h", "-o", "%A"], timeout=5).stdout.split():
                    return
                time.sleep(0.1)
        except (subprocess.TimeoutExpired, OSError):
            pass

    def _spawn(self, name, argv):
        with open(self.log_dir / f"{name}.out", "wb") as out:
            self.procs[name] = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self.env(), cwd=self.dir, start_new_session=True)

    def _all_idle(self):
        # Until slurmctld listens, sinfo would sit in its own retries.
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            if s.connect_ex(("127.0.0.1", self.ctld_port)) != 0:
                return False
        try:
            r = self._client("sinfo", ["-h", "-N", "-o", "%N %T"], timeout=5)
        except subprocess.TimeoutExpired:
            return False
        if r.returncode != 0:
            return False
        states = dict(line.split(None, 1) for line in r.stdout.splitlines() if line.strip())
        return all(states.get(n) == "idle" for n in self.nodes)

    # ---- configuration

    def slurm_conf(self):
        """The text of slurm.conf (ports must be chosen first)."""
        d = self.dir
        lines = [
            "ClusterName=trainrig",
            f"SlurmctldHost={self.hostname}(127.0.0.1)",
            f"SlurmctldPort={self.ctld_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool/%n",
            f"TmpFS={d}/tmp/%n",
            f"SlurmctldPidFile={d}/run/slurmctld.pid",
            f"SlurmdPidFile={d}/run/slurmd-%n.pid",
            f"SlurmctldLogFile={d}/log/slurmctld.log",
            f"SlurmdLogFile={d}/log/slurmd-%n.log",
            f"SlurmctldDebug={self.debug}",
            f"SlurmdDebug={self.debug}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/builtin",
            "SlurmdParameters=config_overrides",
            "ReturnToService=2",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "MailProg=/bin/true",
            "KillWait=2",
            "MinJobAge=5",
        ]
        if self.health_check_program:
            lines += [f"HealthCheckProgram={self.health_check_program}",
                      f"HealthCheckInterval={int(self.health_check_interval)}",
                      f"HealthCheckNodeState={self.health_check_node_state}"]
        if self.prolog:
            lines.append(f"Prolog={self.prolog}")
        if self.epilog:
            lines.append(f"Epilog={self.epilog}")
        lines += self.extra_conf
        for n in self.nodes:
            lines.append(f"NodeName={n} NodeHostname={self.hostname} NodeAddr=127.0.0.1 "
                         f"Port={self.node_ports[n]} CPUs={self.cpus} "
                         f"RealMemory={self.real_memory} State=UNKNOWN {self.node_conf}".rstrip())
        lines.append(f"PartitionName={self.partition} Nodes=ALL Default=YES "
                     "MaxTime=INFINITE State=UP")
        return "\n".join(lines) + "\n"

    # ---- clients

    def env(self, extra=None):
        """Environment for Slurm clients and anything that talks to this cluster: this
        process's, without inherited SLURM_* (a test run inside a job must not leak into it),
        plus SLURM_CONF, plus extra."""
        e = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        e["SLURM_CONF"] = str(self.conf)
        if extra:
            e.update(extra)
        return e

    def _client(self, name, args, timeout=30, env=None, **kw):
        return subprocess.run([find_binary(name), *[str(a) for a in args]],
                              env=self.env(env), capture_output=True, text=True,
                              timeout=timeout, **kw)

    def _checked(self, name, args, check, timeout):
        r = self._client(name, args, timeout=timeout)
        if check and r.returncode != 0:
            raise SlurmError(f"{name} {shlex.join(str(a) for a in args)}: exit {r.returncode}: "
                             f"{r.stderr.strip() or r.stdout.strip()}")
        return r

    def scontrol(self, *args, check=True, timeout=30):
        """Runs scontrol ARGS; returns the CompletedProcess (text). Raises SlurmError on a
        non-zero exit unless check=False."""
        return self._checked("scontrol", args, check, timeout)

    def sinfo(self, *args, check=True, timeout=30):
        """Runs sinfo ARGS; returns the CompletedProcess (text)."""
        return self._checked("sinfo", args, check, timeout)

    def squeue(self, *args, check=True, timeout=30):
        return self._checked("squeue", args, check, timeout)

    def srun(self, args, timeout=60, check=False, env=None, **kw):
        """Runs srun with args (a list, or a string split like a shell would); returns the
        CompletedProcess (stdout/stderr text). env: extra variables. A srun still running at
        timeout is killed and subprocess.TimeoutExpired raised."""
        if isinstance(args, str):
            args = shlex.split(args)
        return subprocess.run([find_binary("srun"), *[str(a) for a in args]],
                              env=self.env(env), capture_output=True, text=True,
                              timeout=timeout, check=check, **kw)

    def node_info(self, name):
        """`scontrol show node NAME -o` as text: one line of Key=Value fields."""
        return self.scontrol("show", "node", name, "-o").stdout.strip()

    def node_state(self, name):
        """(state, reason) of a node from `scontrol show node NAME -o`.

        state: the State= field verbatim, base state and flags joined by '+', e.g. "IDLE",
        "IDLE+DRAIN" (drained), "MIXED+DRAIN" (draining), "DOWN+NOT_RESPONDING",
        "IDLE+NOT_RESPONDING" (just resumed, not yet pinged).
        reason: the text of the Reason= field without the " [user@YYYY-MM-DDTHH:MM:SS]" that
        scontrol appends, exactly as set; None when the node has no reason.
        """
        return self.parse_node_line(self.node_info(name))

    @staticmethod
    def parse_node_line(line):
        """(state, reason) from one line of `scontrol show node -o`; see node_state."""
        m = _STATE_RE.search(line)
        if not m:
            raise SlurmError(f"no State= in: {line}")
        r = _REASON_RE.search(line)
        if r:
            return m.group(1), r.group(1)
        # Without the [user@time] suffix: up to Comment=/Extra= or the end.
        r = re.search(r"(?:^| )Reason=(.*?)(?= Comment=| Extra=|\s*$)", line)
        return m.group(1), (r.group(1) if r else None)

    def node_states(self):
        """{node: sinfo's long state (%T)}, e.g. "idle", "drained", "draining", "mixed";
        sinfo appends "*" when the node does not respond."""
        out = self.sinfo("-h", "-N", "-o", "%N %T").stdout
        return dict(line.split(None, 1) for line in out.splitlines() if line.strip())

    def wait_for(self, predicate, timeout=10, what=None, interval=0.05):
        """Calls predicate until it returns something true, and returns that. Raises
        SlurmError, with the tail of the daemon logs, when timeout seconds pass or a daemon
        has died."""
        deadline = time.monotonic() + timeout
        while True:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise SlurmError(f"{name} exited with status {p.returncode} while waiting "
                                     f"for {what or predicate}\n{self.log_tail(last=name)}")
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise SlurmError(f"timed out after {timeout} s waiting for "
                                 f"{what or predicate}\n{self.log_tail()}")
            time.sleep(interval)

    def log_tail(self, lines=25, last=None):
        """The last lines of every log and daemon output file, for error messages; those of
        daemon `last` (e.g. "slurmctld", "slurmd-n1") at the end."""
        out = []
        files = sorted(self.log_dir.glob("*"), key=lambda f: (f.stem == last, f.name))
        for f in files:
            try:
                text = f.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            if text:
                out.append(f"--- {f}")
                out += text
        return "\n".join(out)
