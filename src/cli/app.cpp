// The trainrig command line: global flags, the subcommands from make_commands(), `help
// <command>`, and the mapping of parse errors to exit code 2 with one sentence on stderr.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/command.h"
#include "core/version.h"

namespace trainrig {

namespace {

std::string version_text() {
    return fmt::format("trainrig {} (git {}, {})\n", kTrainrigVersion, kTrainrigGitRevision,
                       kTrainrigWithCuda ? fmt::format("CUDA toolkit {}", kTrainrigCudaVersion)
                                         : std::string("built without CUDA"));
}

// CLI11's messages end without a period and sometimes carry a second sentence; keep the first.
std::string first_sentence(std::string msg) {
    auto cut = msg.find(" Run with --help");
    if (cut != std::string::npos) msg.resize(cut);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return msg;
}

}  // namespace

int run_cli(int argc, const char* const* argv) {
    CLI::App app(
        "trainrig turns a GPU server into a validated, tuned, ready-to-train machine.\n"
        "Exit codes: 0 healthy (warnings allowed), 1 a check failed, 2 could not run, 128+N "
        "stopped by signal N after cleaning up (130 on Ctrl-C).",
        "trainrig");
    GlobalOptions global;
    global.args.assign(argv + (argc > 0 ? 1 : 0), argv + argc);
    bool show_version = false;
    app.add_flag("--version", show_version, "Print the version and exit");
    app.add_flag(
        "--no-color", global.no_color,
        "Never colour output (colour is used only on a terminal, and never when NO_COLOR is set)");

    app.fallthrough();  // global flags such as --no-color are accepted after the command too
    auto commands = make_commands();
    std::vector<std::pair<CLI::App*, Command*>> subs;
    for (auto& c : commands) {
        auto* sub = app.add_subcommand(c->name(), c->summary());
        c->declare(*sub);
        subs.emplace_back(sub, c.get());
    }
    std::string help_topic;
    auto* help = app.add_subcommand("help", "Show help for trainrig or one of its commands");
    help->add_option("command", help_topic, "The command to explain")->type_name("COMMAND");
    app.require_subcommand(0, 1);

    CLI::App* active = &app;
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        for (auto& [sub, c] : subs)
            if (sub->parsed()) active = sub;
        std::fputs((active == &app ? app.help() : active->help("trainrig")).c_str(), stdout);
        return 0;
    } catch (const CLI::CallForAllHelp&) {
        std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
        return 0;
    } catch (const CLI::ParseError& e) {
        std::string where = "trainrig";
        for (auto& [sub, c] : subs)
            if (sub->parsed()) where = std::string("trainrig ") + c->name();
        std::fprintf(stderr, "%s: %s (see `%s --help`).\n", where.c_str(),
                     first_sentence(e.what()).c_str(), where.c_str());
        return 2;
    }

    if (show_version) {
        std::fputs(version_text().c_str(), stdout);
        return 0;
    }
    if (help->parsed()) {
        if (help_topic.empty()) {
            std::fputs(app.help().c_str(), stdout);
            return 0;
        }
        for (auto& [sub, c] : subs)
            if (help_topic == c->name()) {
                std::fputs(sub->help("trainrig").c_str(), stdout);
                return 0;
            }
        std::fprintf(stderr, "trainrig: no command named '%s' (see `trainrig --help`).\n",
                     help_topic.c_str());
        return 2;
    }
    // TRAINRIG_PARSE_ONLY=1: check a command line (every option and value) and run nothing,
    // for scripts that validate a long job's flags before it is queued (docs/cli.md).
    if (const char* p = std::getenv("TRAINRIG_PARSE_ONLY"); p != nullptr && std::string(p) == "1")
        return 0;
    for (auto& [sub, c] : subs)
        if (sub->parsed()) return c->run(global);

    std::fputs(app.help().c_str(), stderr);
    std::fputs("trainrig: no command given.\n", stderr);
    return 2;
}

}  // namespace trainrig
