#include "validate/report_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <set>

#include "core/sha256.h"
#include "core/text.h"
#include "core/user_file.h"
#include "core/utc_time.h"

namespace trainrig::validate {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSums = "SHA256SUMS";

Status write_synced(const fs::path& path, std::string_view content) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return errno_status(errno, "create", path.string());
    for (size_t done = 0; done < content.size();) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return errno_status(err, "write", path.string());
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        return errno_status(err, "flush", path.string());
    }
    if (::close(fd) != 0) return errno_status(errno, "close", path.string());
    return ok_status();
}

Status sync_dir(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "open", dir.string());
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    return rc == 0 ? ok_status() : errno_status(err, "flush", dir.string());
}

Status fill(const fs::path& tmp, const std::map<std::string, std::string>& files) {
    std::set<fs::path> dirs = {tmp};
    std::string sums;
    for (const auto& [name, content] : files) {
        const fs::path path = tmp / name;
        std::error_code ec;
        fs::create_directories(path.parent_path(), ec);
        if (ec)
            return {Errc::kIo,
                    fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message())};
        dirs.insert(path.parent_path());
        TRAINRIG_TRY(write_synced(path, content));
        sums += fmt::format("{}  {}\n", sha256_hex(content), name);
    }
    TRAINRIG_TRY(write_synced(tmp / kSums, sums));
    for (const auto& d : dirs) TRAINRIG_TRY(sync_dir(d));
    return ok_status();
}

}  // namespace

Status write_report_dir(const fs::path& dir, const std::map<std::string, std::string>& files) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(dir, ec)))
        return {Errc::kInvalidInput,
                fmt::format("the report directory {} exists already; nothing was written",
                            dir.string()),
                "give another --report, or move the old report away"};
    const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
    const fs::path tmp =
        parent / fmt::format(".{}.tmp-{}", dir.filename().string(), static_cast<long>(::getpid()));
    fs::remove_all(tmp, ec);
    if (!fs::create_directory(tmp, ec))
        return {Errc::kIo,
                fmt::format("cannot create {}: {}", tmp.string(), ec ? ec.message() : "it exists")};
    Status s = fill(tmp, files);
    if (s.ok() && ::rename(tmp.c_str(), dir.c_str()) != 0)
        s = errno_status(errno, "rename the report to", dir.string());
    if (s.ok()) s = sync_dir(parent);
    if (!s.ok()) {
        fs::remove_all(tmp, ec);
        return {s.code(), s.message() + "; no report was written"};
    }
    return ok_status();
}

Result<VerifyResult> verify_report_dir(const fs::path& dir) {
    auto sums = read_user_file((dir / kSums).string(), "the report");
    if (!sums.ok()) return sums.status();
    VerifyResult out;
    std::set<std::string> listed = {kSums};
    size_t line_no = 0;
    for (const std::string_view view : split(*sums, '\n')) {
        ++line_no;
        const std::string line(view);
        if (line.empty()) continue;
        // sha256sum(1): 64 hex digits, two spaces (or space and '*'), the path.
        if (line.size() < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*'))
            return Status{Errc::kInvalidInput, fmt::format("{} line {}: not \"<sha256>  <path>\"",
                                                           (dir / kSums).string(), line_no)};
        const std::string want = line.substr(0, 64), name = line.substr(66);
        listed.insert(name);
        const fs::path path = dir / name;
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) {
            out.missing.push_back(name);
            continue;
        }
        auto content = read_user_file(path.string(), "the report", size_t{1} << 34);
        if (!content.ok()) return content.status();
        (sha256_hex(*content) == want ? out.ok : out.changed).push_back(name);
    }
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file()) continue;
        const std::string name = fs::relative(it->path(), dir).string();
        if (!listed.count(name)) out.unlisted.push_back(name);
    }
    if (ec) return Status{Errc::kIo, fmt::format("cannot list {}: {}", dir.string(), ec.message())};
    return out;
}

std::string fresh_dir_name(const std::string& prefix) {
    const std::string base = fmt::format("{}-{}", prefix, utc_iso8601(std::time(nullptr), true));
    std::string dir = base;
    std::error_code ec;
    for (int n = 2; std::filesystem::exists(std::filesystem::symlink_status(dir, ec)); ++n)
        dir = fmt::format("{}-{}", base, n);
    return dir;
}

}  // namespace trainrig::validate
