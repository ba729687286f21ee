// Probes of CPU frequency governors, memory size, EDAC memory controllers and /dev/shm.
#include "core/text.h"
#include "probe/parsers.h"
#include "probe/probes.h"
#include "probe/read_fact.h"

namespace trainrig {

Fact<std::map<std::string, int>> probe_cpu_governors(const RootFs& fs) {
    const std::string dir = "/sys/devices/system/cpu/cpufreq";
    auto names = fs.list(dir);
    if (!names) return Fact<std::map<std::string, int>>::from(names.status());
    std::map<std::string, int> counts;
    for (const auto& name : *names) {
        if (!name.starts_with("policy")) continue;
        auto gov = read_string_fact(fs, dir + "/" + name + "/scaling_governor");
        if (gov.is_failed()) return Fact<std::map<std::string, int>>::failed(gov.status());
        if (gov.is_known()) ++counts[gov.value()];
    }
    if (counts.empty()) return Fact<std::map<std::string, int>>::absent();
    return Fact<std::map<std::string, int>>::known(std::move(counts));
}

namespace {

Fact<std::vector<EdacController>> probe_edac(const RootFs& fs) {
    const std::string dir = "/sys/devices/system/edac/mc";
    auto names = fs.list(dir);
    if (!names) return Fact<std::vector<EdacController>>::from(names.status());
    std::vector<EdacController> mcs;
    for (const auto& name : *names) {
        if (!name.starts_with("mc") || !parse_u64(std::string_view(name).substr(2))) continue;
        EdacController mc;
        mc.name = name;
        mc.mc_name = read_string_fact(fs, dir + "/" + name + "/mc_name");
        mc.ce_count = read_u64_fact(fs, dir + "/" + name + "/ce_count");
        mc.ue_count = read_u64_fact(fs, dir + "/" + name + "/ue_count");
        mcs.push_back(std::move(mc));
    }
    return Fact<std::vector<EdacController>>::known(std::move(mcs));
}

Fact<ShmMount> probe_shm(const RootFs& fs, const Fact<uint64_t>& mem_total) {
    auto text = fs.read("/proc/self/mountinfo");
    if (!text) return Fact<ShmMount>::failed(text.status());
    const MountEntry* shm = nullptr;
    auto mounts = parse_mountinfo(*text);
    for (const auto& m : mounts)
        if (m.mount_point == "/dev/shm") shm = &m;  // the last mount on a point is the visible one
    if (!shm) return Fact<ShmMount>::absent();
    ShmMount out;
    for (auto opt : split(shm->super_options, ',')) {
        if (!opt.starts_with("size=")) continue;
        const auto value = opt.substr(5);
        if (value.ends_with('%') && !mem_total.is_known())
            return Fact<ShmMount>::failed(
                {Errc::kInvalidInput, "/dev/shm is sized " + std::string(value) +
                                          " of memory, and MemTotal is unknown"});
        auto size = parse_tmpfs_size(value, mem_total.is_known() ? mem_total.value() : 0);
        if (!size)
            return Fact<ShmMount>::failed(
                {Errc::kInvalidInput, "/proc/self/mountinfo: /dev/shm " + size.status().message()});
        out.size_bytes = *size;
        out.size_origin = std::string(opt);
        if (*size == 0) {
            // tmpfs(5): size=0 means no limit; what bounds it is memory.
            if (!mem_total.is_known())
                return Fact<ShmMount>::failed(
                    {Errc::kInvalidInput, "/dev/shm has no size limit and MemTotal is unknown"});
            out.size_bytes = mem_total.value();
            out.size_origin = "size=0: no limit, bounded by MemTotal";
        }
    }
    if (out.size_origin.empty()) {
        // tmpfs(5): without size=, a tmpfs may use half of the physical RAM.
        if (!mem_total.is_known())
            return Fact<ShmMount>::failed(
                {Errc::kInvalidInput, "/dev/shm has no size= option and MemTotal is unknown"});
        out.size_bytes = mem_total.value() / 2;
        out.size_origin = "default: half of MemTotal";
    }
    return Fact<ShmMount>::known(out);
}

}  // namespace

void probe_memory(const RootFs& fs, MemoryFacts& out) {
    out.total_bytes = read_parsed_fact<uint64_t>(fs, "/proc/meminfo", parse_meminfo_total);
    out.edac = probe_edac(fs);
    out.shm = probe_shm(fs, out.total_bytes);
}

}  // namespace trainrig
