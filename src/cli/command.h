// The Command interface. Each subcommand declares its options once, on its own CLI11 app; help
// text is generated from those declarations.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace trainrig {

struct GlobalOptions {
    bool no_color = false;
    std::vector<std::string> args;  // argv after the program name, as typed
    std::string command;            // the words of the command parsed: "doctor", "tune show"

    // Whether an option was typed on the command line (not taken from its environment twin).
    bool typed(std::string_view option) const {
        for (const auto& a : args)
            if (a == option ||
                (a.starts_with(option) && a.size() > option.size() && a[option.size()] == '='))
                return true;
        return false;
    }
};

class Command {
public:
    virtual ~Command() = default;
    virtual const char* name() const = 0;
    virtual const char* summary() const = 0;
    // Declares options and help footer on the command's CLI11 app. Called once.
    virtual void declare(CLI::App& app) = 0;
    // After a successful parse: checks what the parser cannot (names, combinations, the files
    // the user named exist and read as what they should be), as run() would, without reading
    // the machine or writing anything; 0, or the exit code after one sentence on stderr. It is
    // all TRAINRIG_PARSE_ONLY=1 runs (docs/cli.md), so a line it passes fails a run only on
    // what the machine says. What it loads, run() may use.
    virtual int check(const GlobalOptions&) { return 0; }
    // Runs after check(); returns the process exit code (0, 1 or 2).
    virtual int run(const GlobalOptions& global) = 0;
};

// The one explicit command list, in help order (commands.cpp).
std::vector<std::unique_ptr<Command>> make_commands();

// Parses argv, dispatches, and returns the exit code; prints errors as one sentence on stderr.
int run_cli(int argc, const char* const* argv);

}  // namespace trainrig
