#include "validate/versions.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "core/text.h"
#include "core/version.h"
#include "probe/stack_parsers.h"
#include "stack/cuda_drivers.h"

namespace trainrig::validate {

nlohmann::json machine_versions(const Snapshot& s) {
    auto known = [](const auto& fact) {
        return fact.is_known() ? nlohmann::json(fact.value()) : nlohmann::json(nullptr);
    };
    nlohmann::json v = {{"trainrig", kTrainrigVersion},
                        {"kernel", known(s.host.kernel_release)},
                        {"driver", nullptr},
                        {"cuda_driver", nullptr}};
    if (s.nvml.is_known()) {
        v["driver"] = known(s.nvml.value().driver_version);
        v["cuda_driver"] = known(s.nvml.value().cuda_driver_version);
        // The GPUs' firmware: "96.00.99.00.01 (8 GPUs)", each distinct version with its count.
        std::map<std::string, int> vbios;
        for (const auto& g : s.nvml.value().gpus)
            if (g.vbios_version.is_known()) ++vbios[g.vbios_version.value()];
        std::vector<std::string> parts;
        for (const auto& [version, count] : vbios)
            parts.push_back(fmt::format("{} ({} GPU{})", version, count, count == 1 ? "" : "s"));
        if (!parts.empty()) v["gpu_vbios"] = join(parts, ", ");
    }
    // The machine and its firmware (DMI), then the software stack this process finds: what
    // `fleet` compares across nodes, and what a reader of the report asks first.
    const auto& h = s.host;
    if (h.system_vendor.is_known() || h.product_name.is_known())
        v["system"] =
            std::string(trim((h.system_vendor.is_known() ? h.system_vendor.value() : "") + " " +
                             (h.product_name.is_known() ? h.product_name.value() : "")));
    if (h.bios_version.is_known())
        v["bios"] = h.bios_version.value() +
                    (h.bios_date.is_known() ? " (" + h.bios_date.value() + ")" : "");
    if (s.nics.is_known()) {
        std::vector<std::string> fw;
        for (const auto& n : s.nics.value())
            if (n.firmware.is_known())
                fw.push_back((n.names.empty() ? n.address : n.names.front()) + " " +
                             n.firmware.value());
        if (!fw.empty()) v["nic_firmware"] = join(fw, ", ");
    }
    if (s.stack.is_known()) {
        const SoftwareStack& st = s.stack.value();
        if (st.cuda_runtime_version.is_known())
            v["cuda_runtime"] = cuda_text(st.cuda_runtime_version.value());
        if (st.nccl_version.is_known()) v["nccl"] = nccl_version_text(st.nccl_version.value());
        if (st.nvcc_version.is_known()) v["nvcc"] = st.nvcc_version.value();
        if (st.torch.is_known()) {
            const TorchFacts& t = st.torch.value();
            v["torch"] = t.version;
            v["torch_cuda"] = known(t.cuda);
            v["torch_nccl"] = known(t.nccl);
        }
    }
    return v;
}

}  // namespace trainrig::validate
