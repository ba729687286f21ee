// SHA-256 of a byte string, as lowercase hex (OpenSSL's libcrypto: the digest sha256sum(1)
// computes, so a report's SHA256SUMS also checks with `sha256sum -c`).
#pragma once

#include <string>
#include <string_view>

namespace trainrig {

std::string sha256_hex(std::string_view bytes);

}  // namespace trainrig
