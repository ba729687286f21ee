#!/usr/bin/env python3
"""A Llama-family decoder in PyTorch, written from transformers' LlamaForCausalLM definition
(modeling_llama.py: LlamaRMSNorm, rotate_half/apply_rotary_pos_emb, repeat_kv, LlamaMLP, and
_compute_llama3_parameters for rope_scaling "llama3"), on tensors named as Hugging Face names
them. It is the independent reference `trainrig train`'s Llama blocks are compared with
(tests/reference/llama_vs_pytorch.py).

hf_from_trainrig() gives views of trainrig's flat checkpoint tensors (docs/train.md) under the
Hugging Face names, so gradients flow back to the flat tensors and an optimizer over them matches
trainrig's AdamW exactly. write_safetensors() writes a checkpoint the way transformers saves one.

As a script: trains llama-tiny's shape (or --dim/--layers/...) for --steps steps on generated
tokens and prints one JSON line with the median step time and tokens/s after --warmup-steps, for
side-by-side runs with `trainrig bench run train --train-model llama-tiny`
(bench/scripts/train-vs-pytorch.sh). fp32 on the CPU.
"""

import argparse
import json
import math
import statistics
import struct
import time

import torch
import torch.nn.functional as F


def inv_freq(cfg):
    """RoPE's inverse frequencies for one head, with Llama 3.1's rescaling when configured."""
    hd = cfg["hidden_size"] // cfg["num_attention_heads"]
    base = cfg.get("rope_theta", 10000.0)
    freq = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    scaling = cfg.get("rope_scaling")
    if not scaling:
        return freq
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    wavelen = 2 * math.pi / freq
    scaled = torch.where(wavelen > old / low, freq / factor, freq)
    smooth = (old / wavelen - low) / (high - low)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= old / high) & (wavelen <= old / low)
    return torch.where(medium, blended, scaled)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def forward(w, cfg, idx, targets):
    """Mean cross-entropy of the model with weights `w` (Hugging Face names) on idx (B, T)."""
    B, T = idx.shape
    C, NH = cfg["hidden_size"], cfg["num_attention_heads"]
    KVH = cfg.get("num_key_value_heads", NH)
    hd, eps, V = C // NH, cfg["rms_norm_eps"], cfg["vocab_size"]
    angles = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq(cfg))
    emb = torch.cat((angles, angles), dim=-1)
    cos, sin = emb.cos().float(), emb.sin().float()
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    x = w["model.embed_tokens.weight"][idx]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        def proj(name):
            return F.linear(h, w[p + f"self_attn.{name}.weight"], w.get(p + f"self_attn.{name}.bias"))
        q = proj("q_proj").view(B, T, NH, hd).transpose(1, 2)
        k = proj("k_proj").view(B, T, KVH, hd).transpose(1, 2)
        v = proj("v_proj").view(B, T, KVH, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(NH // KVH, dim=1)
        v = v.repeat_interleave(NH // KVH, dim=1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        y = att.masked_fill(mask, float("-inf")).softmax(dim=-1) @ v
        x = x + F.linear(y.transpose(1, 2).reshape(B, T, C), w[p + "self_attn.o_proj.weight"])
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        h = F.silu(F.linear(h, w[p + "mlp.gate_proj.weight"])) * F.linear(h, w[p + "mlp.up_proj.weight"])
        x = x + F.linear(h, w[p + "mlp.down_proj.weight"])
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    logits = F.linear(x, head)
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))


def hf_from_trainrig(flat, cfg):
    """Views of trainrig's flat tensors (name -> 1-D tensor) under Hugging Face names."""
    C, NH, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    KV = cfg.get("num_key_value_heads", NH) * (C // NH)
    Fw, V = cfg["intermediate_size"], cfg["vocab_size"]
    QKV = C + 2 * KV
    w = {"model.embed_tokens.weight": flat["wte"].view(-1, C)[:V],
         "model.norm.weight": flat["lnf_w"]}
    if flat["lm_head"].numel():
        w["lm_head.weight"] = flat["lm_head"].view(-1, C)[:V]
    for l in range(L):
        p = f"model.layers.{l}."
        qkv = flat["qkv_w"].view(L, QKV, C)[l]
        fc = flat["fc_w"].view(L, 2 * Fw, C)[l]
        w[p + "input_layernorm.weight"] = flat["ln1_w"].view(L, C)[l]
        w[p + "self_attn.q_proj.weight"] = qkv[:C]
        w[p + "self_attn.k_proj.weight"] = qkv[C:C + KV]
        w[p + "self_attn.v_proj.weight"] = qkv[C + KV:]
        if flat["qkv_b"].numel():
            b = flat["qkv_b"].view(L, QKV)[l]
            w[p + "self_attn.q_proj.bias"] = b[:C]
            w[p + "self_attn.k_proj.bias"] = b[C:C + KV]
            w[p + "self_attn.v_proj.bias"] = b[C + KV:]
        w[p + "self_attn.o_proj.weight"] = flat["attn_proj_w"].view(L, C, C)[l]
        w[p + "post_attention_layernorm.weight"] = flat["ln2_w"].view(L, C)[l]
        w[p + "mlp.gate_proj.weight"] = fc[:Fw]
        w[p + "mlp.up_proj.weight"] = fc[Fw:]
        w[p + "mlp.down_proj.weight"] = flat["fc_proj_w"].view(L, C, Fw)[l]
    return w


def write_safetensors(path, tensors, dtype):
    """The safetensors format: 8-byte little-endian header length, JSON header, raw data."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    name = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16"}[dtype]
    for key in sorted(tensors):
        t = tensors[key].detach().to(dtype).contiguous()
        raw = t.view(torch.int16 if t.element_size() == 2 else torch.int32).numpy().tobytes()
        header[key] = {"dtype": name, "shape": list(t.shape),
                       "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def init_weights(cfg, seed=0):
    """N(0, 0.02) matrices, o/down projections / sqrt(2L), unit gains (docs/train.md)."""
    g = torch.Generator().manual_seed(seed)
    C, NH, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    KV = cfg["num_key_value_heads"] * (C // NH)
    Fw, V = cfg["intermediate_size"], cfg["vocab_size"]
    def rnd(*shape, std=0.02):
        return (torch.randn(*shape, generator=g) * std).requires_grad_(True)
    residual = 0.02 / math.sqrt(2 * L)
    w = {"model.embed_tokens.weight": rnd(V, C), "lm_head.weight": rnd(V, C),
         "model.norm.weight": torch.ones(C, requires_grad=True)}
    for l in range(L):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = torch.ones(C, requires_grad=True)
        w[p + "post_attention_layernorm.weight"] = torch.ones(C, requires_grad=True)
        w[p + "self_attn.q_proj.weight"] = rnd(C, C)
        w[p + "self_attn.k_proj.weight"] = rnd(KV, C)
        w[p + "self_attn.v_proj.weight"] = rnd(KV, C)
        w[p + "self_attn.o_proj.weight"] = rnd(C, C, std=residual)
        w[p + "mlp.gate_proj.weight"] = rnd(Fw, C)
        w[p + "mlp.up_proj.weight"] = rnd(Fw, C)
        w[p + "mlp.down_proj.weight"] = rnd(C, Fw, std=residual)
    return w


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--ffn", type=int, default=176)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup-steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    cfg = {"hidden_size": a.dim, "num_attention_heads": a.heads, "num_key_value_heads": a.kv_heads,
           "intermediate_size": a.ffn, "num_hidden_layers": a.layers, "vocab_size": a.vocab,
           "rms_norm_eps": 1e-5, "rope_theta": 10000.0}
    w = init_weights(cfg)
    matrices = [t for n, t in w.items() if t.dim() == 2]
    gains = [t for n, t in w.items() if t.dim() == 1]
    opt = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.1},
                             {"params": gains, "weight_decay": 0.0}],
                            lr=3e-4, betas=(0.9, 0.95), eps=1e-8)
    cycle = torch.randint(0, a.vocab, (64,))
    data = cycle.repeat((a.batch * (a.seq + 1)) // 64 + 1)[:a.batch * (a.seq + 1)]
    data = data.view(a.batch, a.seq + 1)
    idx, targets = data[:, :-1].contiguous(), data[:, 1:].contiguous()
    times, losses = [], []
    for step in range(a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = forward(w, cfg, idx, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(w.values()), 1.0)
        opt.step()
        losses.append(loss.item())
        if step >= a.warmup_steps:
            times.append(time.perf_counter() - t0)
    step_s = statistics.median(times)
    print(json.dumps({"tool": "pytorch", "torch": torch.__version__, "device": "cpu",
                      "threads": torch.get_num_threads(), "step_s": step_s,
                      "tokens_per_s": a.batch * a.seq / step_s, "first_loss": losses[0],
                      "last_loss": losses[-1], "timed_steps": len(times)}))


if __name__ == "__main__":
    main()
