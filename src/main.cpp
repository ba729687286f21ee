// trainrig's entry point: everything lives behind run_cli() so tests can drive it in-process.
#include <cstdio>
#include <exception>

#include "cli/command.h"
#include "core/cancel_signals.h"

int main(int argc, char** argv) {
    try {
        const int rc = trainrig::run_cli(argc, argv);
        // Stopped by SIGINT/SIGTERM after cleaning up: 128 + N from every command, as the
        // shell reports a killed process (130 on Ctrl-C).
        if (const int sig = trainrig::CancelSignals::received(); sig != 0) return 128 + sig;
        return rc;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trainrig: internal error: %s.\n", e.what());
        return 2;
    }
}
