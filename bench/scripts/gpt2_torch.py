#!/usr/bin/env python3
"""GPT-2 in PyTorch, in trainrig's parameter layout: the reference trainrig train is compared with.

As a module: init_params() and forward() define the model on a dict of flat tensors named and
shaped as trainrig's checkpoint `tensors` table (docs/train.md), so a trainrig checkpoint loads
without conversion (tests/reference/train_vs_pytorch.py). make_optimizer() is AdamW with
trainrig's decay groups.

As a script: trains that model for --steps steps on generated tokens and prints one JSON line
with the median step time and tokens/s over the steps after --warmup-steps, for side-by-side
runs with `trainrig train` (bench/scripts/train-vs-pytorch.sh). On a GPU it uses bf16 autocast,
scaled_dot_product_attention and torch.compile, as nanoGPT does; on the CPU, fp32.
"""

import argparse
import contextlib
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F

MATRICES = ("wte", "wpe", "qkv_w", "attn_proj_w", "fc_w", "fc_proj_w")


def layout(L, C, Vp, max_t):
    """(name, shape) of every tensor, in trainrig's order (src/train/param_layout.h)."""
    return [("wte", (Vp, C)), ("wpe", (max_t, C)), ("ln1_w", (L, C)), ("ln1_b", (L, C)),
            ("qkv_w", (L, 3 * C, C)), ("qkv_b", (L, 3 * C)), ("attn_proj_w", (L, C, C)),
            ("attn_proj_b", (L, C)), ("ln2_w", (L, C)), ("ln2_b", (L, C)),
            ("fc_w", (L, 4 * C, C)), ("fc_b", (L, 4 * C)), ("fc_proj_w", (L, C, 4 * C)),
            ("fc_proj_b", (L, C)), ("lnf_w", (C,)), ("lnf_b", (C,))]


def init_params(L, C, Vp, max_t, device="cpu", seed=0):
    """GPT-2's initialisation (N(0, 0.02), residual projections / sqrt(2L), unit gains)."""
    g = torch.Generator().manual_seed(seed)
    p = {}
    for name, shape in layout(L, C, Vp, max_t):
        if name in MATRICES:
            std = 0.02 / math.sqrt(2 * L) if name in ("attn_proj_w", "fc_proj_w") else 0.02
            t = torch.randn(shape, generator=g) * std
        else:
            t = torch.ones(shape) if name.endswith("_w") else torch.zeros(shape)
        p[name] = t.to(device).requires_grad_(True)
    return p


def forward(p, idx, targets, L, NH, V):
    """Mean cross-entropy of GPT-2 on idx (B, T) against targets; the logits of the padded
    vocabulary take no part in the softmax."""
    B, T = idx.shape
    C = p["lnf_w"].numel()
    Vp = p["wte"].numel() // C
    hs = C // NH
    wte = p["wte"].view(Vp, C)
    x = wte[idx] + p["wpe"].view(-1, C)[:T]
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    mask = None if sdpa else torch.triu(torch.ones(T, T, dtype=torch.bool, device=idx.device), 1)
    for l in range(L):
        def w(name, rows=0):
            return p[name].view(L, rows, -1)[l] if rows else p[name].view(L, -1)[l]
        h = F.layer_norm(x, (C,), w("ln1_w"), w("ln1_b"), eps=1e-5)
        qkv = F.linear(h, w("qkv_w", 3 * C), w("qkv_b"))
        q, k, v = (t.view(B, T, NH, hs).transpose(1, 2) for t in qkv.split(C, dim=-1))
        if sdpa:
            y = sdpa(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
            y = att.masked_fill(mask, float("-inf")).softmax(dim=-1) @ v
        y = y.transpose(1, 2).reshape(B, T, C)
        x = x + F.linear(y, w("attn_proj_w", C), w("attn_proj_b"))
        h = F.layer_norm(x, (C,), w("ln2_w"), w("ln2_b"), eps=1e-5)
        h = F.gelu(F.linear(h, w("fc_w", 4 * C), w("fc_b")), approximate="tanh")
        x = x + F.linear(h, w("fc_proj_w", C), w("fc_proj_b"))
    x = F.layer_norm(x, (C,), p["lnf_w"], p["lnf_b"], eps=1e-5)
    logits = F.linear(x, wte)
    return F.cross_entropy(logits[..., :V].reshape(-1, V).float(), targets.reshape(-1))


def make_optimizer(p, lr, weight_decay=0.1, **kwargs):
    groups = [{"params": [p[n] for n in p if n in MATRICES], "weight_decay": weight_decay},
              {"params": [p[n] for n in p if n not in MATRICES], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8, **kwargs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup-steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--no-compile", action="store_true")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    gpu = a.device.startswith("cuda")
    Vp = (a.vocab + 127) // 128 * 128
    p = init_params(a.layers, a.dim, Vp, 1024, a.device)
    fused = {"fused": True} if gpu and "fused" in torch.optim.AdamW.__init__.__code__.co_varnames else {}
    opt = make_optimizer(p, 3e-4, **fused)
    step_fn = forward
    if gpu and not a.no_compile and hasattr(torch, "compile"):
        step_fn = torch.compile(forward)
    cycle = torch.randint(0, a.vocab, (64,))
    data = cycle.repeat((a.batch * (a.seq + 1)) // 64 + 1)[:a.batch * (a.seq + 1)]
    data = data.view(a.batch, a.seq + 1).to(a.device)
    idx, targets = data[:, :-1].contiguous(), data[:, 1:].contiguous()
    times, losses = [], []
    for step in range(a.steps):
        autocast = (torch.autocast(device_type="cuda", dtype=torch.bfloat16) if gpu
                    else contextlib.nullcontext())
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with autocast:
            loss = step_fn(p, idx, targets, a.layers, a.heads, a.vocab)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
        opt.step()
        losses.append(loss.item())  # synchronises
        if step >= a.warmup_steps:
            times.append(time.perf_counter() - t0)
    step_s = statistics.median(times)
    print(json.dumps({"tool": "pytorch", "torch": torch.__version__, "device": a.device,
                      "threads": torch.get_num_threads(), "step_s": step_s,
                      "tokens_per_s": a.batch * a.seq / step_s, "first_loss": losses[0],
                      "last_loss": losses[-1], "timed_steps": len(times)}))


if __name__ == "__main__":
    main()
