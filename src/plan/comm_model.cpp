#include "plan/comm_model.h"

#include <fmt/format.h>

#include <algorithm>

namespace trainrig::plan {

double busbw_factor(Collective c, int n) {
    if (n <= 1) return 0;
    switch (c) {
        case Collective::kAllReduce:
            return 2.0 * (n - 1) / n;
        case Collective::kAllGather:
        case Collective::kReduceScatter:
        case Collective::kAllToAll:
            return static_cast<double>(n - 1) / n;
        case Collective::kBroadcast:
        case Collective::kReduce:
            return 1.0;
    }
    return 0;
}

double collective_seconds(Collective c, double bytes, int ranks, double busbw) {
    if (ranks <= 1 || bytes <= 0) return 0;
    return bytes * busbw_factor(c, ranks) / busbw;
}

GroupLink group_link(const Machine& m, int ranks, int per_node) {
    const double intra = m.intra.bytes_per_s * m.intra.efficiency;
    if (ranks <= per_node || m.gpus <= m.gpus_per_node) return {intra, m.intra.id};
    // A ring through a node leaves and enters it once per NIC it is given; the node's NICs are
    // shared among the groups in proportion to the GPUs each has there.
    const double nics = static_cast<double>(m.nics_per_node) * per_node / m.gpus_per_node;
    const double inter = nics * m.inter.bytes_per_s * m.inter.efficiency;
    if (inter < intra) return {inter, fmt::format("{} x {:.3g} NICs", m.inter.id, nics)};
    return {intra, m.intra.id};
}

}  // namespace trainrig::plan
