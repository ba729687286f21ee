// trainrig's entry point: everything lives behind run_cli() so tests can drive it in-process.
#include <cstdio>
#include <exception>

#include "cli/command.h"

int main(int argc, char** argv) {
    try {
        return trainrig::run_cli(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trainrig: internal error: %s.\n", e.what());
        return 2;
    }
}
