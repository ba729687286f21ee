// Colour decision and ANSI wrapping; see terminal.h.
#include "core/terminal.h"

#include <unistd.h>

#include <cstdlib>

namespace trainrig {

bool color_wanted(std::FILE* stream, bool user_disabled) {
    if (user_disabled) return false;
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color && *no_color) return false;
    const char* term = std::getenv("TERM");
    if (term && std::string_view(term) == "dumb") return false;
    return ::isatty(::fileno(stream)) == 1;
}

std::string colorize(std::string_view text, Color color, bool enabled) {
    if (!enabled || color == Color::kNone) return std::string(text);
    const char* code = "";
    switch (color) {
        case Color::kGreen:
            code = "\x1b[32m";
            break;
        case Color::kYellow:
            code = "\x1b[33m";
            break;
        case Color::kRed:
            code = "\x1b[31m";
            break;
        case Color::kBlue:
            code = "\x1b[34m";
            break;
        case Color::kGrey:
            code = "\x1b[90m";
            break;
        case Color::kBold:
            code = "\x1b[1m";
            break;
        case Color::kNone:
            break;
    }
    return std::string(code) + std::string(text) + "\x1b[0m";
}

}  // namespace trainrig
