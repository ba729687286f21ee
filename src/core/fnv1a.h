// FNV-1a, 64-bit (Fowler, Noll, Vo; the published offset basis and prime): a stable digest for
// identities and equality checks (model shapes, replica weights). Not for security.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trainrig {

inline constexpr uint64_t kFnv1a64Offset = 1469598103934665603ull;

inline uint64_t fnv1a64(const void* data, size_t bytes, uint64_t h = kFnv1a64Offset) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

inline uint64_t fnv1a64(std::string_view s) { return fnv1a64(s.data(), s.size()); }

}  // namespace trainrig
