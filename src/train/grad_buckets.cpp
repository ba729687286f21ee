#include "train/grad_buckets.h"

#include <algorithm>

namespace trainrig::train {
namespace {

void add(GradBucket& b, size_t offset, size_t size) {
    if (size == 0) return;
    b.ranges.push_back({offset, size});
    b.elements += size;
}

// Sorts by offset and joins ranges that touch (the final LayerNorm's two tensors, or the same
// tensor of consecutive layers), so NCCL gets as few calls as the layout allows.
void merge(GradBucket& b) {
    std::sort(b.ranges.begin(), b.ranges.end(),
              [](const GradRange& x, const GradRange& y) { return x.offset < y.offset; });
    std::vector<GradRange> out;
    for (const GradRange& r : b.ranges) {
        if (!out.empty() && out.back().offset + out.back().size == r.offset)
            out.back().size += r.size;
        else
            out.push_back(r);
    }
    b.ranges = std::move(out);
}

}  // namespace

std::vector<GradBucket> plan_grad_buckets(const ParamLayout& layout, int layers,
                                          size_t bucket_bytes) {
    const size_t target = std::max<size_t>(1, bucket_bytes / sizeof(float));
    std::vector<GradBucket> out;
    GradBucket open;
    for (int l = layers - 1; l >= 0; --l) {
        for (int i = 0; i < kParamCount; ++i) {
            const TensorSlot& s = layout[static_cast<Param>(i)];
            if (!s.per_layer) continue;
            const size_t per = s.size / static_cast<size_t>(layers);
            add(open, s.offset + static_cast<size_t>(l) * per, per);
        }
        open.ready_after = l;
        if (open.elements >= target || l == 0) {
            merge(open);
            out.push_back(std::move(open));
            open = GradBucket{};
        }
    }
    GradBucket last;
    for (const TensorSlot& s : layout.slots())
        if (!s.per_layer) add(last, s.offset, s.size);
    last.ready_after = -1;
    merge(last);
    out.push_back(std::move(last));
    return out;
}

}  // namespace trainrig::train
