// Little-endian fields of the shard formats (x86 and Arm hosts are little-endian; memcpy keeps
// unaligned reads defined).
#pragma once

#include <cstring>
#include <string>

namespace trainrig::data {

template <class T>
T load_le(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

template <class T>
void append_le(std::string& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}

}  // namespace trainrig::data
