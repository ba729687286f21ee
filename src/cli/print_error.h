// How a command reports a failed Status: one sentence on stderr (and the next step, if any).
#pragma once

#include <cstdio>

#include "core/status.h"

namespace trainrig {

inline int print_error(const char* command, const Status& s) {
    std::fprintf(stderr, "trainrig %s: %s%s%s.\n", command, s.message().c_str(),
                 s.next_step().empty() ? "" : "; ", s.next_step().c_str());
    return 2;
}

}  // namespace trainrig
