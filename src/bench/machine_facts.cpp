#include "bench/machine_facts.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>

#include "bench/host_topology.h"
#include "core/root_fs.h"
#include "core/text.h"
#include "probe/parsers.h"

namespace trainrig::bench {

nlohmann::json parse_cpuinfo(std::string_view cpuinfo) {
    nlohmann::json cpu = nlohmann::json::object();
    size_t pos = 0;
    while (pos < cpuinfo.size()) {
        size_t end = cpuinfo.find('\n', pos);
        if (end == std::string_view::npos) end = cpuinfo.size();
        const std::string_view line = cpuinfo.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty()) {
            if (!cpu.empty()) break;  // the first processor is enough
            continue;
        }
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        std::string key(trim(line.substr(0, colon)));
        std::string value(trim(line.substr(colon + 1)));
        if (key == "model name")
            cpu["model_name"] = value;
        else if (key == "vendor_id")
            cpu["vendor"] = value;
        else if (key == "cpu family")
            cpu["family"] = std::atoi(value.c_str());
        else if (key == "model")
            cpu["model"] = std::atoi(value.c_str());
        else if (key == "CPU implementer")
            cpu["implementer"] = value;
        else if (key == "CPU part")
            cpu["part"] = value;
    }
    // A guest shares the host's memory channels and sees only some of its cores: the same
    // reading of the flag as the snapshot's host.hypervisor.
    if (auto guest = parse_cpuinfo_hypervisor(cpuinfo); guest.ok()) cpu["virtual"] = *guest;
    return cpu;
}

nlohmann::json collect_machine_facts() {
    nlohmann::json m = nlohmann::json::object();
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) m["hostname"] = host;
    if (utsname u{}; ::uname(&u) == 0) m["kernel"] = u.release;
    const RootFs fs("/");
    if (auto info = fs.read("/proc/cpuinfo", size_t{16} << 20); info)
        m["cpu"] = parse_cpuinfo(*info);
    if (auto topo = HostTopology::load(); topo) {
        m["cores"] = topo->cores().size();
        m["numa_nodes"] = topo->numa_nodes().size();
        std::set<int> with_cores;
        for (const auto& c : topo->cores())
            if (c.numa_node >= 0) with_cores.insert(c.numa_node);
        m["numa_nodes_with_cores"] = with_cores.size();
        m["packages"] = topo->packages();
    }
    if (const size_t bytes = total_memory_bytes(); bytes > 0) m["memory_bytes"] = bytes;
    return m;
}

}  // namespace trainrig::bench
