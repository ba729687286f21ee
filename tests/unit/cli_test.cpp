// The command line's declarations: unique commands, one meaning per environment variable,
// described options, and every doctor rule documented in docs/checks.md.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli/command.h"
#include "doctor/rule.h"

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
    const char* words[] = {"zero",  "one",   "two",  "three", "four",   "five",   "six",
                           "seven", "eight", "nine", "ten",   "eleven", "twelve", "thirteen",
                           "fourteen", "fifteen", "sixteen"};
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

}  // namespace
}  // namespace trainrig
