#!/usr/bin/env python3
"""`trainrig train`'s Llama blocks against an independent PyTorch Llama (fp32, CPU).

Usage: llama_vs_pytorch.py TRAINRIG WORKDIR

1. Training: trainrig trains a small Llama (grouped-query attention, untied output layer, Llama
   3.1's RoPE rescaling) from a Hugging Face config.json for K steps with a checkpoint after
   each; PyTorch (bench/scripts/llama_torch.py, written from transformers' modeling_llama) loads
   the step-1 checkpoint with its AdamW moments and takes steps 2..K. Losses and final weights
   must agree within fp32 tolerance: RMSNorm, RoPE, GQA, SwiGLU, the untied head, gradients and
   the optimizer at once.
2. Loading: the script writes random weights under transformers' names as model.safetensors
   (bf16, as checkpoints ship), once whole and once as two shards with an index;
   `train --init-from` must start from exactly those weights: its first loss equals PyTorch's
   on the same batch. A Qwen2-style config (q/k/v biases, tied head) is loaded the same way.
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
import llama_torch  # noqa: E402

T, B, STEPS = 32, 4, 6
LR, WARMUP, FINAL_FRAC, WD, CLIP = 1e-3, 2, 0.1, 0.1, 1.0
MATRICES = ("wte", "wpe", "qkv_w", "attn_proj_w", "fc_w", "fc_proj_w", "lm_head")

LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
         "num_key_value_heads": 2, "intermediate_size": 176, "num_hidden_layers": 2,
         "vocab_size": 200, "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
         "rope_theta": 500000.0, "tie_word_embeddings": False, "hidden_act": "silu",
         "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                          "high_freq_factor": 4.0, "original_max_position_embeddings": 16}}
QWEN = {"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 4, "intermediate_size": 96, "num_hidden_layers": 2,
        "vocab_size": 200, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0, "tie_word_embeddings": True, "hidden_act": "silu"}


def batch(tokens):
    data = torch.tensor(tokens)
    idx = torch.stack([data[i * T:i * T + T] for i in range(B)])
    targets = torch.stack([data[i * T + 1:i * T + T + 1] for i in range(B)])
    return idx, targets


def run(trainrig, *args):
    subprocess.run([trainrig, "train", "--seq", str(T), "--batch", str(B), "--no-progress",
                    "--threads", "1", *args], check=True, stdout=subprocess.DEVNULL)


def check_training(trainrig, work, config, shard, tokens):
    ckpt, log = os.path.join(work, "ckpt"), os.path.join(work, "log.jsonl")
    run(trainrig, "--data", shard, "--model-config", config, "--steps", str(STEPS), "--lr",
        str(LR), "--warmup", str(WARMUP), "--final-lr-frac", str(FINAL_FRAC), "--weight-decay",
        str(WD), "--grad-clip", str(CLIP), "--ckpt-dir", ckpt, "--ckpt-every", "1", "--keep",
        str(STEPS), "--log", log)
    with open(log) as f:
        logged = [json.loads(line) for line in f]
    state, weights, m, v = load_checkpoint(os.path.join(ckpt, "step-000000001"))
    assert state["model"]["arch"] == "llama", state["model"]
    flat, moments = {}, {}
    for t in state["tensors"]:
        s = slice(t["offset"], t["offset"] + t["elements"])
        flat[t["name"]] = weights[s].clone().requires_grad_(True)
        moments[t["name"]] = (m[s].clone(), v[s].clone())
    live = [n for n in flat if flat[n].numel()]
    groups = [{"params": [flat[n] for n in live if n in MATRICES], "weight_decay": WD},
              {"params": [flat[n] for n in live if n not in MATRICES], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.95), eps=1e-8)
    for n in live:
        opt.state[flat[n]] = {"step": torch.tensor(1.0), "exp_avg": moments[n][0],
                              "exp_avg_sq": moments[n][1]}
    idx, targets = batch(tokens)
    worst_loss = 0.0
    for step in range(1, STEPS):
        loss = llama_torch.forward(llama_torch.hf_from_trainrig(flat, LLAMA), LLAMA, idx, targets)
        ours = logged[step]["loss"]
        worst_loss = max(worst_loss, abs(loss.item() - ours) / abs(ours))
        print(f"step {step + 1}: pytorch {loss.item():.7f}  trainrig {ours:.7f}")
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([flat[n] for n in live], CLIP)
        for g in opt.param_groups:
            g["lr"] = learning_rate(step, STEPS, LR, WARMUP, FINAL_FRAC)
        opt.step()
    _, final, _, _ = load_checkpoint(os.path.join(ckpt, "step-%09d" % STEPS))
    ours = torch.cat([flat[t["name"]].detach() for t in state["tensors"]])
    worst_weight = (ours - final).abs().max().item()
    print(f"training: largest relative loss difference {worst_loss:.2e}, "
          f"largest weight difference {worst_weight:.2e}")
    return worst_loss <= 1e-5 and worst_weight <= 1e-5


def random_hf_weights(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    C, NH, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    KV = cfg["num_key_value_heads"] * (C // NH)
    Fw, V = cfg["intermediate_size"], cfg["vocab_size"]
    def rnd(*shape, scale=0.1):
        return torch.randn(*shape, generator=g) * scale
    w = {"model.embed_tokens.weight": rnd(V, C, scale=0.5), "model.norm.weight": 1 + rnd(C)}
    if not cfg["tie_word_embeddings"]:
        w["lm_head.weight"] = rnd(V, C)
    for l in range(L):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = 1 + rnd(C)
        w[p + "post_attention_layernorm.weight"] = 1 + rnd(C)
        w[p + "self_attn.q_proj.weight"] = rnd(C, C, scale=0.3)
        w[p + "self_attn.k_proj.weight"] = rnd(KV, C, scale=0.3)
        w[p + "self_attn.v_proj.weight"] = rnd(KV, C)
        w[p + "self_attn.o_proj.weight"] = rnd(C, C)
        if cfg["model_type"] == "qwen2":
            for n, rows in (("q", C), ("k", KV), ("v", KV)):
                w[p + f"self_attn.{n}_proj.bias"] = rnd(rows)
        w[p + "mlp.gate_proj.weight"] = rnd(Fw, C)
        w[p + "mlp.up_proj.weight"] = rnd(Fw, C)
        w[p + "mlp.down_proj.weight"] = rnd(C, Fw)
    # As the file holds them: rounded to bf16.
    return {k: t.to(torch.bfloat16).float() for k, t in w.items()}


def check_loading(trainrig, work, name, cfg, shard, tokens, sharded):
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    config = os.path.join(folder, "config.json")
    with open(config, "w") as f:
        json.dump(cfg, f)
    w = random_hf_weights(cfg, 7)
    if sharded:
        names = sorted(w)
        half = {"model-00001-of-00002.safetensors": names[:len(names) // 2],
                "model-00002-of-00002.safetensors": names[len(names) // 2:]}
        for file, keys in half.items():
            llama_torch.write_safetensors(os.path.join(folder, file), {k: w[k] for k in keys},
                                          torch.bfloat16)
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": {k: file for file, keys in half.items()
                                                      for k in keys}}, f)
        source = folder
    else:
        source = os.path.join(folder, "model.safetensors")
        llama_torch.write_safetensors(source, w, torch.bfloat16)
    log = os.path.join(folder, "log.jsonl")
    run(trainrig, "--data", shard, "--model-config", config, "--init-from", source, "--steps",
        "1", "--log", log)
    with open(log) as f:
        ours = json.loads(f.readline())["loss"]
    idx, targets = batch(tokens)
    with torch.no_grad():
        theirs = llama_torch.forward(w, cfg, idx, targets).item()
    diff = abs(theirs - ours) / abs(theirs)
    print(f"loading {name}: pytorch {theirs:.7f}  trainrig {ours:.7f}  ({diff:.1e})")
    return diff <= 1e-5


def main():
    trainrig, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    tokens = torch.randint(0, LLAMA["vocab_size"], (B * T + 1,)).tolist()
    shard = os.path.join(work, "data.bin")
    write_llmc_shard(shard, tokens)
    config = os.path.join(work, "config.json")
    with open(config, "w") as f:
        json.dump(LLAMA, f)
    ok = check_training(trainrig, work, config, shard, tokens)
    ok &= check_loading(trainrig, work, "llama-file", LLAMA, shard, tokens, sharded=False)
    ok &= check_loading(trainrig, work, "llama-shards", LLAMA, shard, tokens, sharded=True)
    ok &= check_loading(trainrig, work, "qwen2-file", QWEN, shard, tokens, sharded=False)
    if not ok:
        sys.exit("trainrig and PyTorch disagree beyond fp32 tolerance")


if __name__ == "__main__":
    main()
