"""The train-llama step of scripts/gpu-check.sh: Llama blocks (RMSNorm, RoPE, grouped-query
attention, SwiGLU) on the CUDA backend against the CPU backend, through `trainrig train` as a
user runs it. Both backends start from the same weights (the host initialises them) and take the
same batches; per step the losses must agree within 1 % and the gradient norms within 5 % (the
limits of tests/support/backend_match.h, derived in docs/gpu-check.md), and the validation loss
within 1 %, before training and after the last step. Two shapes: llama-tiny (head size 16, 4
query heads on 2 key/value heads, untied head; T = 80, a full 64-query tile and a partial one)
and a Qwen2-style config (head size 64, 4 query heads on one key/value head, q/k/v biases, tied
head; T = 200, three full tiles and a partial one)."""
import json
import random
import struct

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
LIMITS = {"loss": 0.01, "grad_norm": 0.05, "val_loss": 0.01}


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


def action(ctx):
    train, val = ctx.path("train.bin"), ctx.path("val.bin")
    write_llmc_shard(train, pattern_tokens(20000, 1))
    write_llmc_shard(val, pattern_tokens(4000, 2))
    with open(ctx.path("qwen2-style.json"), "w") as f:
        json.dump(QWEN2_STYLE, f, indent=1)
    env = dict(ctx.env, TRAINRIG_TRAIN_PLUGIN=ctx.bundled("libtrainrig_train_cuda.so"))
    numbers, problems = {"limits": LIMITS, "steps": STEPS}, []
    for name, model, seq, batch in SHAPES:
        model = [m.format(folder=ctx.folder) for m in model]
        logs, summaries = {}, {}
        for backend in ("cpu", "cuda"):
            log, summary = ctx.path(f"{name}-{backend}.jsonl"), f"{name}-{backend}.json"
            rc = ctx.sh([ctx.bin, "train", "--data", train, "--val-data", val, *model,
                         "--seq", str(seq), "--batch", str(batch), "--steps", str(STEPS),
                         "--lr", str(LR), "--val-every", str(STEPS), "--val-batches", "2",
                         "--backend", backend, "--no-progress", "--json", "--log", log,
                         "-o", ctx.path(summary)],
                        log=f"{name}-{backend}.log", env=env)
            logs[backend] = read_log(log) if rc == 0 else None
            summaries[backend] = ctx.read_json(summary) or {}
            if rc != 0:
                problems.append(f"{name} on the {backend} backend exited {rc}")
        if logs["cpu"] is None or logs["cuda"] is None:
            continue
        # The validation loss of the initial weights first, as a step 0 of the curves.
        first = [{"step": 0, "val_loss": summaries[b].get("first_val_loss")}
                 for b in ("cpu", "cuda")]
        agreement = compare.train_curves([first[0]] + logs["cpu"], [first[1]] + logs["cuda"],
                                         LIMITS)
        agreement["first_val_loss"] = {b: f["val_loss"] for b, f in zip(("cpu", "cuda"), first)}
        agreement["loss"] = {b: [line.get("loss") for line in logs[b]] for b in ("cpu", "cuda")}
        numbers[name] = agreement
        problems += [f"{name}: {p}" for p in agreement["problems"]]
    if problems:
        more = f" (and {len(problems) - 1} more in summary.json)" if len(problems) > 1 else ""
        numbers["problems"] = problems
        return Outcome(FAILED, problems[0] + more, numbers)
    return Outcome(PASSED, None, numbers)
