// Running `trainrig doctor --json` on a machine fixture and picking findings out of the report.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_binary.h"

namespace trainrig::test {

using json = nlohmann::json;

// The environment that makes the fake NVML answer from tests/fixtures/nvml/<name>.json.
inline std::string fake_nvml(const std::string& name) {
    return "TRAINRIG_FAKE_NVML=" + std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" +
           name + ".json";
}

inline json doctor_json(const std::string& machine, const std::string& extra, int expect_rc,
                        const std::string& env = "") {
    auto r = run_trainrig("doctor --json --root " + fixture(machine) + " " + extra, env);
    EXPECT_EQ(r.rc, expect_rc) << machine << "\n" << r.err << r.out.substr(0, 2000);
    EXPECT_TRUE(r.err.empty()) << r.err;
    auto j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 500);
    return j;
}

inline const json& finding(const json& doc, const std::string& id) {
    for (const auto& f : doc["findings"])
        if (f["id"] == id) return f;
    static const json none = {{"status", "missing"}, {"summary", ""}, {"evidence", json::array()}};
    ADD_FAILURE() << "no finding " << id;
    return none;
}

inline bool evidence_has(const json& f, const std::string& needle) {
    for (const auto& e : f["evidence"])
        if (e.get<std::string>().find(needle) != std::string::npos) return true;
    return false;
}

}  // namespace trainrig::test
