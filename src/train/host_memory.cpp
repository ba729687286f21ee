#include "train/host_memory.h"

#include <fcntl.h>
#include <fmt/format.h>

#include "core/read_all.h"
#include "probe/parsers.h"

namespace trainrig::train {

std::optional<uint64_t> available_memory() {
    const int fd = ::open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    auto text = read_all(fd, "/proc/meminfo", 1 << 20);
    if (!text.ok()) return std::nullopt;
    auto v = parse_meminfo_field(*text, "MemAvailable");
    return v.ok() ? std::optional<uint64_t>(*v) : std::nullopt;
}

std::string gib(uint64_t bytes) {
    return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ull << 30));
}

}  // namespace trainrig::train
