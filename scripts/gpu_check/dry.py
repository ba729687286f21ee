"""The dry mode of scripts/gpu-check.sh: every step's action is replaced by a stand-in process
that goes through the same runner (process group, timeout, stop, archive, summary), so the
control flow runs on a machine without a GPU in seconds: the real plan's order, caps and
deadline, every duration times TRAINRIG_GPU_CHECK_DRY_SCALE. Each stand-in leaves its process id
in stand-in.pid in its folder, so a test can find its process group. What a stand-in does is set
per step by TRAINRIG_GPU_CHECK_DRY, e.g. "train-test=hang,bench-gemm=fail":
  ok    (default) works for 2 % of the step's cap, writes the step's output files, exits 0
  fail  the same, then exits 1
  hang  ignores SIGTERM and never ends: the runner must stop it with SIGKILL"""
from runner import Outcome, PASSED, FAILED

BEHAVIOURS = ("ok", "fail", "hang")

# $1 behaviour, $2 seconds of work, $3 the step's folder, $4 its name, then its output files.
STAND_IN = r'''
what=$1 work=$2 folder=$3 name=$4; shift 4
echo $$ > "$folder/stand-in.pid"
if [ "$what" = hang ]; then trap '' TERM; while :; do sleep 60; done; fi
sleep "$work"
for f in "$@"; do printf '{"dry_run": true, "step": "%s"}\n' "$name" > "$folder/$f"; done
echo "dry run of $name: $what" | tee "$folder/stand-in.txt"
[ "$what" = ok ]
'''


def behaviours(spec):
    """{step: behaviour} from "a=hang,b=fail"; a clear error for anything else."""
    out = {}
    for item in filter(None, (s.strip() for s in (spec or "").split(","))):
        name, _, what = item.partition("=")
        if what not in BEHAVIOURS:
            raise ValueError(f"TRAINRIG_GPU_CHECK_DRY: '{item}' is not STEP={'|'.join(BEHAVIOURS)}")
        out[name] = what
    return out


def stand_in(step, behaviour, time_scale):
    def action(ctx):
        work = 0.02 * step.cap * time_scale
        rc = ctx.sh(["sh", "-c", STAND_IN, "stand-in", behaviour, f"{work:.4f}", ctx.folder,
                     step.name, *step.primary])
        numbers = {"dry_run": True, "exit_code": rc}
        return Outcome(PASSED if rc == 0 else FAILED, None if rc == 0 else f"exit {rc}", numbers)
    return action
