// Collective communication time in the nccl-tests model: a collective of S bytes over n ranks
// takes S x factor(n) / busbw, where busbw is the bus bandwidth nccl-tests reports and factor
// is 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and alltoall, 1 for
// broadcast and reduce (NVIDIA/nccl-tests doc/PERFORMANCE.md). Bandwidth term only: at the
// >= 25 MB buffers training moves, the 2(n-1)·α latency term is microseconds.
#pragma once

#include <string>

#include "plan/job.h"

namespace trainrig::plan {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce };

double busbw_factor(Collective c, int ranks);
double collective_seconds(Collective c, double bytes, int ranks, double busbw);

// The bus bandwidth a group of `ranks` GPUs gets when `per_node` of them share each node with
// the node's other groups: the intra-node link, or the node's NICs in proportion when the
// group spans nodes, whichever is slower.
struct GroupLink {
    double busbw = 0;  // bytes/s
    std::string over;  // "nvlink4", "ib-ndr x 8 NICs"
};
GroupLink group_link(const Machine& m, int ranks, int per_node);

}  // namespace trainrig::plan
