// Which gradients a device backend all-reduces together, and when. Backward finishes the layers
// from the last to the first, so the gradients of the last layers can travel while the first
// ones are still being computed (PyTorch DDP's bucketing, Li et al. 2020). A bucket groups
// consecutive layers until it holds at least `bucket_bytes` of fp32 gradients; the embeddings
// and the final LayerNorm, finished last (the tied embedding takes its input-side gradient at
// the very end), form the last bucket. Per-layer tensors are stacked in ParamLayout, so one
// layer is a range in each of its 12 tensors.
#pragma once

#include <cstddef>
#include <vector>

#include "train/param_layout.h"

namespace trainrig::train {

struct GradRange {
    size_t offset = 0;  // elements from the start of the gradient buffer
    size_t size = 0;
};

struct GradBucket {
    std::vector<GradRange> ranges;  // in buffer order, adjacent ranges merged
    size_t elements = 0;
    // The bucket is complete once backward has finished this layer (-1: the embeddings and the
    // final LayerNorm, after every layer).
    int ready_after = -1;
};

// Buckets in the order backward completes them; every element is in exactly one.
std::vector<GradBucket> plan_grad_buckets(const ParamLayout& layout, int layers,
                                          size_t bucket_bytes);

// PyTorch DDP's default bucket_cap_mb (torch/nn/parallel/distributed.py).
inline constexpr size_t kDefaultBucketBytes = size_t{25} << 20;

}  // namespace trainrig::train
