#include "health/budget_alarm.h"

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

namespace trainrig::health {

namespace {

// Read by the signal handler: static strings only, so the handler needs nothing but write().
volatile const char* g_command = "";
volatile const char* g_phase = "starting";
volatile unsigned g_seconds = 0;

void write_str(const char* s) {
    const ssize_t ignored = ::write(STDERR_FILENO, s, std::strlen(s));
    (void)ignored;
}

extern "C" void on_alarm(int) {
    char secs[16];
    char* p = secs + sizeof secs;
    *--p = '\0';
    unsigned n = g_seconds;
    do *--p = static_cast<char>('0' + n % 10);
    while ((n /= 10) != 0);
    write_str("trainrig ");
    write_str(const_cast<const char*>(g_command));
    write_str(": the ");
    write_str(p);
    write_str(" s budget ran out while ");
    write_str(const_cast<const char*>(g_phase));
    write_str("; nothing was changed (unknown).\n");
    _exit(2);
}

}  // namespace

BudgetAlarm::BudgetAlarm(double seconds, const char* command)
    : per_call_(static_cast<long>(seconds * 250)) {
    g_command = command;
    g_seconds = static_cast<unsigned>(std::ceil(seconds));
    struct sigaction sa {};
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, nullptr);
    alarm(g_seconds);
}

BudgetAlarm::~BudgetAlarm() {
    alarm(0);
    signal(SIGALRM, SIG_DFL);
}

void BudgetAlarm::phase(const char* what) { g_phase = what; }

}  // namespace trainrig::health
