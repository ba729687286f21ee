#include "measure/node_placement.h"

#include <algorithm>

namespace trainrig::bench {

NodePlacement place_by_host_name(const std::vector<std::string>& names, int rank) {
    NodePlacement p;
    for (size_t r = 0; r < names.size(); ++r) {
        const auto known = std::find(p.hosts.begin(), p.hosts.end(), names[r]);
        const int node = static_cast<int>(known - p.hosts.begin());
        if (known == p.hosts.end()) p.hosts.push_back(names[r]);
        if (static_cast<int>(r) == rank) p.node = node;
    }
    p.nodes = static_cast<int>(p.hosts.size());
    if (rank >= 0 && static_cast<size_t>(rank) < names.size())
        p.local_rank = static_cast<int>(
            std::count(names.begin(), names.begin() + rank, names[static_cast<size_t>(rank)]));
    return p;
}

}  // namespace trainrig::bench
