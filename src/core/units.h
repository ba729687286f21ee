// Binary byte multiples (IEC), for sizes that catalogs and files give in KiB, MiB or GiB.
#pragma once

#include <cstddef>

namespace trainrig {

inline constexpr size_t kKiB = size_t{1} << 10;
inline constexpr size_t kMiB = size_t{1} << 20;
inline constexpr size_t kGiB = size_t{1} << 30;

}  // namespace trainrig
