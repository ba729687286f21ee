// Reads a machine's files through a root prefix, so probes read the live system ("/") or a
// fixture tree in tests with the same code. Paths given to it are absolute paths *inside* the
// machine ("/sys/bus/pci/devices"); messages name them that way too.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainrig {

class RootFs {
public:
    explicit RootFs(std::filesystem::path root = "/");

    const std::filesystem::path& root() const { return root_; }
    bool is_live() const { return live_; }

    // Where a machine path lives on this host's disk.
    std::filesystem::path host_path(std::string_view machine_path) const;

    // Reads a whole file. A file larger than max_bytes is an error, never silently cut (sysfs
    // attributes are a page; mountinfo on a busy Kubernetes node can pass a megabyte). Content
    // is returned as raw bytes; callers sanitize what they keep.
    Result<std::string> read(std::string_view machine_path, size_t max_bytes = 64u << 20) const;
    // Like read(), trimmed of surrounding whitespace.
    Result<std::string> read_trimmed(std::string_view machine_path) const;

    // Sorted names in a directory (no "." or "..").
    Result<std::vector<std::string>> list(std::string_view machine_path) const;
    bool exists(std::string_view machine_path) const;
    bool is_dir(std::string_view machine_path) const;

    // Final path component of a symlink's target (e.g. the driver name behind `driver`).
    Result<std::string> link_name(std::string_view machine_path) const;
    // The machine path a path resolves to, every symlink followed inside the root (absolute
    // targets start again at the root, ".." stops there), as the kernel would in a chroot.
    Result<std::string> resolve(std::string_view machine_path) const;

private:
    // The host path to open for a machine path (symlinks resolved inside the root).
    Result<std::filesystem::path> locate(std::string_view machine_path,
                                         std::string_view verb) const;
    // resolve(), with `verb` ("read", "list") in its error sentence.
    Result<std::string> resolve_as(std::string_view machine_path, std::string_view verb) const;

    std::filesystem::path root_;
    bool live_;
};

}  // namespace trainrig
