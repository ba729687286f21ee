// A large output file written in pieces and published only when complete: data goes to a
// temporary file beside the target (O_EXCL, this process's pid in the name); commit() fsyncs it,
// renames it over the target and fsyncs the folder; destruction without commit removes it. A
// crash at any point leaves the target as it was (and, after SIGKILL, a stale *.tmp-PID file).
// For content small enough to hold in memory, write_file_atomic (atomic_file.h) is simpler.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trainrig {

class StagedFile {
public:
    StagedFile() = default;
    ~StagedFile();
    StagedFile(StagedFile&& other) noexcept;
    StagedFile& operator=(StagedFile&& other) noexcept;
    StagedFile(const StagedFile&) = delete;
    StagedFile& operator=(const StagedFile&) = delete;

    static Result<StagedFile> create(std::string target, unsigned mode = 0644);

    // Buffered; errors (ENOSPC, EFBIG) surface here or at flush/commit, naming the target.
    Status write(std::string_view bytes);
    Status flush();
    // Overwrites bytes already written (after flush), e.g. a header whose counts are known last.
    Status write_at(size_t offset, std::string_view bytes);
    // Bytes written so far.
    size_t size() const { return written_; }
    const std::string& target() const { return target_; }
    const std::string& temp_path() const { return temp_; }

    // fsync, close, rename over the target. Call fsync_parent afterwards (once per folder).
    Status commit();
    // commit() in two steps, so a set of files can all be made durable before any is renamed:
    // prepare() flushes, fsyncs and closes (frees the buffer; no more writes); publish() renames.
    Status prepare();
    Status publish();
    // Removes the temporary file (also done by the destructor when not committed).
    void abandon();

private:
    std::string target_;
    std::string temp_;
    int fd_ = -1;
    std::string buffer_;
    size_t written_ = 0;
};

// fsync of the folder holding `path`, so renames into it survive a crash.
Status fsync_parent(const std::string& path);

}  // namespace trainrig
