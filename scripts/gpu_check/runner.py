"""The step runner of scripts/gpu-check.sh: one overall deadline, each step's timeout taken from
what is left, results that come back however the run ends.

Every step runs as its own process group with a timeout of min(its cap, what is left of the
deadline less the kill grace and the finishing reserve). A step that runs out is stopped
(SIGTERM, then SIGKILL after the grace) and recorded as not run, never as passed; a step that
cannot get its minimum is not started. After each step the summary is rewritten (temp file,
rename) and the step's log and secondary files are appended to the archive, so a run killed
from outside still returns what it measured. docs/gpu-check.md has the file set and statuses.

A step's process group never outlives the runner: SIGTERM, SIGINT or SIGHUP to the runner stop
it before the runner exits, and a runner that dies without running a handler (SIGKILL, as a
device tool's timeout sends) is noticed by a watcher in the step's group, which then stops the
group the same way. A step left running would hold the GPU for whatever runs next.
"""
import json
import os
import signal
import subprocess
import sys
import tarfile
import time

# The most an output file may be on the way back (16 MiB each); the archive stays below it.
ARCHIVE_LIMIT = 15 * (1 << 20)
LOG_LIMIT = 2 * (1 << 20)  # a step's log beyond this keeps its first and last MiB

PASSED, FAILED, SKIPPED, NOT_RUN = "passed", "failed", "skipped", "not_run"

# Runs "$@" (after $1, the kill grace) in the step's process group beside a watcher of the
# runner: stdin is the read end of a pipe whose only write end the runner holds, so the read
# ends when the runner is gone, however it ended; then the whole group gets SIGTERM and, after
# the grace, SIGKILL. The command gets /dev/null as stdin and SIGTERM's default action (started
# in the background, it ignores SIGINT, which the runner never sends); the guard outlives a
# SIGTERM to the group until the command has exited, so the runner still waits for the command.
GUARD = r'''
grace=$1; shift
exec 3<&0 </dev/null
( read -r _ <&3; trap '' TERM; kill -TERM 0; sleep "$grace"; kill -KILL 0 ) &
watcher=$!
exec 3<&-
trap : TERM
"$@" &
child=$!
while wait "$child"; rc=$?; [ "$rc" -gt 128 ] && kill -0 "$child" 2>/dev/null; do :; done
kill "$watcher" 2>/dev/null
exit "$rc"
'''
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Outcome:
    """What a step's action reports: its status, why (for anything but passed), numbers."""

    def __init__(self, status, reason=None, numbers=None):
        self.status, self.reason, self.numbers = status, reason, numbers or {}


class Step:
    """name; cap and minimum in seconds (of real time, before the run's time scale); action(ctx)
    returns an Outcome; needs: steps that must have passed; primary: files of the work folder
    that go to the output folder itself; the rest of the work folder goes to the archive."""

    def __init__(self, name, cap, minimum, action, needs=(), primary=()):
        self.name, self.cap, self.minimum, self.action = name, cap, minimum, action
        self.needs, self.primary = tuple(needs), tuple(primary)


class StepTimeout(Exception):
    pass


class Run:
    def __init__(self, out, work, deadline, time_scale=1.0, clock=time.monotonic, meta=None,
                 outputs=()):
        self.out, self.work, self.scale, self.clock = out, work, time_scale, clock
        self.start = clock()
        self.deadline = deadline * time_scale
        # Room to stop a step that ran out, and to write the last summary and archive entry.
        self.kill_grace = min(5.0, 0.02 * deadline) * time_scale
        self.reserve = min(2.0, 0.01 * deadline) * time_scale
        self.records = []
        self.meta = dict(meta or {}, deadline_s=deadline, time_scale=time_scale)
        self.current = None  # (record, process) of the step in flight
        self.step_deadline = None
        self.archived_bytes = 0
        # Every step's watcher reads `alive_r` until this process is gone (GUARD).
        self.alive_r, self.alive_w = os.pipe()
        os.makedirs(out, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        self.archive = os.path.join(out, "details.tar")
        # An earlier run's results never mix with this one's.
        for name in ("summary.json", "details.tar", *outputs):
            if os.path.exists(os.path.join(out, name)):
                os.remove(os.path.join(out, name))

    def elapsed(self):
        return self.clock() - self.start

    def left(self):
        return self.deadline - self.elapsed()

    def step_dir(self, step):
        return os.path.join(self.work, f"{len(self.records):02d}-{step.name}")

    def status_of(self, name):
        for r in self.records:
            if r["name"] == name:
                return r["status"]
        return None

    def execute(self, step, ctx):
        """Runs one step (or records why it did not) and returns its record."""
        record = {"name": step.name, "status": NOT_RUN, "seconds": 0.0,
                  "cap_s": step.cap, "timeout_s": None, "numbers": {}}
        missing = [n for n in step.needs if self.status_of(n) != PASSED]
        available = self.left() - self.kill_grace - self.reserve
        timeout = min(step.cap * self.scale, available)
        if missing:
            record["reason"] = f"needs {', '.join(missing)}, which did not pass"
        elif timeout < step.minimum * self.scale:
            record["reason"] = (f"{max(available, 0) / self.scale:.0f} s of the deadline left; "
                                f"the step needs at least {step.minimum} s")
        else:
            record["timeout_s"] = round(timeout / self.scale, 1)
            folder = self.step_dir(step)
            os.makedirs(folder, exist_ok=True)
            t0 = self.clock()
            self.step_deadline = t0 + timeout
            ctx.begin(self, step, folder)
            self.current = (record, None)
            try:
                outcome = step.action(ctx)
            except StepTimeout:
                outcome = Outcome(NOT_RUN, f"ran out of its {record['timeout_s']:.0f} s")
                record["timed_out"] = True
            except Exception as e:  # a defect in the step itself: recorded, the run goes on
                outcome = Outcome(FAILED, f"the step raised {type(e).__name__}: {e}")
            record["seconds"] = round((self.clock() - t0) / self.scale, 2)
            record["status"] = outcome.status
            if outcome.reason:
                record["reason"] = outcome.reason
            record["numbers"] = outcome.numbers
            self.current = None
            self.publish(step, folder, record)
        self.records.append(record)
        self.write_summary()
        return record

    def run_command(self, argv, log, env=None, cwd=None):
        """Runs argv in its own process group (under GUARD) with the step's time left, output to
        `log`. Returns the exit code; raises StepTimeout when the step's time runs out."""
        deadline = self.step_deadline
        with open(log, "ab") as f:
            f.write(("$ " + " ".join(str(a) for a in argv) + "\n").encode())
            f.flush()
            guarded = ["/bin/sh", "-c", GUARD, "gpu-check-step", f"{self.kill_grace:.3f}", *argv]
            proc = subprocess.Popen([str(a) for a in guarded], stdout=f, stderr=subprocess.STDOUT,
                                    stdin=self.alive_r, env=env, cwd=cwd,
                                    start_new_session=True)
            self.current = (self.current[0] if self.current else None, proc)
            try:
                return proc.wait(timeout=max(deadline - self.clock(), 0.01))
            except subprocess.TimeoutExpired:
                self.stop(proc)
                f.write(b"\n[gpu-check: stopped: the step ran out of time]\n")
                raise StepTimeout()
            finally:
                self.current = (self.current[0], None) if self.current else None

    def stop(self, proc):
        """SIGTERM to the group (trainrig stops between samples), SIGKILL after the grace."""
        for sig, wait in ((signal.SIGTERM, self.kill_grace), (signal.SIGKILL, 1.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def publish(self, step, folder, record):
        """Primary files to the output folder (copy, fsync, rename); everything else of the
        step's folder, its log cut to LOG_LIMIT, appended to the archive."""
        for name in step.primary:
            src = os.path.join(folder, name)
            if os.path.isfile(src):
                dst = os.path.join(self.out, name)
                tmp = dst + ".tmp"
                with open(src, "rb") as a, open(tmp, "wb") as b:
                    b.write(a.read())
                    b.flush()
                    os.fsync(b.fileno())
                os.replace(tmp, dst)
        left_out = []
        with tarfile.open(self.archive, "a") as tar:
            for name in sorted(os.listdir(folder)):
                path = os.path.join(folder, name)
                if name in step.primary or not os.path.isfile(path):
                    continue
                if name.endswith(".log"):
                    cut_log(path)
                size = os.path.getsize(path)
                if self.archived_bytes + size > ARCHIVE_LIMIT:
                    left_out.append(f"{name} ({size} bytes)")
                    continue
                tar.add(path, arcname=f"{os.path.basename(folder)}/{name}")
                self.archived_bytes += size + 1024
        if left_out:
            record["left_out_of_archive"] = left_out

    def stop_on_signals(self, cleanup=None):
        """SIGTERM, SIGINT and SIGHUP stop the step in flight with its process group, record it
        as not run, write the summary, run `cleanup` and exit 128 + the signal."""
        def handler(signum, _frame):
            self.interrupted(signum)
            if cleanup:
                cleanup()
            sys.exit(128 + signum)
        for sig in STOP_SIGNALS:
            signal.signal(sig, handler)

    def interrupted(self, signum):
        """The runner itself is being stopped: the step in flight is recorded as not run."""
        record, proc = self.current if self.current else (None, None)
        if proc is not None:
            self.stop(proc)
        if record is not None:
            record["status"] = NOT_RUN
            record["reason"] = f"gpu-check was stopped by signal {signum} during the step"
            self.records.append(record)
        self.write_summary(interrupted=signum)

    def summary(self, interrupted=None):
        counts = {}
        for r in self.records:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        doc = {"schema": "trainrig.gpu-check", "schema_version": 1, **self.meta,
               "seconds": round(self.elapsed() / self.scale, 1), "counts": counts,
               "steps": self.records}
        if interrupted:
            doc["interrupted_by_signal"] = interrupted
        return doc

    def write_summary(self, interrupted=None):
        path = os.path.join(self.out, "summary.json")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.summary(interrupted), f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


def cut_log(path):
    size = os.path.getsize(path)
    if size <= LOG_LIMIT:
        return
    half = LOG_LIMIT // 2
    with open(path, "rb") as f:
        head = f.read(half)
        f.seek(size - half)
        tail = f.read()
    with open(path, "wb") as f:
        f.write(head)
        f.write(f"\n[gpu-check: {size - 2 * half} bytes cut]\n".encode())
        f.write(tail)
