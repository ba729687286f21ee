// The host memory a CPU training run may take: /proc/meminfo's MemAvailable, which both the
// trainer's up-front check and the batch probe's default limit read, and how they print it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace trainrig::train {

// MemAvailable in bytes; nullopt when /proc/meminfo cannot be read.
std::optional<uint64_t> available_memory();

// "1.50 GiB"
std::string gib(uint64_t bytes);

}  // namespace trainrig::train
