// Reading one sysfs/procfs value into a Fact: missing file -> absent, unreadable or garbled ->
// failed with a sentence naming the file and what was wrong with it.
#pragma once

#include <string>

#include "core/root_fs.h"
#include "snapshot/fact.h"

namespace trainrig {

Fact<std::string> read_string_fact(const RootFs& fs, const std::string& path);
Fact<int64_t> read_i64_fact(const RootFs& fs, const std::string& path);
Fact<uint64_t> read_u64_fact(const RootFs& fs, const std::string& path);
Fact<uint64_t> read_hex_fact(const RootFs& fs, const std::string& path);

// Applies a parser to a file's content; parser failures are prefixed with the path.
template <class T, class Parser>
Fact<T> read_parsed_fact(const RootFs& fs, const std::string& path, Parser&& parse) {
    auto text = fs.read(path);
    if (!text) return Fact<T>::from(text.status());
    Result<T> r = parse(*text);
    if (r.ok()) return Fact<T>::known(std::move(r).value());
    if (r.status().code() == Errc::kNotFound) return Fact<T>::absent();
    return Fact<T>::failed(Status{r.status().code(), path + ": " + r.status().message()});
}

}  // namespace trainrig
