// Walks the command table and holds every command that prints a result to the contract of
// docs/cli.md: --json, -o/--output, -v/--verbose, a help footer with an example of itself, and
// one meaning per flag name.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "cli_leaves.h"

namespace trainrig {
namespace {

using test::Leaf;
using test::options_of;

class CliContract : public ::testing::Test {
protected:
    test::CommandTable table_;
    const std::vector<Leaf>& leaves_ = table_.leaves();
};

TEST_F(CliContract, TheTableHasEveryLeaf) {
    std::set<std::string> paths;
    for (const auto& l : leaves_) paths.insert(l.path);
    for (const char* expected : {"trainrig doctor",
                                 "trainrig collect",
                                 "trainrig topo",
                                 "trainrig plan",
                                 "trainrig tune show",
                                 "trainrig tune diff",
                                 "trainrig tune apply",
                                 "trainrig tune rollback",
                                 "trainrig tune status",
                                 "trainrig tune lock",
                                 "trainrig launch",
                                 "trainrig data tokenize",
                                 "trainrig data inspect",
                                 "trainrig data verify",
                                 "trainrig bench list",
                                 "trainrig bench run",
                                 "trainrig watch",
                                 "trainrig watch report",
                                 "trainrig watch replay",
                                 "trainrig train",
                                 "trainrig validate",
                                 "trainrig report",
                                 "trainrig report diff",
                                 "trainrig report verify",
                                 "trainrig fleet judge",
                                 "trainrig slurm healthcheck",
                                 "trainrig npd",
                                 "trainrig maintenance start",
                                 "trainrig maintenance end",
                                 "trainrig maintenance status",
                                 "trainrig stack",
                                 "trainrig stack check"})
        EXPECT_TRUE(paths.count(expected)) << expected;
    EXPECT_EQ(paths.size(), 32u);
}

TEST_F(CliContract, EveryLeafHasJsonOutputAndVerbose) {
    for (const auto& l : leaves_) {
        const auto* json = l.app->get_option_no_throw("--json");
        ASSERT_NE(json, nullptr) << l.path << " has no --json";
        EXPECT_TRUE(json->get_description().starts_with("Write the result as JSON (schema "))
            << l.path << ": --json is not the shared declaration";
        const auto* out = l.app->get_option_no_throw("--output");
        ASSERT_NE(out, nullptr) << l.path << " has no -o/--output";
        EXPECT_EQ(out->get_snames(), std::vector<std::string>{"o"}) << l.path;
        const auto* verbose = l.app->get_option_no_throw("--verbose");
        ASSERT_NE(verbose, nullptr) << l.path << " has no -v/--verbose";
        EXPECT_EQ(verbose->get_snames(), std::vector<std::string>{"v"}) << l.path;
    }
}

TEST_F(CliContract, EveryLeafShowsAnExampleOfItselfInItsHelp) {
    for (const auto& l : leaves_) {
        const std::string footer = l.app->get_footer();
        EXPECT_NE(footer.find("Examples:\n"), std::string::npos) << l.path << " has no examples";
        // "  trainrig tune show" (or "  sudo trainrig tune apply") then a space or the line's end
        bool found = false;
        for (const std::string& line : {"\n  " + l.path, "\n  sudo " + l.path})
            for (auto at = footer.find(line); at != std::string::npos;
                 at = footer.find(line, at + 1)) {
                const char next =
                    at + line.size() < footer.size() ? footer[at + line.size()] : '\n';
                found |= next == ' ' || next == '\n';
            }
        EXPECT_TRUE(found) << l.path << ": no example of `" << l.path << "` in its help";
    }
}

// The same flag name means the same thing everywhere: the contract's flags come from one
// declaration, and --gpus is a selection (a count has its own name, such as plan's --gpu-count).
TEST_F(CliContract, SharedFlagsHaveOneMeaning) {
    std::map<std::string, std::set<std::string>> output_help;
    for (const auto& l : leaves_) {
        for (const auto* opt : options_of(l.app)) {
            const auto& name = opt->get_name();
            if (name == "--gpus") {
                EXPECT_EQ(opt->get_description(), kGpuSelectionHelp) << l.path;
            }
            if (name == "--output" || name == "--format" || name == "--timeout" ||
                name == "--strict" || name == "--root") {
                // The meaning is the head of the text; what follows " (" is this command's detail.
                const auto& d = opt->get_description();
                output_help[name].insert(d.substr(0, std::min<size_t>(d.find(" ("), 26)));
            }
        }
    }
    for (const auto& [name, texts] : output_help)
        EXPECT_EQ(texts.size(), 1u)
            << name << " is declared with " << texts.size() << " different meanings";
}

TEST_F(CliContract, RenamedOptionsSayTheirNewName) {
    struct Case {
        std::vector<std::string> argv;
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"plan", "--model", "llama2-7b", "--gpus", "8"}, "--gpu-count"},
        {{"data", "tokenize", "--input", "/etc/hostname", "--tokenizer", "gpt2", "--output-prefix",
          "t", "--format", "llmc"},
         "--shard-format"},
    };
    for (const auto& c : cases) {
        CLI::App app("t", "trainrig");
        auto commands = make_commands();
        for (auto& cmd : commands) cmd->declare(*app.add_subcommand(cmd->name(), cmd->summary()));
        std::vector<std::string> args(c.argv.rbegin(), c.argv.rend());
        try {
            app.parse(args);
            ADD_FAILURE() << c.argv[0] << ": " << c.says << " was accepted";
        } catch (const CLI::ParseError& e) {
            EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace trainrig
