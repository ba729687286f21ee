"""scripts/gpu-check.sh: trainrig's checks on a machine with an NVIDIA GPU in one bounded run.

Usage: scripts/gpu-check.sh [--bundle DIR] [--out DIR] [--deadline SECONDS] [--dry-run|--emulated]

Runs the steps of steps.py in order under one deadline (default 300 s) and leaves at most six
files in the output folder ($OUT, else build/gpu-check-out): summary.json, train-tests.json,
bench-train.json, bench-vs-torch.json, train-vs-torch.json and details.tar. Exit 0 when every
step passed or was skipped for a stated reason, 1 when one failed or did not run, 2 when the
pre-flight check found the machine or the bundle unfit (one sentence on stderr says what).
Read-only on the GPU: it never changes clocks, power, persistence or MIG settings. --emulated
runs the same steps on the emulated CUDA device without a GPU (emulated.py).
"""
import argparse
import datetime
import os
import platform
import shutil
import sys
import tempfile

import dry
import emulated
import steps
from context import Context
from runner import Run, Step, Outcome, PASSED, SKIPPED

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A lent GPU machine gives a task 15 minutes in all, its start (a few minutes) included: 300 s
# leaves room to start, run and rerun once; 540 s left none.
DEFAULT_DEADLINE = 300


def parse(argv):
    p = argparse.ArgumentParser(prog="scripts/gpu-check.sh", description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", help="what scripts/gpu-bundle.sh packed (default "
                                    "build/gpu-bundle, with --emulated build/gpu-bundle-emulated)")
    p.add_argument("--out", default=os.environ.get("OUT") or os.path.join(ROOT, "build/gpu-check-out"),
                   help="where the results go (default $OUT, else build/gpu-check-out)")
    p.add_argument("--deadline", type=float,
                   help=f"seconds the whole run may take, steps included (default "
                        f"{DEFAULT_DEADLINE:.0f}, with --emulated {emulated.DEFAULT_DEADLINE:.0f})")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true",
                      help="stand-ins for every step: the control flow in seconds, without a GPU")
    mode.add_argument("--emulated", action="store_true",
                      help="every step's own command on the emulated CUDA device, from a bundle "
                           "of scripts/gpu-bundle.sh --emulated; steps that need a driver or "
                           "PyTorch are skipped, saying so")
    args = p.parse_args(argv)
    if args.bundle is None:
        args.bundle = os.path.join(ROOT, "build/gpu-bundle-emulated" if args.emulated
                                   else "build/gpu-bundle")
    if args.deadline is None:
        args.deadline = emulated.DEFAULT_DEADLINE if args.emulated else DEFAULT_DEADLINE
    if not args.deadline > 0:
        p.error(f"--deadline must be a positive number of seconds, not {args.deadline}")
    return args


def bundle_commit(bundle):
    try:
        with open(os.path.join(bundle, "COMMIT")) as f:
            return f.read().strip()
    except OSError:
        return None


def skipped(reason):
    return lambda _ctx: Outcome(SKIPPED, reason)


def table(records):
    lines = [f"{'step':22} {'status':8} {'seconds':>8}  reason"]
    for r in records:
        lines.append(f"{r['name']:22} {r['status']:8} {r['seconds']:8.1f}  {r.get('reason', '')}")
    return "\n".join(lines)


def main(argv):
    args = parse(argv)
    try:
        dry_plan = dry.behaviours(os.environ.get("TRAINRIG_GPU_CHECK_DRY")) if args.dry_run else None
    except ValueError as e:
        print(f"gpu-check: {e}", file=sys.stderr)
        return 2
    scale = float(os.environ.get("TRAINRIG_GPU_CHECK_DRY_SCALE", "0.01")) if args.dry_run else 1.0
    work = tempfile.mkdtemp(prefix="trainrig-gpu-check-")
    mode = "dry-run" if args.dry_run else "emulated" if args.emulated else "gpu"
    meta = {"mode": mode, "host": platform.node(),
            "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "bundle": os.path.abspath(args.bundle), "commit": bundle_commit(args.bundle),
            "work_dir": work}
    plan = steps.plan()
    run = Run(args.out, work, args.deadline, time_scale=scale, meta=meta,
              outputs=[f for s in plan for f in s.primary])
    ctx = Context(ROOT, args.bundle, dry=dry_plan, emulated=args.emulated)

    run.stop_on_signals(cleanup=lambda: shutil.rmtree(work, ignore_errors=True))
    print(f"gpu-check ({meta['mode']}): {len(plan)} steps under a {args.deadline:g} s deadline: "
          + ", ".join(s.name for s in plan), flush=True)

    for step in plan:
        if dry_plan is not None:
            step = Step(step.name, step.cap, step.minimum,
                        dry.stand_in(step, dry_plan.get(step.name, "ok"), scale),
                        step.needs, step.primary)
        elif args.emulated:
            action = (skipped(emulated.NOT_HERE[step.name]) if step.name in emulated.NOT_HERE
                      else step.action)
            step = Step(step.name, emulated.cap(step), step.minimum, action,
                        () if step.name in emulated.NOT_HERE else step.needs, step.primary)
        record = run.execute(step, ctx)
        print(f"== {record['name']}: {record['status']} ({record['seconds']:.1f} s)"
              + (f": {record['reason']}" if record.get("reason") else ""), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print(table(run.records))
    print(f"results: {run.out}")
    first = run.records[0]
    if first["status"] != PASSED:
        print(f"gpu-check: cannot run: {first.get('reason', first['status'])}", file=sys.stderr)
        return 2
    return 0 if all(r["status"] in (PASSED, SKIPPED) for r in run.records) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
