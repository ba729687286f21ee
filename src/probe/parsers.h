// Pure parsers for the kernel's text formats. No file access: probes read, these parse, so each
// format is unit-tested and fuzzed on its own. Each returns kInvalidInput with a sentence naming
// the format when the text does not follow it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "snapshot/snapshot.h"

namespace trainrig {

// One /dev/kmsg record: "prio,seq,usec,flags[,...];message" plus optional continuation lines
// (" KEY=VALUE") which are dropped. Documentation/ABI/testing/dev-kmsg.
Result<KmsgRecord> parse_kmsg_record(std::string_view record);

// Splits a buffer of records (a saved /dev/kmsg, one record per line, continuation lines start
// with a space) and calls `sink` for each; returns the number of malformed records.
template <class Sink>
uint64_t for_each_kmsg_record(std::string_view buffer, Sink&& sink);

// sysfs `resource`: one "0x%016llx 0x%016llx 0x%016llx" line (start end flags) per resource.
Result<std::vector<PciResource>> parse_pci_resource(std::string_view text);

// sysfs current_link_speed / max_link_speed: "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s PCIe".
// "Unknown" (the kernel's word for an unknown speed) is kNotFound.
Result<double> parse_link_speed(std::string_view text);

// "always [madvise] never" -> "madvise".
Result<std::string> parse_bracket_choice(std::string_view text);

// /proc/cpuinfo: whether the CPU says it runs under a hypervisor (the `hypervisor` flag, CPUID
// leaf 1 ECX bit 31, which every x86 hypervisor sets for its guests). kNotFound without a
// "flags" line (other architectures: the question has no answer there).
Result<bool> parse_cpuinfo_hypervisor(std::string_view text);

// /proc/uptime: "12345.67 89012.34", seconds since boot, then idle seconds summed over CPUs.
Result<double> parse_uptime(std::string_view text);

// The "Max open files" row of /proc/PID/limits.
Result<Rlimit> parse_limits_nofile(std::string_view text);
// Any row of /proc/<pid>/limits by its name ("Max locked memory").
Result<Rlimit> parse_limit(std::string_view text, std::string_view row);

// /proc/meminfo "MemTotal:  527999872 kB" -> bytes.
Result<uint64_t> parse_meminfo_total(std::string_view text);
// Any "<field>: <n> kB" line of /proc/meminfo (MemAvailable, ...) -> bytes.
Result<uint64_t> parse_meminfo_field(std::string_view text, std::string_view field);

// NUL-separated KEY=VALUE (/proc/PID/environ), keeping variables for which keep(key) is true.
template <class Keep>
std::map<std::string, std::string> parse_environ(std::string_view text, Keep&& keep);

// One line of /proc/PID/mountinfo (proc(5)).
struct MountEntry {
    std::string dev;  // major:minor
    std::string mount_point;
    std::string fs_type;
    std::string source;
    std::string super_options;
};
Result<MountEntry> parse_mountinfo_line(std::string_view line);
// All well-formed lines; malformed ones are skipped.
std::vector<MountEntry> parse_mountinfo(std::string_view text);

// A tmpfs size option: "65536k", "64m", "2g", "50%" (of mem_total), plain bytes.
Result<uint64_t> parse_tmpfs_size(std::string_view value, uint64_t mem_total);

// The driver version out of /proc/driver/nvidia/version's first line.
Result<std::string> parse_nvidia_version(std::string_view text);

// One sysctl configuration file (sysctl.conf(5) / sysctl.d(5)).
void parse_sysctl_conf(std::string_view text, const std::string& file,
                       std::vector<SysctlSetting>& settings, std::vector<SysctlLine>& malformed);

// "kernel/sched_latency_ns" or "kernel.sched_latency_ns" -> dotted form; and back to a path.
std::string sysctl_key_dotted(std::string_view key);
std::string sysctl_key_path(std::string_view dotted_key);

// ----------------------------------------------------------------------------------------------

template <class Sink>
uint64_t for_each_kmsg_record(std::string_view buffer, Sink&& sink) {
    uint64_t malformed = 0;
    size_t pos = 0;
    while (pos < buffer.size()) {
        size_t end = buffer.find('\n', pos);
        if (end == std::string_view::npos) end = buffer.size();
        // Continuation lines belong to the record before them.
        while (end + 1 < buffer.size() && buffer[end + 1] == ' ') {
            size_t next = buffer.find('\n', end + 1);
            end = next == std::string_view::npos ? buffer.size() : next;
        }
        auto record = buffer.substr(pos, end - pos);
        if (!record.empty()) {
            auto r = parse_kmsg_record(record);
            if (r.ok())
                sink(std::move(r).value());
            else
                ++malformed;
        }
        pos = end + 1;
    }
    return malformed;
}

template <class Keep>
std::map<std::string, std::string> parse_environ(std::string_view text, Keep&& keep) {
    std::map<std::string, std::string> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\0', pos);
        if (end == std::string_view::npos) end = text.size();
        auto entry = text.substr(pos, end - pos);
        auto eq = entry.find('=');
        if (eq != std::string_view::npos && eq > 0) {
            std::string key(entry.substr(0, eq));
            if (keep(key)) out[key] = std::string(entry.substr(eq + 1));
        }
        pos = end + 1;
    }
    return out;
}

}  // namespace trainrig
