// How much a benchmark does: the full sweep, --quick's shorter one, or the emulated device's
// (core/emulated_gpu.h), where every code path runs at sizes the host CPU finishes in seconds.
// The emulated sizes prove the code, never the hardware: their timings are not judged.
#pragma once

namespace trainrig::bench {

enum class SweepSize { kFull, kQuick, kEmulated };

// One value per size, chosen in one place so that a benchmark states all three side by side.
template <class T>
T sized(SweepSize s, T full, T quick, T emulated) {
    return s == SweepSize::kEmulated ? emulated : s == SweepSize::kQuick ? quick : full;
}

}  // namespace trainrig::bench
