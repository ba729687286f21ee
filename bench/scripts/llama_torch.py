#!/usr/bin/env python3
"""A Llama-family decoder in PyTorch, written from transformers' LlamaForCausalLM definition
(modeling_llama.py: LlamaRMSNorm, rotate_half/apply_rotary_pos_emb, repeat_kv, LlamaMLP, and
_compute_llama3_parameters for rope_scaling "llama3"), on tensors named as Hugging Face names
them. It is the independent reference `trainrig train`'s Llama blocks are compared with
(tests/reference/llama_vs_pytorch.py).

hf_from_trainrig() gives views of trainrig's flat checkpoint tensors (docs/train.md) under the
Hugging Face names, so gradients flow back to the flat tensors and an optimizer over them matches
trainrig's AdamW exactly. write_safetensors() writes a checkpoint the way transformers saves one.
"""

import json
import math
import struct

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
