// Remedy texts of the host settings; see host_limits.h.
#include "policy/host_limits.h"

#include <fmt/format.h>

namespace trainrig::policy {

std::string sysctl_line(const SysctlPolicy& p, int64_t value) {
    return fmt::format("{} = {}", p.key, value);
}

std::string sysctl_remedy(const SysctlPolicy& p) {
    return fmt::format(
        "`trainrig tune apply --only sysctl` (it writes '{}' to {} and sets the live value), "
        "or by hand: echo '{}' >> {} && sysctl --system",
        sysctl_line(p, p.target), kSysctlFile, sysctl_line(p, p.target), kSysctlFile);
}

}  // namespace trainrig::policy
