// tune and doctor judge a host setting the same way: on a copy of each machine tree, tune
// changes a setting exactly when doctor does not pass the rule the setting cites; doctor's
// remedy names the line and the file tune writes; and after `tune apply` doctor passes every
// rule tune cited, nccl.env judged from the file tune wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "doctor_json.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

class TuneDoctorAgreement : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        root_ =
            fs::temp_directory_path() / ("agree-" + GetParam() + "-" + std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::copy(fixture(GetParam()), root_,
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
    void TearDown() override { fs::remove_all(root_); }

    json doctor(const std::string& rules, const std::string& extra = "") {
        auto r = run_trainrig("doctor --json --root " + root_.string() + " --only " + rules + " " +
                              extra);
        EXPECT_NE(r.rc, 2) << r.err;
        auto j = json::parse(r.out, nullptr, false);
        EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 500) << r.err;
        return j;
    }

    // What pam_limits gives a new login session from tune's limits file: the process limits
    // doctor reads change only then.
    void log_in_again() {
        std::ifstream in(root_ / "etc/security/limits.d/99-trainrig.conf");
        std::string soft, hard, line;
        std::smatch m;
        while (std::getline(in, line))
            if (std::regex_match(line, m, std::regex(R"(\* (soft|hard) nofile (\S+))")))
                (m[1] == "soft" ? soft : hard) = m[2];
        ASSERT_FALSE(soft.empty());
        const fs::path limits = root_ / "proc/self/limits";
        std::string text = slurp(limits);
        text = std::regex_replace(text, std::regex(R"(Max open files +\S+ +\S+)"),
                                  "Max open files            " + soft + "  " + hard);
        std::ofstream(limits) << text;
    }

    fs::path root_;
};

TEST_P(TuneDoctorAgreement, TuneChangesExactlyWhatDoctorFlagsAndApplyMakesItPass) {
    auto shown = run_trainrig("tune show --json --root " + root_.string());
    ASSERT_EQ(shown.rc, 0) << shown.err;
    const auto profile = json::parse(shown.out);
    // rule -> does tune change any setting that cites it
    std::map<std::string, bool> cited;
    std::map<std::string, std::vector<std::string>> lines;  // rule -> sysctl lines tune writes
    for (const auto& x : profile["settings"]) {
        if (x["rule"].is_null()) continue;
        const auto rule = x["rule"].get<std::string>();
        cited[rule] = cited[rule] || x["changes"].get<bool>();
        if (x["profile"] == "sysctl" && x["changes"].get<bool>())
            lines[rule].push_back(x["key"].get<std::string>() + " = " +
                                  x["value"].get<std::string>());
    }
    ASSERT_FALSE(cited.empty());
    std::string ids;
    for (const auto& [rule, changes] : cited) ids += (ids.empty() ? "" : ",") + rule;

    const auto before = doctor(ids);
    for (const auto& [rule, changes] : cited) {
        const auto& f = finding(before, rule);
        const std::string status = f["status"];
        EXPECT_EQ(changes, status == "warn" || status == "fail")
            << GetParam() << ": tune " << (changes ? "changes" : "keeps") << " what " << rule
            << " judges " << status << ": " << f["summary"];
        for (const auto& line : lines[rule]) {
            const std::string remedy = f.value("remedy", "");
            EXPECT_NE(remedy.find(line), std::string::npos) << rule << ": " << remedy;
            EXPECT_NE(remedy.find("/etc/sysctl.d/99-trainrig.conf"), std::string::npos) << remedy;
        }
    }

    auto applied = run_trainrig("tune apply --yes --root " + root_.string());
    ASSERT_EQ(applied.rc, 0) << applied.err << applied.out;
    log_in_again();
    const fs::path env = root_ / "etc/trainrig/nccl.env";
    const auto after = doctor(ids, fs::exists(env) ? "--env-file " + env.string() : "");
    for (const auto& [rule, changes] : cited) {
        const auto& f = finding(after, rule);
        EXPECT_TRUE(f["status"] == "pass" || f["status"] == "skip")
            << GetParam() << " after tune apply: " << rule << " " << f["status"] << ": "
            << f["summary"];
    }
}

INSTANTIATE_TEST_SUITE_P(Machines, TuneDoctorAgreement,
                         ::testing::Values("article-box", "hgx-8xh100", "epyc-4xa100-healthy",
                                           "rtx4090-workstation", "cpu-only"),
                         [](const auto& param_info) {
                             std::string name = param_info.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

// Every rule id a command or a document cites is a rule doctor has.
TEST(RuleIds, EveryCitedIdExists) {
    const auto listed = run_trainrig("doctor --list");
    ASSERT_EQ(listed.rc, 0) << listed.err;
    std::set<std::string> ids;
    const std::regex listed_id(R"(\n +([a-z]+\.[a-z0-9-]+) )");
    for (auto it = std::sregex_iterator(listed.out.begin(), listed.out.end(), listed_id);
         it != std::sregex_iterator(); ++it)
        ids.insert((*it)[1]);
    ASSERT_GT(ids.size(), 30u) << listed.out;

    std::string cited_text;
    for (const char* machine : {"article-box", "hgx-8xh100", "cpu-only"}) {
        auto r = run_trainrig("tune show --json --multi-node --root " + fixture(machine));
        ASSERT_EQ(r.rc, 0) << r.err;
        const auto profile = json::parse(r.out);  // the loop reads into it: keep it alive
        for (const auto& x : profile["settings"]) {
            if (!x["rule"].is_null()) {
                EXPECT_TRUE(ids.count(x["rule"])) << x["rule"];
            }
            cited_text +=
                x["reason"].get<std::string>() + "\n" + x["source"].get<std::string>() + "\n";
        }
    }
    for (const char* doc : {"README.md", "docs/tuning.md", "docs/checks.md", "docs/watch.md"})
        cited_text += slurp(std::string(TRAINRIG_SOURCE_DIR) + "/" + doc);
    // "doctor rule x.y", "doctor `x.y`", "(doctor: x.y)", "--only x.y,z.w"
    const std::regex citation(
        R"((doctor rule |doctor `|doctor: |--only )`?([a-z]+\.[a-z0-9-]+(,[a-z]+\.[a-z0-9-]+)*))");
    int seen = 0;
    for (auto it = std::sregex_iterator(cited_text.begin(), cited_text.end(), citation);
         it != std::sregex_iterator(); ++it) {
        const std::string list = (*it)[2];
        for (size_t start = 0; start <= list.size();) {
            const auto end = std::min(list.find(',', start), list.size());
            const auto id = list.substr(start, end - start);
            EXPECT_TRUE(ids.count(id)) << "cited id " << id << " is not a doctor rule";
            ++seen;
            start = end + 1;
        }
    }
    EXPECT_GT(seen, 10);
}

}  // namespace
}  // namespace trainrig::test
