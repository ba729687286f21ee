// The snapshot's JSON form: lossless round trip (doctor --snapshot must judge exactly what was
// probed), the three Fact states, and clear errors for documents that are not snapshots.
#include <gtest/gtest.h>

#include "doctor/report.h"
#include "snapshot_builder.h"

namespace trainrig::test {
namespace {

TEST(SnapshotJson, RoundTripIsLossless) {
    auto s = healthy();
    gpu_at(s, 1).numa_node =
        Fact<int64_t>::failed({Errc::kPermission, "cannot read x: Permission denied"});
    gpu_at(s, 2).driver = Fact<std::string>::absent();
    s.data_dir = Fact<DataDir>::failed({Errc::kNotFound, "--data-dir /x does not exist"});
    s.kernel_log.value().records.push_back(kmsg(7, "caf\xC3\xA9 \xEF\xBF\xBD"));
    auto text = snapshot_to_json(s).dump();
    auto back = snapshot_from_text(text, "snap.json");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(*back == s);
    EXPECT_EQ(judge(*back, {}, {}), judge(s, {}, {}));
}

TEST(SnapshotJson, FactStates) {
    nlohmann::json j = Fact<int64_t>::known(5);
    EXPECT_EQ(j, 5);
    j = Fact<int64_t>::absent();
    EXPECT_TRUE(j.is_null());
    j = Fact<int64_t>::failed({Errc::kInvalidInput, "bad"});
    EXPECT_EQ(j["error"], "bad");
    EXPECT_EQ(j["error_kind"], "invalid_input");
    auto back = j.get<Fact<int64_t>>();
    EXPECT_TRUE(back.is_failed());
    EXPECT_EQ(back.status().code(), Errc::kInvalidInput);
}

TEST(SnapshotJson, RejectsOtherDocuments) {
    auto not_json = snapshot_from_text("{nope", "a.json");
    EXPECT_NE(not_json.status().message().find("a.json is not valid JSON"), std::string::npos);
    auto other = snapshot_from_text(R"({"schema":"trainrig.doctor"})", "b.json");
    EXPECT_NE(other.status().message().find("b.json is not a trainrig snapshot"),
              std::string::npos);
    auto future =
        snapshot_from_text(R"({"schema":"trainrig.snapshot","schema_version":99})", "c.json");
    EXPECT_NE(future.status().message().find("schema_version 99"), std::string::npos);
    auto wrong_type = snapshot_from_text(
        R"({"schema":"trainrig.snapshot","schema_version":1,"kernel":{"swappiness":"sixty"}})",
        "d.json");
    EXPECT_FALSE(wrong_type.ok());
    EXPECT_NE(wrong_type.status().message().find("d.json"), std::string::npos);
}

TEST(SnapshotJson, WrongTypesInTheHeaderAreRefusedCleanly) {
    for (const char* doc :
         {R"({"schema":"trainrig.snapshot","schema_version":"1"})",
          R"({"schema":7,"schema_version":1})", R"([1,2])", R"({"schema":"trainrig.snapshot"})"}) {
        auto r = snapshot_from_text(doc, "f.json");
        ASSERT_FALSE(r.ok()) << doc;
        EXPECT_EQ(r.status().code(), Errc::kInvalidInput) << doc;
        EXPECT_NE(r.status().message().find("f.json"), std::string::npos) << doc;
    }
}

TEST(SnapshotJson, MissingMembersTakeDefaults) {
    auto s = snapshot_from_text(R"({"schema":"trainrig.snapshot","schema_version":1,"future":1})",
                                "e.json");
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->pci_devices.is_absent());
}

}  // namespace
}  // namespace trainrig::test
