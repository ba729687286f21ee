// Which node each rank of an MPI job is on, from the host name each rank reports
// (MPI_Get_processor_name): ranks with one name are one node. NCCL tells hosts apart the same way
// (its host hash is the host name and the boot id), so the pairs nccl-pairs measures are the
// pairs NCCL connects over the network. Pure C++, unit-tested without MPI.
#pragma once

#include <string>
#include <vector>

namespace trainrig::bench {

struct NodePlacement {
    int node = 0;        // this rank's node, numbered in order of each node's first rank
    int nodes = 0;       // how many
    int local_rank = 0;  // among the ranks of its node, in rank order
    std::vector<std::string> hosts;  // every node's name, in node order
};

// `names[r]` is rank r's host name; `rank` is the rank asking.
NodePlacement place_by_host_name(const std::vector<std::string>& names, int rank);

}  // namespace trainrig::bench
