// Quantities for people, one way in every command (docs/cli.md, "Units"): three significant
// figures, an engineering prefix that keeps the figure between 1 and 999, never an exponent.
// JSON keeps SI units and plain numbers; these are for text, Markdown and HTML only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trainrig {

// A measurement in its record unit (bench, validate, report diff, fleet): "bytes" as IEC
// (81.5 MiB), "bytes/s" decimal (21.3 GB/s, 4.01 TB/s), "FLOP/s" (4.29 GFLOP/s, 771 TFLOP/s),
// "s" as a duration, "fraction" as a percentage, "J" as energy, and any other unit with the
// prefix on the figure (254k IO/s, 2.08M tokens/s, 41.3 batches/s).
std::string format_quantity(double value, std::string_view unit);

std::string format_bytes(double bytes);            // 512 B, 81.5 MiB, 2.16 GiB, 1.05 TiB
std::string format_rate(double bytes_per_second);  // 40.0 MB/s, 21.3 GB/s, 4.01 TB/s
std::string format_flops(double flop_per_second);  // 4.29 GFLOP/s, 771 TFLOP/s
// 850 ns, 61.1 ms, 20.0 s, 3.20 min, 4.10 h, 12.5 d, 3.40 years; past 1000 years, "more than
// 1000 years" (a typo in an exponent, never a figure to read).
std::string format_duration(double seconds);
std::string format_energy(double joules);  // 1.67 Wh, 120 kWh, 3.40 MWh
std::string format_count(double n);        // 1,111,241 (rounded to a whole number)
// A figure with a decimal prefix on it and its unit after: 254k IO/s, 2.08M tokens/s, 13.0B.
std::string format_scaled(double value, std::string_view unit = {});
// "1 worker", "2 workers": the count, and the word in the singular only for exactly one.
std::string plural(uint64_t n, std::string_view word);

// Three significant figures, decided on the rounded value (99.96 is "100"): 2.08, 41.3, 254.
std::string sig3(double v);

}  // namespace trainrig
