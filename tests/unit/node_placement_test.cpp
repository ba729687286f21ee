// nccl-pairs' nodes: ranks with one host name are one node, numbered by their first rank.
#include "measure/node_placement.h"

#include <gtest/gtest.h>

namespace trainrig::bench {
namespace {

TEST(NodePlacement, RanksWithOneHostNameAreOneNode) {
    // mpirun -npernode 2 over two hosts, and a host whose ranks are not next to each other.
    const std::vector<std::string> names = {"a", "a", "b", "b", "c", "a"};
    const NodePlacement r0 = place_by_host_name(names, 0);
    EXPECT_EQ(r0.nodes, 3);
    EXPECT_EQ(r0.hosts, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(r0.node, 0);
    EXPECT_EQ(r0.local_rank, 0);
    const NodePlacement r3 = place_by_host_name(names, 3);
    EXPECT_EQ(r3.node, 1);
    EXPECT_EQ(r3.local_rank, 1);
    const NodePlacement r5 = place_by_host_name(names, 5);
    EXPECT_EQ(r5.node, 0);
    EXPECT_EQ(r5.local_rank, 2);
    EXPECT_EQ(place_by_host_name(names, 4).node, 2);
    // One host: one node, whatever the number of ranks.
    EXPECT_EQ(place_by_host_name({"x", "x", "x"}, 2).nodes, 1);
    EXPECT_EQ(place_by_host_name({"x", "x", "x"}, 2).local_rank, 2);
}

}  // namespace
}  // namespace trainrig::bench
