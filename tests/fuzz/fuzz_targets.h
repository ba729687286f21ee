// Fuzz targets for the kernel-log and sysfs/procfs parsers, shared by the libFuzzer harness
// (tests/fuzz/parsers_fuzzer.cpp, built with -DTRAINRIG_FUZZ=ON and clang) and the randomized
// GoogleTest that runs in every CI build. The property: no input crashes, hangs or produces a
// string that cannot be written as JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/env_file.h"
#include "core/text.h"
#include "doctor/kmsg_events.h"
#include "probe/parsers.h"

namespace trainrig::fuzz {

inline void must_be_json_safe(const std::string& s) {
    // Throws (and so fails the target) on invalid UTF-8.
    (void)nlohmann::json(s).dump();
}

inline void parsers_one_input(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    for_each_kmsg_record(in, [](KmsgRecord r) {
        must_be_json_safe(r.message);
        if (auto x = parse_xid(r.message)) (void)x->code;
        if (auto a = parse_aer(r.message)) must_be_json_safe(a->device);
        (void)parse_fallen_off_bus(r.message);
    });
    if (auto r = parse_pci_resource(in); r.ok()) (void)r->size();
    (void)parse_link_speed(in);
    if (auto c = parse_bracket_choice(in); c.ok()) must_be_json_safe(*c);
    (void)parse_limits_nofile(in);
    (void)parse_meminfo_total(in);
    for (const auto& m : parse_mountinfo(in))
        must_be_json_safe(m.mount_point + m.fs_type + m.source);
    (void)parse_tmpfs_size(in, 1ull << 40);
    (void)parse_nvidia_version(in);
    if (auto e = parse_env_file(in, "f"); e.ok())
        for (const auto& [k, v] : apply_env_ops(*e)) must_be_json_safe(k + sanitize_text(v));
    std::vector<SysctlSetting> settings;
    std::vector<SysctlLine> bad;
    parse_sysctl_conf(in, "f", settings, bad);
    for (const auto& s : settings) must_be_json_safe(s.key + s.value);
    for (const auto& b : bad) must_be_json_safe(b.text);
}

}  // namespace trainrig::fuzz
