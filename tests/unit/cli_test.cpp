// The command line's declarations: unique commands, one meaning per environment variable,
// described options, every doctor rule documented in docs/checks.md, and every check id cited
// in a remedy one the parser accepts.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli/command.h"
#include "core/text.h"
#include "doctor/rule.h"
#include "tune/profile.h"

namespace trainrig {
namespace {

TEST(Cli, CommandsAreUniqueAndOptionsDeclaredOnce) {
    CLI::App app("t", "trainrig");
    std::set<std::string> names;
    std::map<std::string, std::string> env_to_option;
    for (auto& c : make_commands()) {
        EXPECT_TRUE(names.insert(c->name()).second) << "duplicate command " << c->name();
        EXPECT_GT(std::string(c->summary()).size(), 10u);
        auto* sub = app.add_subcommand(c->name(), c->summary());
        ASSERT_NO_THROW(c->declare(*sub)) << c->name();
        for (const auto* opt : sub->get_options()) {
            if (opt->get_name() == "--help") continue;
            EXPECT_FALSE(opt->get_description().empty()) << c->name() << " " << opt->get_name();
            const auto& env = opt->get_envname();
            if (env.empty()) continue;
            EXPECT_TRUE(env.rfind("TRAINRIG_", 0) == 0) << env;
            auto [it, fresh] = env_to_option.emplace(env, opt->get_name());
            EXPECT_EQ(it->second, opt->get_name()) << env << " means two different options";
        }
    }
}

TEST(Cli, TheReadmeCountsAndListsEveryCommand) {
    std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/README.md");
    std::stringstream ss;
    ss << in.rdbuf();
    const auto readme = ss.str();
    const auto commands = make_commands();
    const char* words[] = {"zero",     "one",      "two",      "three",   "four",    "five",
                           "six",      "seven",    "eight",    "nine",    "ten",     "eleven",
                           "twelve",   "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
                           "eighteen", "nineteen", "twenty"};
    ASSERT_LT(commands.size(), std::size(words));
    EXPECT_NE(readme.find(std::string(words[commands.size()]) + " commands"), std::string::npos)
        << "README.md does not say \"" << words[commands.size()] << " commands\"";
    for (const auto& c : commands)
        EXPECT_NE(readme.find(std::string("- `trainrig ") + c->name()), std::string::npos)
            << c->name() << " is not listed in README.md";
}

TEST(Cli, EveryRuleIsDocumented) {
    std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/docs/checks.md");
    ASSERT_TRUE(in) << "docs/checks.md is missing";
    std::stringstream ss;
    ss << in.rdbuf();
    const auto doc = ss.str();
    std::set<std::string> ids;
    for (const auto& r : all_rules()) {
        EXPECT_TRUE(ids.insert(r.id).second) << "duplicate rule id " << r.id;
        EXPECT_NE(doc.find("## `" + r.id + "`"), std::string::npos)
            << r.id << " is not in docs/checks.md";
        EXPECT_FALSE(r.refs.empty()) << r.id;
        EXPECT_NE(r.check, nullptr) << r.id;
    }
}

// Every check id a remedy, a help text or a page cites in `doctor --only/--skip ID,...` (or a
// profile in `tune ... --only NAME,...`) is one the command accepts: the lists are collected
// from the sources and pages, split string literals joined, and each id checked as the parser
// checks it (find_rule; tune's profile names).
TEST(Cli, EveryCitedCheckIdExists) {
    namespace fs = std::filesystem;
    const fs::path root = TRAINRIG_SOURCE_DIR;
    std::vector<fs::path> files = {root / "README.md"};
    for (const char* dir : {"src", "docs", "packaging"})
        for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
            const auto ext = e.path().extension();
            if (e.is_regular_file() &&
                (ext == ".cpp" || ext == ".h" || ext == ".cu" || ext == ".md" || ext == ".yml" ||
                 ext == ".yaml" || ext == ".toml"))
                files.push_back(e.path());
        }
    // "`trainrig doctor --only a,"\n  "b`" reads as one list once the literals are joined; a
    // page's line break inside a list is a space.
    const std::regex split_literal("\"\\s*\\n\\s*\""), line_break("\\s*\\n\\s*");
    const std::regex cited(
        R"(trainrig (doctor|tune)\b[^`"\n]*?--(?:only|skip)[ =]([A-Za-z0-9_.,-]+))");
    const auto& profiles = tune::profile_names();
    size_t found = 0;
    for (const auto& f : files) {
        std::ifstream in(f);
        std::stringstream ss;
        ss << in.rdbuf();
        std::string text = std::regex_replace(ss.str(), split_literal, "");
        if (f.extension() != ".cpp" && f.extension() != ".h" && f.extension() != ".cu")
            text = std::regex_replace(text, line_break, " ");
        for (std::sregex_iterator it(text.begin(), text.end(), cited), end; it != end; ++it) {
            const bool doctor = (*it)[1] == "doctor";
            const std::string list = (*it)[2].str();
            for (const auto& id : split(list, ',')) {
                if (id.empty()) continue;
                ++found;
                const std::string word(id);
                if (doctor)
                    EXPECT_NE(find_rule(word), nullptr)
                        << f << " cites `doctor --only " << word << "`, which is no check id";
                else
                    EXPECT_NE(std::find(profiles.begin(), profiles.end(), word), profiles.end())
                        << f << " cites `tune --only " << word << "`, which is no profile";
            }
        }
    }
    EXPECT_GE(found, 20u) << "the scan found too few citations to be looking in the right places";
}

}  // namespace
}  // namespace trainrig
