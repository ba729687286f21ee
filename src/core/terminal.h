// Whether and how to colour output: only on a terminal, never when NO_COLOR is set
// (https://no-color.org), never when the user said --no-color.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace trainrig {

enum class Color { kNone, kGreen, kYellow, kRed, kBlue, kGrey, kBold };

bool color_wanted(std::FILE* stream, bool user_disabled);

// Wraps text in an ANSI colour when enabled is true.
std::string colorize(std::string_view text, Color color, bool enabled);

}  // namespace trainrig
