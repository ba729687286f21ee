// A pipe whose two ends close with it (both opened close-on-exec).
#pragma once

#include <fcntl.h>
#include <unistd.h>

namespace trainrig {

struct PipePair {
    int r = -1;
    int w = -1;
    PipePair() = default;
    PipePair(const PipePair&) = delete;
    PipePair& operator=(const PipePair&) = delete;
    ~PipePair() {
        if (r >= 0) ::close(r);
        if (w >= 0) ::close(w);
    }
    bool open() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) return false;
        r = fds[0];
        w = fds[1];
        return true;
    }
    void close_write() {
        if (w >= 0) ::close(w);
        w = -1;
    }
};

}  // namespace trainrig
