"""The train-llama step of scripts/gpu-check.sh: Llama blocks (RMSNorm, RoPE, grouped-query
attention, SwiGLU) on the CUDA backend against the CPU backend, through `trainrig train` as a
user runs it. Both backends start from the same weights (the host initialises them) and take the
same batches. Per step the losses must agree within 1 % and the gradient norms within 5 %, and
the validation loss within 1 %, before training and after the last step; and after the first
step every parameter tensor's update p − p₀ must agree as backend_match's update check demands
(0.357 relative L2). The limits are tests/support/match_limits.json, which the C++ comparison
reads too; docs/gpu-check.md derives them. The losses alone cannot see a broken RoPE backward or
a wrong key/value head: the updates of the attention weights can. Two shapes: llama-tiny (head
size 16, 4 query heads on 2 key/value heads, untied head; T = 80, a full 64-query tile and a
partial one) and a Qwen2-style config (head size 64, 4 query heads on one key/value head, q/k/v
biases, tied head; T = 200, three full tiles and a partial one)."""
import json
import os
import random
import struct
import sys
from array import array

import compare
from runner import Outcome, PASSED, FAILED

LLMC_MAGIC_GPT2, LLMC_VERSION_U16, LLMC_HEADER_INTS = 20240520, 1, 256
PATTERN_TOKENS = 96  # every token id below every shape's vocabulary

# A Qwen2-style model: transformers' config.json fields as plan's reader takes them.
QWEN2_STYLE = {"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 256,
               "num_attention_heads": 4, "num_key_value_heads": 1, "intermediate_size": 704,
               "vocab_size": 512, "max_position_embeddings": 1024, "rope_theta": 1000000.0,
               "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "hidden_act": "silu"}

# (name, model options, --seq, --batch); the config file is written into the step's folder.
SHAPES = (("llama-tiny", ["--model", "llama-tiny"], 80, 4),
          ("qwen2-style", ["--model-config", "{folder}/qwen2-style.json"], 200, 2))
STEPS, LR = 4, 1e-3
# `trainrig train` saves no checkpoint before the first step, so a one-step CPU run at this
# learning rate stands in for the initial weights: it moves no weight by more than about 1e-30,
# below fp32's resolution of any weight not exactly zero, and a zero by nothing an update of
# about lr = 1e-3 would notice.
INITIAL_LR = 1e-30
LIMITS_FILE = "tests/support/match_limits.json"


def load_limits(root):
    """The comparison's limits, from the file tests/support/backend_match.cpp is built with; the
    validation loss is a loss."""
    with open(os.path.join(root, LIMITS_FILE)) as f:
        doc = json.load(f)
    return {"loss": doc["loss"], "grad_norm": doc["grad_norm"], "val_loss": doc["loss"],
            "updates": doc["updates"]}


def write_llmc_shard(path, tokens):
    """llm.c's token shard (a header of 256 int32: magic, version, count; then uint16 ids), a
    format `trainrig train --data` reads as it is."""
    header = [LLMC_MAGIC_GPT2, LLMC_VERSION_U16, len(tokens)] + [0] * (LLMC_HEADER_INTS - 3)
    with open(path, "wb") as f:
        f.write(struct.pack(f"<{LLMC_HEADER_INTS}i", *header))
        f.write(struct.pack(f"<{len(tokens)}H", *tokens))


def pattern_tokens(count, seed):
    """A learnable sequence: each token has a fixed successor 90 % of the time (the same table
    for every seed), as the train CLI tests' data."""
    table = random.Random(12345)
    successor = [table.randrange(PATTERN_TOKENS) for _ in range(PATTERN_TOKENS)]
    rng = random.Random(seed)
    cur, out = rng.randrange(PATTERN_TOKENS), []
    for _ in range(count):
        out.append(cur)
        cur = successor[cur] if rng.random() < 0.9 else rng.randrange(PATTERN_TOKENS)
    return out


def read_log(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return None


def first_checkpoint(ckpt_dir):
    return os.path.join(ckpt_dir, "step-000000001")


def read_checkpoint(folder):
    """A `trainrig train` checkpoint folder (docs/formats.md): its model shape and every
    parameter tensor of model.bin (fp32, little-endian), by name. None when it is not there."""
    try:
        with open(os.path.join(folder, "state.json")) as f:
            state = json.load(f)
        values = array("f")
        with open(os.path.join(folder, "model.bin"), "rb") as f:
            values.frombytes(f.read())
    except (OSError, ValueError):
        return None
    if sys.byteorder == "big":
        values.byteswap()
    return state.get("model", {}), {t["name"]: values[t["offset"]:t["offset"] + t["elements"]]
                                    for t in state.get("tensors", [])}


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def judge(folder, name, limits):
    """One shape's runs in `folder` (their logs, summaries and checkpoints, named as action()
    writes them) side by side: the agreement of the curves and of the first updates, and a
    sentence per disagreement in "problems"."""
    logs = {b: read_log(os.path.join(folder, f"{name}-{b}.jsonl")) for b in ("cpu", "cuda")}
    summaries = {b: read_json(os.path.join(folder, f"{name}-{b}.json")) for b in ("cpu", "cuda")}
    if logs["cpu"] is None or logs["cuda"] is None:
        return {"problems": [f"{name}: a training log is missing or unreadable"]}
    # The validation loss of the initial weights first, as a step 0 of the curves.
    first = [{"step": 0, "val_loss": summaries[b].get("first_val_loss")} for b in ("cpu", "cuda")]
    curves = {k: limits[k] for k in ("loss", "grad_norm", "val_loss")}
    agreement = compare.train_curves([first[0]] + logs["cpu"], [first[1]] + logs["cuda"], curves)
    agreement["first_val_loss"] = {b: f["val_loss"] for b, f in zip(("cpu", "cuda"), first)}
    agreement["loss"] = {b: [line.get("loss") for line in logs[b]] for b in ("cpu", "cuda")}
    read = {k: read_checkpoint(first_checkpoint(os.path.join(folder, f"{name}-{k}")))
            for k in ("initial", "cpu", "cuda")}
    missing = [k for k, v in read.items() if v is None]
    if missing:
        agreement["problems"].append(f"no step-1 checkpoint of the {', '.join(missing)} run")
    else:
        model = read["initial"][0]
        updates = compare.update_errors(read["initial"][1], read["cpu"][1], read["cuda"][1],
                                        limits["updates"], model)
        agreement["updates"] = {k: updates[k] for k in ("limit", "worst", "errors")}
        agreement["problems"] += updates["problems"]
    agreement["problems"] = [f"{name}: {p}" for p in agreement["problems"]]
    return agreement


def action(ctx):
    limits = load_limits(ctx.root)
    train, val = ctx.path("train.bin"), ctx.path("val.bin")
    write_llmc_shard(train, pattern_tokens(20000, 1))
    write_llmc_shard(val, pattern_tokens(4000, 2))
    with open(ctx.path("qwen2-style.json"), "w") as f:
        json.dump(QWEN2_STYLE, f, indent=1)
    env = dict(ctx.env, TRAINRIG_TRAIN_PLUGIN=ctx.bundled("libtrainrig_train_cuda.so"))
    numbers, problems = {"limits": limits, "steps": STEPS}, []
    for name, model, seq, batch in SHAPES:
        model = [m.format(folder=ctx.folder) for m in model]
        common = [ctx.bin, "train", "--data", train, *model, "--seq", str(seq), "--batch",
                  str(batch), "--no-progress", "--json"]
        # The curves, with a checkpoint after every step (the first one's weights are compared),
        # and the initial weights.
        runs = {b: ["--steps", str(STEPS), "--lr", str(LR), "--val-data", val, "--val-every",
                    str(STEPS), "--val-batches", "2", "--backend", b, "--log",
                    ctx.path(f"{name}-{b}.jsonl"), "--ckpt-every", "1", "--keep", str(STEPS)]
                for b in ("cpu", "cuda")}
        runs["initial"] = ["--steps", "1", "--lr", str(INITIAL_LR), "--backend", "cpu"]
        failed = []
        for run, options in runs.items():
            rc = ctx.sh([*common, *options, "--ckpt-dir", ctx.path(f"{name}-{run}"), "-o",
                         ctx.path(f"{name}-{run}.json")], log=f"{name}-{run}.log", env=env)
            if rc != 0:
                failed.append(run)
                problems.append(f"{name}: the {run} run exited {rc}")
        if "cpu" in failed or "cuda" in failed:
            continue
        numbers[name] = judge(ctx.folder, name, limits)
        problems += numbers[name]["problems"]
    if problems:
        more = f" (and {len(problems) - 1} more in summary.json)" if len(problems) > 1 else ""
        numbers["problems"] = problems
        return Outcome(FAILED, problems[0] + more, numbers)
    return Outcome(PASSED, None, numbers)
