// An NCCL group (ncclGroupStart … ncclGroupEnd) that is closed however the calls inside it end.
// A group left open makes every later NCCL call of the thread part of it: nothing would launch,
// and the next collective would wait forever. Both plugins (benchmarks, trainer) use this one.
#pragma once

#include <nccl.h>

namespace trainrig::cuda {

class NcclGroup {
public:
    NcclGroup() : started_(ncclGroupStart()) {}
    ~NcclGroup() {
        if (open_) (void)ncclGroupEnd();
    }
    NcclGroup(const NcclGroup&) = delete;
    NcclGroup& operator=(const NcclGroup&) = delete;

    // What ncclGroupStart returned; a failed start leaves nothing to close.
    ncclResult_t started() const { return started_; }
    // Closes the group here, where its result can be checked; the destructor then does nothing.
    ncclResult_t end() {
        open_ = false;
        return ncclGroupEnd();
    }

private:
    ncclResult_t started_;
    bool open_ = started_ == ncclSuccess;
};

}  // namespace trainrig::cuda
