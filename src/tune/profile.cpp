#include "tune/profile.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/text.h"
#include "core/toml_text.h"

namespace trainrig::tune {

Result<Overrides> parse_overrides(std::string_view text, std::string_view where) {
    auto parsed = parse_toml(text, where);
    if (!parsed) return parsed.status();
    const toml::table doc = std::move(parsed).value();
    Overrides out;
    for (const auto& [section, node] : doc) {
        const std::string name(section.str());
        const auto* table = node.as_table();
        if (!table || std::find(profile_names().begin(), profile_names().end(), name) ==
                          profile_names().end())
            return Status{Errc::kInvalidInput,
                          fmt::format("{} line {}: \"{}\" is not a profile table ({})", where,
                                      node.source().begin.line, name, join(profile_names(), ", "))};
        auto& into = out[name];
        for (const auto& [key, value] : *table) {
            const std::string k(key.str());
            if (value.is_table())
                return Status{Errc::kInvalidInput,
                              fmt::format("{} line {}: [{}] \"{}\" is a table; quote dotted "
                                          "keys (\"vm.swappiness\" = 10)",
                                          where, value.source().begin.line, name, k)};
            if (k.empty() || !std::all_of(k.begin(), k.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./-", c);
                }))
                return Status{Errc::kInvalidInput,
                              fmt::format("{} line {}: [{}] \"{}\" is not a setting name "
                                          "(letters, digits, _ . / -)",
                                          where, key.source().begin.line, name, k)};
            std::string v;
            if (auto s = value.value<std::string>())
                v = *s;
            else if (auto i = value.value_exact<int64_t>())
                v = std::to_string(*i);
            else
                return Status{Errc::kInvalidInput,
                              fmt::format("{} line {}: [{}] \"{}\" must be a string or an "
                                          "integer",
                                          where, value.source().begin.line, name, key.str())};
            if (v.find('\n') != std::string::npos || v.empty())
                return Status{Errc::kInvalidInput,
                              fmt::format("{} line {}: [{}] \"{}\" must be one non-empty line",
                                          where, value.source().begin.line, name, key.str())};
            into[std::string(key.str())] = v;
        }
    }
    return out;
}

Status check_profile_names(const std::vector<std::string>& only) {
    for (const auto& name : only)
        if (std::find(profile_names().begin(), profile_names().end(), name) ==
            profile_names().end())
            return Status{Errc::kInvalidInput, fmt::format("--only: \"{}\" is not a profile ({})",
                                                           name, join(profile_names(), ", "))};
    return ok_status();
}

Result<Profile> build_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r) {
    TRAINRIG_TRY(check_profile_names({r.only.begin(), r.only.end()}));
    // Every profile is built, so overrides of profiles left out by --only are checked too;
    // then only the asked ones are kept.
    TuneRequest all = r;
    all.only.clear();
    Profile p;
    TRAINRIG_TRY(add_sysctl_profile(s, live, all, p));
    TRAINRIG_TRY(add_limits_profile(s, live, all, p));
    TRAINRIG_TRY(add_nccl_profile(s, live, all, p));
    TRAINRIG_TRY(add_cpu_profile(s, live, all, p));
    TRAINRIG_TRY(add_numa_profile(s, all, p));
    std::erase_if(p.settings, [&](const Setting& x) { return !r.wants(x.profile); });
    std::erase_if(p.files, [&](const ManagedFile& f) { return !r.wants(f.profile); });
    std::erase_if(p.notes, [&](const std::string& n) {
        return !r.wants(n.substr(0, n.find_first_of(" :")));
    });
    return p;
}

}  // namespace trainrig::tune
