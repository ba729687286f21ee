#include "watch/kernel_events.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "doctor/kmsg_events.h"
#include "probe/parsers.h"

namespace trainrig::watch {

const char* kernel_event_kind_name(KernelEvent::Kind k) {
    switch (k) {
        case KernelEvent::Kind::kXid:
            return "xid";
        case KernelEvent::Kind::kFallenOffBus:
            return "fallen_off_bus";
        case KernelEvent::Kind::kAerCorrected:
            return "aer_corrected";
        case KernelEvent::Kind::kAerNonFatal:
            return "aer_nonfatal";
        case KernelEvent::Kind::kAerFatal:
            return "aer_fatal";
    }
    return "unknown";
}

bool scan_kernel_event(const std::string& message, KernelEvent& out) {
    if (auto x = parse_xid(message)) {
        out.kind = KernelEvent::Kind::kXid;
        out.device = x->gpu;
        out.xid = x->code;
    } else if (auto bus = parse_fallen_off_bus(message)) {
        out.kind = KernelEvent::Kind::kFallenOffBus;
        out.device = *bus;
    } else if (auto aer = parse_aer(message)) {
        out.kind = aer->severity == AerSeverity::kCorrected  ? KernelEvent::Kind::kAerCorrected
                   : aer->severity == AerSeverity::kNonFatal ? KernelEvent::Kind::kAerNonFatal
                                                             : KernelEvent::Kind::kAerFatal;
        out.device = aer->device;
    } else {
        return false;
    }
    out.message = message;
    return true;
}

Result<KmsgFollower> KmsgFollower::open_live() {
    const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        Status s = errno_status(errno, "read", "/dev/kmsg");
        if (s.code() == Errc::kPermission)
            return Status{Errc::kPermission, s.message(),
                          "give the watch user CAP_SYSLOG (AmbientCapabilities=CAP_SYSLOG in the "
                          "unit) or set kernel.dmesg_restrict=0"};
        return s;
    }
    return KmsgFollower(fd, "/dev/kmsg", true);
}

Result<KmsgFollower> KmsgFollower::open_file(std::string path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "read", path);
    KmsgFollower f(fd, std::move(path), false);
    struct stat st {};
    if (::fstat(fd, &st) == 0) f.inode_ = st.st_ino;
    return f;
}

KmsgFollower::KmsgFollower(KmsgFollower&& o) noexcept
    : fd_(o.fd_),
      path_(std::move(o.path_)),
      live_(o.live_),
      offset_(o.offset_),
      inode_(o.inode_),
      partial_(std::move(o.partial_)),
      last_seq_(o.last_seq_),
      have_seq_(o.have_seq_),
      records_(o.records_),
      lost_(o.lost_),
      malformed_(o.malformed_) {
    o.fd_ = -1;
}

KmsgFollower::~KmsgFollower() {
    if (fd_ >= 0) ::close(fd_);
}

void KmsgFollower::take(std::string_view text, std::vector<KernelEvent>& out) {
    auto r = parse_kmsg_record(text);
    if (!r) {
        ++malformed_;
        return;
    }
    const KmsgRecord& rec = *r;
    if (have_seq_ && rec.seq <= last_seq_) return;  // read before (resume, or a re-read file)
    if (have_seq_ && rec.seq > last_seq_ + 1) lost_ += rec.seq - last_seq_ - 1;
    last_seq_ = rec.seq;
    have_seq_ = true;
    ++records_;
    KernelEvent e;
    if (!scan_kernel_event(rec.message, e)) return;
    e.seq = rec.seq;
    e.usec = rec.usec;
    out.push_back(std::move(e));
}

Status KmsgFollower::poll(std::vector<KernelEvent>& out) {
    return live_ ? poll_live(out) : poll_file(out);
}

Status KmsgFollower::poll_live(std::vector<KernelEvent>& out) {
    char buf[16384];  // a record is at most ~8 KiB (CONSOLE_EXT_LOG_MAX)
    for (int records = 0; records < 100000; ++records) {  // bounded: a storm must not starve
        const ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n > 0) {
            take(std::string_view(buf, static_cast<size_t>(n)), out);
            continue;
        }
        if (n == 0 || errno == EAGAIN) return Status{};
        if (errno == EINTR) continue;
        // The ring overwrote records we had not read; the next read resumes at the oldest one
        // left, and the jump in sequence numbers counts what was lost.
        if (errno == EPIPE) continue;
        return errno_status(errno, "read", path_);
    }
    return Status{};
}

Status KmsgFollower::poll_file(std::vector<KernelEvent>& out) {
    struct stat now {};
    if (::stat(path_.c_str(), &now) == 0 && static_cast<uint64_t>(now.st_ino) != inode_) {
        // Replaced (rotated): follow the new file from its start.
        const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            ::close(fd_);
            fd_ = fd;
            inode_ = now.st_ino;
            offset_ = 0;
            partial_.clear();
        }
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return errno_status(errno, "read", path_);
    if (static_cast<uint64_t>(st.st_size) < offset_) {  // truncated: read it again from the top
        offset_ = 0;
        partial_.clear();
    }
    std::string chunk = std::move(partial_);
    partial_.clear();
    char buf[65536];
    while (true) {
        const ssize_t n = ::pread(fd_, buf, sizeof buf, static_cast<off_t>(offset_));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_status(errno, "read", path_);
        if (n == 0) break;
        offset_ += static_cast<uint64_t>(n);
        chunk.append(buf, static_cast<size_t>(n));
        if (chunk.size() > (64u << 20)) break;  // the rest on the next poll
    }
    // Only whole lines; what follows the last newline waits for the rest of its line.
    const size_t end = chunk.rfind('\n');
    if (end == std::string::npos) {
        partial_ = std::move(chunk);
        return Status{};
    }
    partial_ = chunk.substr(end + 1);
    std::string_view whole(chunk.data(), end + 1);
    // A record's continuation lines (" KEY=VALUE") start with a space; they carry nothing.
    size_t pos = 0;
    while (pos < whole.size()) {
        const size_t nl = whole.find('\n', pos);
        const std::string_view line = whole.substr(pos, nl - pos);
        if (!line.empty() && line.front() != ' ') take(line, out);
        pos = nl + 1;
    }
    return Status{};
}

}  // namespace trainrig::watch
