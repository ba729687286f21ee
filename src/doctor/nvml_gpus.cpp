#include "doctor/nvml_gpus.h"

namespace trainrig {

const NvmlFacts* need_nvml(const Snapshot& s, Finding& f) {
    if (s.nvml.is_known()) return &s.nvml.value();
    const std::string why =
        s.nvml.is_failed() ? s.nvml.status().message() : std::string("no NVML facts");
    f.raise(FindingStatus::kError, why);
    f.evidence.push_back(why);
    if (why.find("did not answer") != std::string::npos)
        f.remedy =
            "A driver that does not answer is stuck: look for Xid and \"NVRM\" lines in "
            "`dmesg`, try `nvidia-smi` by hand (it will likely hang too), drain the node and "
            "reset the GPU or reboot.";
    return nullptr;
}

}  // namespace trainrig
