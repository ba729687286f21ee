// Following the kernel log as it grows, for the GPU events in it: NVIDIA Xid reports, "GPU has
// fallen off the bus", and PCIe AER errors (the scanners in doctor/kmsg_events.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace trainrig::watch {

struct KernelEvent {
    enum class Kind { kXid, kFallenOffBus, kAerCorrected, kAerNonFatal, kAerFatal };
    Kind kind = Kind::kXid;
    uint64_t seq = 0;    // the record's sequence number
    uint64_t usec = 0;   // microseconds since boot
    std::string device;  // the PCI address as the message gives it ("0000:41:00")
    int xid = 0;         // kXid only
    std::string message;
};
const char* kernel_event_kind_name(KernelEvent::Kind k);

// The scanners over one record's message; nothing when it is none of the events above.
bool scan_kernel_event(const std::string& message, KernelEvent& out);

// Reads new records without blocking. Live, from /dev/kmsg (one record per read; EPIPE when the
// ring overwrote records not yet read). Otherwise from a file of saved records, one per line,
// followed as it grows and read again from its start when it is truncated or replaced.
// Records up to `resume_after` (a sequence number, from an earlier run in the same boot) are
// skipped; a jump in sequence numbers counts the records between as lost.
class KmsgFollower {
public:
    static Result<KmsgFollower> open_live();
    static Result<KmsgFollower> open_file(std::string path);
    KmsgFollower(KmsgFollower&& other) noexcept;
    KmsgFollower& operator=(KmsgFollower&&) = delete;
    ~KmsgFollower();

    void resume_after(uint64_t seq) {
        last_seq_ = seq;
        have_seq_ = true;
    }
    // Appends the events among the records that arrived since the last poll.
    Status poll(std::vector<KernelEvent>& out);

    uint64_t last_seq() const { return last_seq_; }
    bool have_seq() const { return have_seq_; }
    uint64_t records() const { return records_; }
    uint64_t lost() const { return lost_; }
    uint64_t malformed() const { return malformed_; }
    const std::string& path() const { return path_; }

private:
    KmsgFollower(int fd, std::string path, bool live)
        : fd_(fd), path_(std::move(path)), live_(live) {}
    void take(std::string_view record, std::vector<KernelEvent>& out);
    Status poll_live(std::vector<KernelEvent>& out);
    Status poll_file(std::vector<KernelEvent>& out);

    int fd_ = -1;
    std::string path_;
    bool live_ = false;
    uint64_t offset_ = 0;  // file: bytes consumed
    uint64_t inode_ = 0;   // file: to notice a replaced file
    std::string partial_;  // file: a record whose line has not ended yet
    uint64_t last_seq_ = 0;
    bool have_seq_ = false;
    uint64_t records_ = 0, lost_ = 0, malformed_ = 0;
};

}  // namespace trainrig::watch
