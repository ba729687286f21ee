"""What the PyTorch reference tests share: an llm.c token shard, trainrig's learning-rate
schedule, and a trainrig checkpoint read into tensors (docs/train.md)."""

import json
import math
import os
import struct

import torch


def write_llmc_shard(path, tokens):
    header = [0] * 256
    header[0], header[1], header[2] = 20240520, 1, len(tokens)
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(struct.pack("<%dH" % len(tokens), *tokens))


def learning_rate(step, total, lr, warmup, final_frac):
    """docs/train.md: linear warm-up, then half a cosine to lr x final_lr_frac."""
    if step < warmup:
        return lr * (step + 1) / warmup
    decay = total - warmup - 1
    progress = min(1.0, (step - warmup) / decay)
    floor = lr * final_frac
    return floor + 0.5 * (1 + math.cos(math.pi * progress)) * (lr - floor)


def load_checkpoint(folder):
    """state.json, and the parameters and AdamW moments as flat fp32 tensors."""
    with open(os.path.join(folder, "state.json")) as f:
        state = json.load(f)
    def floats(name):
        with open(os.path.join(folder, name), "rb") as f:
            return torch.frombuffer(bytearray(f.read()), dtype=torch.float32)
    return state, floats("model.bin"), floats("adam_m.bin"), floats("adam_v.bin")
