#include "stack/cuda_drivers.h"

#include <fmt/format.h>

#include "core/text.h"
#include "stack/compat.h"

namespace trainrig {

std::optional<CudaDriverRequirement> cuda_driver_requirement(int cuda) {
    const auto req = stack::driver_requirement(stack::stack_data(), cuda);
    if (!req) return std::nullopt;
    // Point into the data's own strings: they live as long as the process's stack data.
    const char* floor = req->release ? req->release->minor_compat.c_str() : nullptr;
    if (!floor)
        for (const auto& r : stack::stack_data().cuda)
            if (r.cuda / 1000 == cuda / 1000 && r.minor_compat == req->minor_compat)
                floor = r.minor_compat.c_str();
    return CudaDriverRequirement{
        cuda, req->release ? req->release->toolkit_driver.c_str() : nullptr, floor};
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
