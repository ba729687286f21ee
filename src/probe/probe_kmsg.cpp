// Probe of the kernel log. Live: /dev/kmsg read without blocking, one record per read(2), until
// EAGAIN. Under --root: the saved log, same record format, one record per line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/text.h"
#include "probe/parsers.h"
#include "probe/probes.h"

namespace trainrig {

bool kmsg_relevant(std::string_view m) {
    return contains(m, "NVRM") || contains(m, "nvidia") || contains(m, "AER") ||
           contains(m, "fallen off the bus") ||
           (contains(m, "BAR") && (contains(m, "no space") || contains(m, "failed")));
}

namespace {

void keep(KernelLog& log, KmsgRecord r) {
    ++log.records_read;
    if (kmsg_relevant(r.message)) log.records.push_back(std::move(r));
}

Fact<KernelLog> read_device(int fd) {
    KernelLog log;
    std::string buf(16384, '\0');  // a record is at most ~8 KiB (CONSOLE_EXT_LOG_MAX)
    while (true) {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EPIPE) {  // the ring overwrote records we had not read yet
                ++log.records_lost;
                continue;
            }
            if (errno == EAGAIN) break;
            int err = errno;
            ::close(fd);
            return Fact<KernelLog>::failed(errno_status(err, "read", "/dev/kmsg"));
        }
        if (n == 0) break;
        auto r = parse_kmsg_record(std::string_view(buf.data(), static_cast<size_t>(n)));
        if (r.ok())
            keep(log, std::move(r).value());
        else
            ++log.malformed;
    }
    ::close(fd);
    return Fact<KernelLog>::known(std::move(log));
}

}  // namespace

Fact<KernelLog> probe_kernel_log(const RootFs& fs) {
    if (!fs.is_live()) {
        // A tree's /dev/kmsg is a saved log: read it through the tree like every other file,
        // so a link in the tree cannot lead to this host's kernel log.
        auto text = fs.read("/dev/kmsg", 256u << 20);
        if (!text) return Fact<KernelLog>::from(text.status());
        KernelLog log;
        log.malformed = for_each_kmsg_record(*text, [&](KmsgRecord r) { keep(log, std::move(r)); });
        return Fact<KernelLog>::known(std::move(log));
    }
    int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return Fact<KernelLog>::absent();
        auto s = errno_status(errno, "read", "/dev/kmsg");
        if (s.code() == Errc::kPermission) {
            auto restrict = fs.read_trimmed("/proc/sys/kernel/dmesg_restrict");
            bool on = restrict.ok() && * restrict == "1";
            s = Status{Errc::kPermission, s.message() + (on ? " (kernel.dmesg_restrict is 1)" : ""),
                       "run as root or with CAP_SYSLOG to read the kernel log"};
        }
        return Fact<KernelLog>::failed(s);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
        ::close(fd);
        return Fact<KernelLog>::failed(
            {Errc::kInvalidInput, "/dev/kmsg is not a character device"});
    }
    return read_device(fd);
}

}  // namespace trainrig
