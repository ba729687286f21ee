// The host settings a training machine should have, defined once: doctor judges by these
// limits and names these values and files in its remedies, tune writes these values into these
// files, so that `tune apply` is exactly what doctor asks for (docs/tuning.md, docs/checks.md).
#pragma once

#include <cstdint>
#include <string>

namespace trainrig::policy {

// The files tune owns. sysctl.d and limits.d apply files in lexical order and the last setting
// wins: "99-trainrig" sorts after Debian's 99-sysctl.conf (the /etc/sysctl.conf link), so an
// admin's 60-*.conf cannot silently undo it (sysctl.d(5), limits.conf(5)).
inline constexpr const char* kSysctlFile = "/etc/sysctl.d/99-trainrig.conf";
inline constexpr const char* kLimitsFile = "/etc/security/limits.d/99-trainrig.conf";
inline constexpr const char* kNcclFile = "/etc/trainrig/nccl.env";
// THP defrag has no sysctl; systemd-tmpfiles writes it at boot (tmpfiles.d(5), "w" lines).
inline constexpr const char* kThpFile = "/etc/tmpfiles.d/trainrig-thp.conf";

// A sysctl with a bound: doctor warns past `bound`; tune writes `target` (which passes). `min`
// and `max` are what the kernel accepts at all: a value outside them is refused before anything
// is written (sysctl --system would fail on it at every boot).
struct SysctlPolicy {
    const char* rule;  // the doctor rule that judges it
    const char* key;   // sysctl name
    int64_t bound;     // the largest (kAtMost) or smallest (kAtLeast) value that passes
    enum Direction { kAtMost, kAtLeast } direction;
    int64_t target;  // what tune writes when the machine is past the bound
    const char* source;
    int64_t min, max;  // the kernel's range
    bool passes(int64_t v) const { return direction == kAtMost ? v <= bound : v >= bound; }
};

// Above 10 the kernel swaps out trainer and data-loader memory under page-cache pressure (the
// default is 60). TuneD's throughput-performance profile uses 10; a lower value is kept.
inline constexpr SysctlPolicy kSwappiness{
    "kernel.swappiness",
    "vm.swappiness",
    10,
    SysctlPolicy::kAtMost,
    10,
    "TuneD throughput-performance profile (vm.swappiness=10)",
    0,
    200};  // kernel docs admin-guide/sysctl/vm.rst: 0 to 200 (to 100 before Linux 5.8)
// Automatic NUMA balancing unmaps pages to sample accesses and migrates them, which fights
// explicit binding; judged only on machines with more than one node.
inline constexpr SysctlPolicy kNumaBalancing{
    "kernel.numa-balancing",
    "kernel.numa_balancing",
    0,
    SysctlPolicy::kAtMost,
    0,
    "kernel docs admin-guide/sysctl/kernel.rst (numa_balancing)",
    0,
    3};  // the same page: 0 off, 1 normal, 2 memory tiering, 3 both (Linux 6.0)
// The system-wide descriptor limit; kernels since 5.x default to a huge value, old ones to
// about 10% of RAM in KiB. The article's 1000000 passes; below it tune writes 2^20, the
// per-process target, and never lowers a larger value.
inline constexpr SysctlPolicy kFileMax{
    "kernel.nofile",
    "fs.file-max",
    1000000,
    SysctlPolicy::kAtLeast,
    1048576,
    "training-machine article §3.3 (fs.file-max); proc_sys_fs(5)",
    0,
    INT64_MAX};  // an unsigned long; tune never writes more

// RLIMIT_NOFILE: data-loader workers, NCCL sockets and checkpoint shards need descriptors; 1024
// (the usual soft default) ends in "Too many open files". Doctor warns below `min_soft`; tune
// writes `target` for soft and hard, which cannot exceed fs.nr_open (getrlimit(2)).
struct NofilePolicy {
    const char* rule = "kernel.nofile";
    uint64_t min_soft = 65536;
    uint64_t target = 1048576;
    const char* source = "getrlimit(2) RLIMIT_NOFILE; limits.conf(5)";
};
inline constexpr NofilePolicy kNofile{};

// A setting with one right value.
struct ValuePolicy {
    const char* rule;
    const char* key;
    const char* value;
    const char* source;
};
// Other governors lower the clock between kernel launches and data-loading bursts.
inline constexpr ValuePolicy kCpuGovernor{
    "cpu.governor", "scaling_governor", "performance",
    "TuneD throughput-performance profile (governor=performance)"};

// "set 'vm.swappiness = 10' in /etc/sysctl.d/99-trainrig.conf ...": the one remedy for a sysctl,
// the value and file tune writes.
std::string sysctl_remedy(const SysctlPolicy& p);
// The sysctl.d line tune writes and the remedy names.
std::string sysctl_line(const SysctlPolicy& p, int64_t value);

}  // namespace trainrig::policy
