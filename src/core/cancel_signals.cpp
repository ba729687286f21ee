#include "core/cancel_signals.h"

namespace trainrig {
namespace {

std::atomic<bool> g_cancel{false};
volatile int g_cancel_int = 0;
volatile sig_atomic_t g_signal = 0;  // the signal that asked, for the exit status
static_assert(std::atomic<bool>::is_always_lock_free, "the flag is set from a signal handler");

extern "C" void on_cancel_signal(int sig) {
    g_cancel.store(true);
    g_cancel_int = 1;
    g_signal = sig;
}

}  // namespace

CancelSignals::CancelSignals() {
    g_cancel = false;
    g_cancel_int = 0;
    struct sigaction sa {};
    sa.sa_handler = on_cancel_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
}

CancelSignals::~CancelSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
}

const std::atomic<bool>& CancelSignals::flag() { return g_cancel; }
const volatile int* CancelSignals::flag_int() { return &g_cancel_int; }

int CancelSignals::received() { return g_signal; }

}  // namespace trainrig
