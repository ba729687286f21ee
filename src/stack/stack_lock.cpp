#include "stack/stack_lock.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "probe/stack_parsers.h"
#include "stack/cuda_drivers.h"

namespace trainrig {

bool lock_value_matches(std::string_view locked, std::string_view now) {
    if (locked.starts_with(">=")) {
        const auto floor = locked.substr(2);
        // The numeric part only: "2.14.0+cu132" compares as 2.14.0.
        const auto base = now.substr(0, now.find_first_not_of("0123456789."));
        return !base.empty() && compare_driver_versions(base, floor) >= 0;
    }
    if (locked.ends_with(".*")) {
        const auto series = locked.substr(0, locked.size() - 2);
        return now == series ||
               (now.starts_with(series) && now.size() > series.size() && now[series.size()] == '.');
    }
    return locked == now;
}

std::map<std::string, std::string> stack_versions(const Snapshot& s) {
    std::map<std::string, std::string> v;
    if (s.host.kernel_release.is_known()) v["kernel"] = s.host.kernel_release.value();
    if (s.nvidia.version.is_known()) v["nvidia_driver"] = s.nvidia.version.value();
    if (s.stack.is_known()) {
        const auto& st = s.stack.value();
        if (st.cuda_runtime_version.is_known())
            v["cuda_runtime"] = cuda_text(st.cuda_runtime_version.value());
        if (st.nvcc_version.is_known()) v["cuda_toolkit"] = st.nvcc_version.value();
        if (st.nccl_version.is_known()) v["nccl"] = nccl_version_text(st.nccl_version.value());
        if (st.torch.is_known()) {
            const auto& t = st.torch.value();
            v["torch"] = t.version;
            if (t.cuda.is_known()) v["torch_cuda"] = t.cuda.value();
            if (t.nccl.is_known()) v["torch_nccl"] = t.nccl.value();
        }
    }
    return v;
}

nlohmann::json stack_lock_to_json(const StackLock& lock) {
    nlohmann::json profile = nlohmann::json::object();
    for (const auto& [path, content] : lock.profile)
        profile[path] = content ? nlohmann::json(*content) : nlohmann::json();
    nlohmann::json doc = {{"schema", "trainrig.stack.lock"}, {"schema_version", 1},
                          {"created", lock.created},         {"host", lock.host},
                          {"versions", lock.versions},       {"profile", profile}};
    return doc;
}

std::string stack_lock_to_text(const StackLock& lock) {
    return stack_lock_to_json(lock).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
}

Result<StackLock> stack_lock_from_text(std::string_view text, std::string_view where) {
    auto bad = [&](const std::string& what) {
        return Status{Errc::kInvalidInput, fmt::format("{}: {}", where, what),
                      "write a new one with `trainrig tune lock -o FILE`"};
    };
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return bad("not a JSON object");
    if (doc.value("schema", "") != "trainrig.stack.lock")
        return bad("not a stack lock (schema is not \"trainrig.stack.lock\")");
    if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer() ||
        doc["schema_version"].get<int>() != 1)
        return bad("schema_version is not 1");
    StackLock lock;
    lock.created = doc.value("created", "");
    lock.host = doc.value("host", "");
    if (!doc.contains("versions") || !doc["versions"].is_object())
        return bad("\"versions\" is missing or not an object");
    for (const auto& [name, value] : doc["versions"].items()) {
        if (!value.is_string()) return bad(fmt::format("versions.{} is not a string", name));
        lock.versions[name] = value.get<std::string>();
    }
    if (doc.contains("profile")) {
        if (!doc["profile"].is_object()) return bad("\"profile\" is not an object");
        for (const auto& [path, value] : doc["profile"].items()) {
            if (!value.is_null() && !value.is_string())
                return bad(fmt::format("profile.{} is not a string or null", path));
            lock.profile[path] = value.is_null()
                                     ? std::nullopt
                                     : std::optional<std::string>(value.get<std::string>());
        }
    }
    return lock;
}

}  // namespace trainrig
