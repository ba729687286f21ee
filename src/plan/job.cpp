#include "plan/job.h"

namespace trainrig::plan {

const char* mode_name(Mode m) {
    switch (m) {
        case Mode::kPretrain:
            return "pretrain";
        case Mode::kFull:
            return "full";
        case Mode::kLora:
            return "lora";
        case Mode::kQlora:
            return "qlora";
    }
    return "?";
}

const char* optimizer_name(Optimizer o) {
    switch (o) {
        case Optimizer::kAdamW:
            return "adamw";
        case Optimizer::kAdam8bit:
            return "adam8bit";
        case Optimizer::kSgdMomentum:
            return "sgd";
    }
    return "?";
}

const char* recompute_name(Recompute r) {
    switch (r) {
        case Recompute::kNone:
            return "none";
        case Recompute::kSelective:
            return "selective";
        case Recompute::kFull:
            return "full";
    }
    return "?";
}

const char* convention_name(Convention c) {
    switch (c) {
        case Convention::kZero:
            return "zero";
        case Convention::kMegatron:
            return "megatron";
        case Convention::kDeepSpeed:
            return "deepspeed";
    }
    return "?";
}

std::string lora_targets_text(const LoraTargets& t) {
    std::string out;
    auto add = [&](bool on, const char* name) {
        if (on) out += (out.empty() ? "" : ",") + std::string(name);
    };
    add(t.q, "q");
    add(t.k, "k");
    add(t.v, "v");
    add(t.o, "o");
    add(t.gate, "gate");
    add(t.up, "up");
    add(t.down, "down");
    return out;
}

}  // namespace trainrig::plan
