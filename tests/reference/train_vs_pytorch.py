#!/usr/bin/env python3
"""`trainrig train` against an independent GPT-2 written with PyTorch (fp32, CPU).

Usage: train_vs_pytorch.py TRAINRIG WORKDIR

The data is one llm.c shard holding exactly B windows of T + 1 tokens, so every step's batch
is the whole dataset: the loader's shuffle only reorders rows, which a mean loss does not see.
trainrig trains K steps with a checkpoint after every step; PyTorch (bench/scripts/gpt2_torch.py)
loads the step-1 checkpoint (weights and AdamW moments, read through the tensor table its
state.json documents) and takes steps 2..K with torch.optim.AdamW and clip_grad_norm_. The losses of
those steps and the final weights must agree within fp32 tolerance. This checks the forward
definition (GELU, LayerNorm, attention scaling, tied classifier, padded vocabulary), the
gradients, the optimizer, the schedule and the checkpoint format at once.
"""

import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                                "scripts"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint_io import learning_rate, load_checkpoint, write_llmc_shard  # noqa: E402
import gpt2_torch  # noqa: E402  (the PyTorch GPT-2, in trainrig's parameter layout)

L, NH, C, V, T, B, STEPS = 2, 4, 64, 200, 32, 4, 6
LR, WARMUP, FINAL_FRAC, WD, CLIP = 1e-3, 2, 0.1, 0.1, 1.0


def main():
    trainrig, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    tokens = torch.randint(0, V, (B * T + 1,)).tolist()
    shard = os.path.join(work, "data.bin")
    write_llmc_shard(shard, tokens)
    ckpt, log = os.path.join(work, "ckpt"), os.path.join(work, "log.jsonl")
    subprocess.run([trainrig, "train", "--data", shard, "--layers", str(L), "--heads", str(NH),
                    "--dim", str(C), "--vocab", str(V), "--seq", str(T), "--batch", str(B),
                    "--steps", str(STEPS), "--lr", str(LR), "--warmup", str(WARMUP),
                    "--final-lr-frac", str(FINAL_FRAC), "--weight-decay", str(WD),
                    "--grad-clip", str(CLIP), "--ckpt-dir", ckpt, "--ckpt-every", "1",
                    "--keep", str(STEPS), "--log", log, "--no-progress", "--threads", "1"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(log) as f:
        logged = [json.loads(line) for line in f]

    state, weights, m, v = load_checkpoint(os.path.join(ckpt, "step-000000001"))
    params, moments = {}, {}
    for t in state["tensors"]:
        s = slice(t["offset"], t["offset"] + t["elements"])
        params[t["name"]] = weights[s].clone().requires_grad_(True)
        moments[t["name"]] = (m[s].clone(), v[s].clone())
    opt = gpt2_torch.make_optimizer(params, LR, WD)
    for name, p in params.items():
        opt.state[p] = {"step": torch.tensor(1.0), "exp_avg": moments[name][0],
                        "exp_avg_sq": moments[name][1]}

    data = torch.tensor(tokens)
    idx = torch.stack([data[i * T:i * T + T] for i in range(B)])
    targets = torch.stack([data[i * T + 1:i * T + T + 1] for i in range(B)])
    worst_loss = 0.0
    for step in range(1, STEPS):
        loss = gpt2_torch.forward(params, idx, targets, L, NH, V)
        ours = logged[step]["loss"]
        worst_loss = max(worst_loss, abs(loss.item() - ours) / abs(ours))
        print(f"step {step + 1}: pytorch {loss.item():.7f}  trainrig {ours:.7f}")
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(params.values()), CLIP)
        for g in opt.param_groups:
            g["lr"] = learning_rate(step, STEPS, LR, WARMUP, FINAL_FRAC)
        opt.step()

    _, final, _, _ = load_checkpoint(os.path.join(ckpt, "step-%09d" % STEPS))
    flat = torch.cat([params[t["name"]].detach() for t in state["tensors"]])
    worst_weight = (flat - final).abs().max().item()
    print(f"largest relative loss difference {worst_loss:.2e}, "
          f"largest weight difference {worst_weight:.2e}")
    if worst_loss > 1e-5 or worst_weight > 1e-5:
        sys.exit("trainrig and PyTorch disagree beyond fp32 tolerance")


if __name__ == "__main__":
    main()
