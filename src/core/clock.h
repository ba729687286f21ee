// Clocks for loops that tick: seconds since the epoch for what is recorded, CLOCK_MONOTONIC
// seconds for when to tick next, and a sleep until then that a stop signal cuts short.
#pragma once

#include <atomic>

namespace trainrig {

double epoch_now();
double monotonic_now();
// Sleeps until `until` (monotonic_now() seconds) or a stop signal, whichever is first: a signal
// interrupts clock_nanosleep, which is never restarted.
void sleep_until(double until, const std::atomic<bool>& stop);

}  // namespace trainrig
