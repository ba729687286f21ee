// The trainrig command line: global flags, the subcommands from make_commands(), `help
// <command>...`, each command's check() then run(), and the mapping of parse errors to exit code
// 2 with one sentence on stderr naming the command line that was parsed.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/command.h"
#include "core/version.h"
#include "nvml/nvml_library.h"

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

// The command line as far as it was parsed: "tune show" (empty for trainrig itself), and the
// app of its last word. Option groups have no name and are not words.
std::pair<std::string, CLI::App*> parsed_leaf(CLI::App& app) {
    std::string path;
    CLI::App* at = &app;
    for (bool deeper = true; deeper;) {
        deeper = false;
        for (auto* sub : at->get_subcommands())
            if (!sub->get_name().empty()) {
                path += (path.empty() ? "" : " ") + sub->get_name();
                at = sub;
                deeper = true;
                break;
            }
    }
    return {path, at};
}

// `help tune show`: the app those words name, or nullptr.
CLI::App* find_words(CLI::App& app, const std::vector<std::string>& words) {
    CLI::App* at = &app;
    for (const auto& w : words) {
        CLI::App* next = nullptr;
        for (auto* sub : at->get_subcommands([](CLI::App*) { return true; }))
            if (!sub->get_name().empty() && sub->get_name() == w && w != "help") next = sub;
        if (next == nullptr) return nullptr;
        at = next;
    }
    return at;
}

// A flag typed before the command that trainrig itself does not take (`trainrig -v doctor`):
// CLI11 would let the command refuse it, which blames the command for the user's word order.
std::string misplaced_option(const std::vector<std::string>& args, CLI::App& app) {
    auto is_command = [&](const std::string& word) {
        for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
            if (!sub->get_name().empty() && sub->get_name() == word) return true;
        return false;
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--" || !a.starts_with("-")) return "";  // the command comes first
        const std::string name = a.substr(0, a.find('='));
        if (name == "--no-color" || name == "--version" || name == "-h" || name == "--help" ||
            name == "--help-all")
            continue;
        // Only when a command follows: alone, CLI11's own message is the right one.
        for (size_t j = i + 1; j < args.size(); ++j)
            if (is_command(args[j]))
                return fmt::format(
                    "trainrig: {} is not an option of trainrig itself; give it after the "
                    "command, as in `trainrig {} {}` (see `trainrig {} --help`).\n",
                    name, args[j], a, args[j]);
        return "";
    }
    return "";
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
    std::vector<std::string> help_words;
    auto* help = app.add_subcommand("help", "Show help for trainrig or one of its commands");
    help->add_option("command", help_words, "The command to explain: `help tune show`")
        ->type_name("COMMAND...");
    app.require_subcommand(0, 1);

    if (const std::string misplaced = misplaced_option(global.args, app); !misplaced.empty()) {
        std::fputs(misplaced.c_str(), stderr);
        return 2;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::fputs(app.help().c_str(), stdout);  // the parsed subcommand's, when there is one
        return 0;
    } catch (const CLI::CallForAllHelp&) {
        std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
        return 0;
    } catch (const CLI::ParseError& e) {
        const std::string path = parsed_leaf(app).first;
        const std::string where = path.empty() ? "trainrig" : "trainrig " + path;
        std::fprintf(stderr, "%s: %s (see `%s --help`).\n", where.c_str(),
                     first_sentence(e.what()).c_str(), where.c_str());
        return 2;
    }

    if (show_version) {
        std::fputs(version_text().c_str(), stdout);
        return 0;
    }
    if (help->parsed()) {
        CLI::App* target = find_words(app, help_words);
        if (target == nullptr) {
            std::string words;
            for (const auto& w : help_words) words += (words.empty() ? "" : " ") + w;
            std::fprintf(stderr, "trainrig: no command named '%s' (see `trainrig --help`).\n",
                         words.c_str());
            return 2;
        }
        std::string parent = "trainrig";
        for (size_t i = 0; i + 1 < help_words.size(); ++i) parent += " " + help_words[i];
        std::fputs((target == &app ? app.help() : target->help(parent)).c_str(), stdout);
        return 0;
    }
    // TRAINRIG_PARSE_ONLY=1: check a command line (every option and value, the files it names)
    // and run nothing, for scripts that validate a long job's flags before it is queued
    // (docs/cli.md). Any other value than 1 or 0 is a mistake, not a real run.
    bool parse_only = false;
    if (const char* p = std::getenv("TRAINRIG_PARSE_ONLY"); p != nullptr && *p != '\0') {
        const std::string v = p;
        if (v != "0" && v != "1") {
            std::fprintf(stderr,
                         "trainrig: TRAINRIG_PARSE_ONLY=%s: give 1 to check the command line "
                         "without running it, or 0 (or nothing) to run it.\n",
                         v.c_str());
            return 2;
        }
        parse_only = v == "1";
    }
    for (auto& [sub, c] : subs) {
        if (!sub->parsed()) continue;
        global.command = parsed_leaf(app).first;
        // The NVML the run would load: a path the user named must exist, and the fake library
        // answers only with its fixture.
        if (Status s = nvml::check_library_environment(); !s.ok()) {
            std::fprintf(stderr, "trainrig %s: %s%s%s.\n", global.command.c_str(),
                         s.message().c_str(), s.next_step().empty() ? "" : "; ",
                         s.next_step().c_str());
            return 2;
        }
        if (const int rc = c->check(global); rc != 0) return rc;
        return parse_only ? 0 : c->run(global);
    }

    std::fputs(app.help().c_str(), stderr);
    std::fputs("trainrig: no command given.\n", stderr);
    return 2;
}

}  // namespace trainrig
