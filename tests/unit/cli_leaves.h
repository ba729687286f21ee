// The command table as the contract tests walk it: every leaf (a command line that runs) with its
// CLI11 app, and a leaf's options, those in its option groups included.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"

namespace trainrig::test {

struct Leaf {
    std::string path;  // "trainrig tune show"
    CLI::App* app;
};

// A leaf is an app that does not require a further subcommand.
inline void collect_leaves(CLI::App* app, const std::string& path, std::vector<Leaf>& out) {
    if (app->get_require_subcommand_min() == 0) out.push_back({path, app});
    for (auto* sub : app->get_subcommands([](CLI::App*) { return true; }))
        if (!sub->get_name().empty())  // option groups have no name
            collect_leaves(sub, path + " " + sub->get_name(), out);
}

inline std::vector<const CLI::Option*> options_of(CLI::App* app) {
    std::vector<const CLI::Option*> out;
    for (const auto* o : app->get_options()) out.push_back(o);
    for (auto* sub : app->get_subcommands([](CLI::App*) { return true; }))
        if (sub->get_name().empty())
            for (const auto* o : sub->get_options()) out.push_back(o);
    return out;
}

// Every command declared on one root, and its leaves.
class CommandTable {
public:
    CommandTable() {
        commands_ = make_commands();
        for (auto& c : commands_) {
            auto* sub = root_.add_subcommand(c->name(), c->summary());
            c->declare(*sub);
            collect_leaves(sub, std::string("trainrig ") + c->name(), leaves_);
        }
    }
    const std::vector<Leaf>& leaves() const { return leaves_; }

private:
    CLI::App root_{"t", "trainrig"};
    std::vector<std::unique_ptr<Command>> commands_;
    std::vector<Leaf> leaves_;
};

}  // namespace trainrig::test
