// Names of error kinds and errno translation.
#include "core/status.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace trainrig {

namespace {
constexpr std::array<std::pair<Errc, std::string_view>, 7> kNames{{
    {Errc::kOk, "ok"},
    {Errc::kNotFound, "not_found"},
    {Errc::kPermission, "permission"},
    {Errc::kInvalidInput, "invalid_input"},
    {Errc::kIo, "io"},
    {Errc::kUnsupported, "unsupported"},
    {Errc::kInternal, "internal"},
}};
}  // namespace

std::string_view errc_name(Errc code) {
    for (const auto& [c, name] : kNames)
        if (c == code) return name;
    return "internal";
}

Errc errc_from_name(std::string_view name) {
    for (const auto& [c, n] : kNames)
        if (n == name) return c;
    return Errc::kInternal;
}

Status errno_status(int err, std::string_view verb, std::string_view what) {
    Errc code = Errc::kIo;
    if (err == ENOENT || err == ENOTDIR) code = Errc::kNotFound;
    if (err == EACCES || err == EPERM) code = Errc::kPermission;
    return {code, fmt::format("cannot {} {}: {}", verb, what, std::strerror(err))};
}

}  // namespace trainrig
