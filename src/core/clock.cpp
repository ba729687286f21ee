#include "core/clock.h"

#include <time.h>

#include <cerrno>
#include <chrono>
#include <cmath>

namespace trainrig {

double epoch_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

double monotonic_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void sleep_until(double until, const std::atomic<bool>& stop) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(until);
    ts.tv_nsec = static_cast<long>((until - std::floor(until)) * 1e9);
    while (!stop.load() && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

}  // namespace trainrig
