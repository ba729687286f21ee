// STREAM's copy and triad kernels (McCalpin, www.cs.virginia.edu/stream/ref.html) over three
// arrays of doubles, run by a team of threads each pinned to one core and working on the part
// of every array it touched first, so each page sits on that thread's NUMA node (or on one
// chosen node). Bytes counted as STREAM counts them: copy 16 per element, triad 24.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "bench/host_topology.h"
#include "core/status.h"

namespace trainrig::bench {

struct StreamConfig {
    std::vector<unsigned> pus;  // one thread per entry, pinned there
    int numa_node = -1;         // place the arrays on this node; -1: first touch
    size_t elements = 0;        // per array
    unsigned repeats = 10;      // timed iterations, after one untimed
};

struct StreamTimes {
    std::vector<double> copy_seconds;
    std::vector<double> triad_seconds;
    bool verified = false;
    std::string detail;  // what the check compared, or the first wrong element
};

inline constexpr double kCopyBytesPerElement = 16;   // read a, write c
inline constexpr double kTriadBytesPerElement = 24;  // read b and c, write a

Result<StreamTimes> run_stream(const HostTopology& topo, const StreamConfig& config,
                               const std::atomic<bool>* cancel);

// The values every element of a, b and c must hold after `iterations` copy+triad rounds.
struct StreamExpected {
    double a, b, c;
};
StreamExpected stream_expected(unsigned iterations);

}  // namespace trainrig::bench
