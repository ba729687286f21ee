// Keeps host buffers on the GPU's NUMA node: the allocating thread runs on that node's CPUs
// while it first touches the memory (Linux places a page where it is first touched), and gets
// its old CPU set back afterwards.
#pragma once

#include <sched.h>

#include <string>

#include "core/root_fs.h"

namespace trainrig::cuda {

class NumaBinding {
public:
    // Binds the calling thread to /sys/devices/system/node/node<node>/cpulist. A node of -1
    // or an unreadable list leaves the thread as it is (bound() is false, why() says why).
    NumaBinding(const RootFs& fs, int node);
    ~NumaBinding();
    NumaBinding(const NumaBinding&) = delete;
    NumaBinding& operator=(const NumaBinding&) = delete;

    bool bound() const { return bound_; }
    const std::string& why() const { return why_; }

private:
    cpu_set_t saved_{};
    bool bound_ = false;
    std::string why_;
};

}  // namespace trainrig::cuda
