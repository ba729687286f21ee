#include "hw/cuda_drivers.h"

#include <fmt/format.h>

#include <array>

#include "core/text.h"

namespace trainrig {

namespace {
// Per major: the minor-version-compatibility floor (11.x: 450.80.02; 12.x: 525.60.13;
// 13.x: 580.65.06, the 13.0 GA driver).
constexpr std::array kRows = {
    CudaDriverRequirement{11000, "450.51.05", "450.80.02"},
    CudaDriverRequirement{11010, "455.23", "450.80.02"},
    CudaDriverRequirement{11020, "460.27.03", "450.80.02"},
    CudaDriverRequirement{11030, "465.19.01", "450.80.02"},
    CudaDriverRequirement{11040, "470.42.01", "450.80.02"},
    CudaDriverRequirement{11050, "495.29.05", "450.80.02"},
    CudaDriverRequirement{11060, "510.39.01", "450.80.02"},
    CudaDriverRequirement{11070, "515.43.04", "450.80.02"},
    CudaDriverRequirement{11080, "520.61.05", "450.80.02"},
    CudaDriverRequirement{12000, "525.60.13", "525.60.13"},
    CudaDriverRequirement{12010, "530.30.02", "525.60.13"},
    CudaDriverRequirement{12020, "535.54.03", "525.60.13"},
    CudaDriverRequirement{12030, "545.23.06", "525.60.13"},
    CudaDriverRequirement{12040, "550.54.14", "525.60.13"},
    CudaDriverRequirement{12050, "555.42.02", "525.60.13"},
    CudaDriverRequirement{12060, "560.28.03", "525.60.13"},
    CudaDriverRequirement{12080, "570.26", "525.60.13"},
    CudaDriverRequirement{12090, "575.51.03", "525.60.13"},
    CudaDriverRequirement{13000, "580.65.06", "580.65.06"},
    CudaDriverRequirement{13010, "590.44.01", "580.65.06"},
};
}  // namespace

std::optional<CudaDriverRequirement> cuda_driver_requirement(int cuda) {
    const CudaDriverRequirement* same_major = nullptr;
    for (const auto& r : kRows) {
        if (r.cuda == cuda) return r;
        if (r.cuda / 1000 == cuda / 1000) same_major = &r;
    }
    if (!same_major) return std::nullopt;
    if (cuda < same_major->cuda) return std::nullopt;  // 12.7: no such release
    return CudaDriverRequirement{cuda, nullptr, same_major->minor_compat};
}

int compare_driver_versions(std::string_view a, std::string_view b) {
    auto pa = split(a, '.'), pb = split(b, '.');
    for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
        uint64_t x = i < pa.size() ? parse_u64(pa[i]).value_or(0) : 0;
        uint64_t y = i < pb.size() ? parse_u64(pb[i]).value_or(0) : 0;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

std::string cuda_text(int64_t cuda) { return fmt::format("{}.{}", cuda / 1000, cuda % 1000 / 10); }

int cuda_code(std::string_view text) {
    auto parts = split(text, '.');
    auto major = parse_i64(parts[0]);
    auto minor = parts.size() > 1 ? parse_i64(parts[1]) : std::optional<int64_t>(0);
    if (!major || !minor || *major <= 0 || *major > 99 || *minor < 0 || *minor > 99) return 0;
    return static_cast<int>(*major * 1000 + *minor * 10);
}

}  // namespace trainrig
