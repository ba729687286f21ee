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

nlohmann::json healthy_json() { return snapshot_to_json(healthy()); }

Result<Snapshot> load(const nlohmann::json& j) { return snapshot_from_json(j, "s.json"); }

TEST(SnapshotJson, MissingTopLevelMembersAreRefusedUnknownOnesIgnored) {
    auto j = healthy_json();
    j.erase("pci_devices");
    auto r = load(j);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("no \"pci_devices\" member"), std::string::npos);
    auto k = healthy_json();
    k["from_a_newer_trainrig"] = {{"x", 1}};
    k["memory"].erase("edac");  // nested members take their defaults
    ASSERT_TRUE(load(k).ok());
    EXPECT_TRUE(load(k)->memory.edac.is_absent());
    auto n = healthy_json();
    n["data_dir"] = nullptr;
    EXPECT_TRUE(load(n).ok());
}

TEST(SnapshotJson, NumbersMustFitTheirFields) {
    auto a = healthy_json();
    a["nofile"]["soft"] = -1;
    auto r = load(a);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("/nofile/soft"), std::string::npos) << r.status().message();
    auto b = healthy_json();
    b["kernel"]["swappiness"] = 1e300;
    EXPECT_FALSE(load(b).ok());
    auto c = healthy_json();
    c["pci_devices"][0]["vendor"] = -4318;
    EXPECT_FALSE(load(c).ok());
    auto d = healthy_json();
    d["kernel"]["swappiness"] = "sixty";
    auto e = load(d);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.status().message().find("swappiness"), std::string::npos) << e.status().message();
}

TEST(SnapshotJson, StringsAreRepairedOnLoad) {
    auto j = healthy_json();
    j["host"]["hostname"] = "evil\x1b[2J\x1b[31mhost";
    auto r = load(j);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->host.hostname.value(), "evil?[2J?[31mhost");
}

}  // namespace
}  // namespace trainrig::test
