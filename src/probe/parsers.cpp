// Kernel text-format parsers; see parsers.h.
#include "probe/parsers.h"

#include <fmt/format.h>

#include "core/text.h"

namespace trainrig {

namespace {
Status bad(std::string what) { return {Errc::kInvalidInput, std::move(what)}; }

// mountinfo escapes space, tab, newline and backslash as octal (\040).
std::string unescape_octal(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            auto d = s.substr(i + 1, 3);
            if (d.size() == 3 && d[0] >= '0' && d[0] <= '3' && d[1] >= '0' && d[1] <= '7' &&
                d[2] >= '0' && d[2] <= '7') {
                out += static_cast<char>((d[0] - '0') * 64 + (d[1] - '0') * 8 + (d[2] - '0'));
                i += 3;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}
}  // namespace

// /dev/kmsg escapes non-printable bytes as \xNN (a driver's multi-line message arrives as one
// record with \x0a inside); decode them, and turn line breaks into spaces so a record stays
// one line of evidence.
std::string unescape_kmsg(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x' && hex(s[i + 2]) >= 0 &&
            hex(s[i + 3]) >= 0) {
            char c = static_cast<char>(hex(s[i + 2]) * 16 + hex(s[i + 3]));
            out += (c == '\n' || c == '\r') ? ' ' : c;
            i += 3;
            continue;
        }
        out += s[i];
    }
    return out;
}

Result<KmsgRecord> parse_kmsg_record(std::string_view record) {
    auto nl = record.find('\n');
    auto line = record.substr(0, nl);
    auto semi = line.find(';');
    if (semi == std::string_view::npos)
        return bad("kernel log record has no ';' after its prefix: " + preview(line));
    auto fields = split(line.substr(0, semi), ',');
    if (fields.size() < 4)
        return bad("kernel log record prefix is not prio,seq,usec,flags: " + preview(line));
    auto prio = parse_u64(fields[0]);
    auto seq = parse_u64(fields[1]);
    auto usec = parse_u64(fields[2]);
    if (!prio || !seq || !usec)
        return bad("kernel log record prefix has a non-number field: " + preview(line));
    KmsgRecord r;
    r.priority = static_cast<int>(*prio & 7);
    r.seq = *seq;
    r.usec = *usec;
    r.message = sanitize_text(unescape_kmsg(line.substr(semi + 1)));
    return r;
}

Result<std::vector<PciResource>> parse_pci_resource(std::string_view text) {
    std::vector<PciResource> out;
    int n = 0;
    for (auto line : split(text, '\n')) {
        ++n;
        if (trim(line).empty()) continue;
        auto f = split_ws(trim(line));
        if (f.size() != 3)
            return bad(
                fmt::format("resource line {} is not 'start end flags': {}", n, preview(line)));
        auto s = parse_hex(f[0]), e = parse_hex(f[1]), fl = parse_hex(f[2]);
        if (!s || !e || !fl)
            return bad(fmt::format("resource line {} has a non-hex field: {}", n, preview(line)));
        out.push_back({*s, *e, *fl});
    }
    if (out.empty()) return bad("resource file is empty");
    return out;
}

Result<double> parse_link_speed(std::string_view text) {
    auto t = trim(text);
    if (t.starts_with("Unknown")) return Status{Errc::kNotFound, "link speed is Unknown"};
    auto f = split_ws(t);
    if (f.size() < 2 || f[1] != "GT/s")
        return bad("link speed is not '<number> GT/s': " + preview(t));
    auto v = parse_double(f[0]);
    if (!v || *v <= 0 || *v > 1000) return bad("link speed is not a number: " + preview(t));
    return *v;
}

Result<double> parse_uptime(std::string_view text) {
    auto fields = split_ws(text);
    auto v = fields.empty() ? std::nullopt : parse_double(fields[0]);
    if (!v || *v < 0) return Status{Errc::kInvalidInput, "no uptime in seconds"};
    return *v;
}

Result<bool> parse_cpuinfo_hypervisor(std::string_view text) {
    bool flags = false;
    size_t at = 0;
    while (at < text.size()) {  // every CPU's block has its own line; the first says it
        size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        auto colon = line.find(':');
        if (colon == std::string_view::npos || trim(line.substr(0, colon)) != "flags") continue;
        flags = true;
        for (auto word : split_ws(line.substr(colon + 1)))
            if (word == "hypervisor") return true;
        break;
    }
    if (!flags) return Status{Errc::kNotFound, "no flags line"};
    return false;
}

Result<std::string> parse_bracket_choice(std::string_view text) {
    auto t = trim(text);
    auto open = t.find('['), close = t.find(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open + 2 ||
        t.find('[', open + 1) != std::string_view::npos)
        return bad("expected one [selected] choice: " + preview(t));
    return sanitize_text(t.substr(open + 1, close - open - 1));
}

Result<Rlimit> parse_limit(std::string_view text, std::string_view row) {
    for (auto line : split(text, '\n')) {
        if (!line.starts_with(row)) continue;
        auto f = split_ws(line.substr(row.size()));
        if (f.size() < 2) return bad(fmt::format("'{}' row has no soft and hard limit", row));
        auto value = [](std::string_view v) -> std::optional<uint64_t> {
            if (v == "unlimited") return Rlimit::kUnlimited;
            return parse_u64(v);
        };
        auto soft = value(f[0]), hard = value(f[1]);
        if (!soft || !hard)
            return bad(fmt::format("'{}' limits are not numbers: {}", row, preview(line)));
        return Rlimit{*soft, *hard};
    }
    return bad(fmt::format("no '{}' row", row));
}

Result<Rlimit> parse_limits_nofile(std::string_view text) {
    return parse_limit(text, "Max open files");
}

Result<uint64_t> parse_meminfo_field(std::string_view text, std::string_view field) {
    for (auto line : split(text, '\n')) {
        if (!line.starts_with(field) || line.substr(field.size(), 1) != ":") continue;
        const std::string name(field);
        auto f = split_ws(line.substr(field.size() + 1));
        if (f.size() != 2 || f[1] != "kB") return bad(name + " is not '<n> kB': " + preview(line));
        auto v = parse_u64(f[0]);
        if (!v || *v > (UINT64_MAX >> 10)) return bad(name + " is not a number: " + preview(line));
        return *v * 1024;
    }
    return bad("no " + std::string(field) + " line");
}

Result<uint64_t> parse_meminfo_total(std::string_view text) {
    return parse_meminfo_field(text, "MemTotal");
}

Result<MountEntry> parse_mountinfo_line(std::string_view line) {
    // 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
    auto f = split_ws(line);
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i)
        if (f[i] == "-") {
            dash = i;
            break;
        }
    if (f.size() < 10 || dash == 0 || dash + 3 > f.size() ||
        f[2].find(':') == std::string_view::npos)
        return bad("mountinfo line is not in proc(5) format: " + preview(line));
    MountEntry m;
    m.dev = std::string(f[2]);
    m.mount_point = sanitize_text(unescape_octal(f[4]));
    m.fs_type = sanitize_text(f[dash + 1]);
    m.source = sanitize_text(unescape_octal(f[dash + 2]));
    m.super_options = dash + 3 < f.size() ? sanitize_text(f[dash + 3]) : "";
    return m;
}

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
    std::vector<MountEntry> out;
    for (auto line : split(text, '\n')) {
        if (trim(line).empty()) continue;
        auto m = parse_mountinfo_line(line);
        if (m.ok()) out.push_back(std::move(m).value());
    }
    return out;
}

Result<uint64_t> parse_tmpfs_size(std::string_view value, uint64_t mem_total) {
    auto v = trim(value);
    if (v.empty()) return bad("tmpfs size is empty");
    if (v.back() == '%') {
        auto pct = parse_u64(v.substr(0, v.size() - 1));
        if (!pct || *pct > 100000)
            return bad("tmpfs size percentage is not a number: " + preview(v));
        return mem_total / 100 * *pct;
    }
    // k, m, g, t in either case: binary multiples, as tmpfs(5) documents.
    uint64_t mult = 1;
    if (auto unit = std::string_view("kmgt").find(static_cast<char>(v.back() | 0x20));
        unit != std::string_view::npos)
        mult = 1ull << (10 * (unit + 1));
    if (mult != 1) v.remove_suffix(1);
    auto n = parse_u64(v);
    if (!n || *n > UINT64_MAX / mult) return bad("tmpfs size is not a number: " + preview(value));
    return *n * mult;
}

Result<std::string> parse_nvidia_version(std::string_view text) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 ..." or
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.127.05  Release Build ..."
    auto line = split(text, '\n').front();
    if (!line.starts_with("NVRM version:"))
        return bad("first line does not start with 'NVRM version:': " + preview(line));
    for (auto word : split_ws(line)) {
        auto parts = split(word, '.');
        if (parts.size() < 2 || parts.size() > 3) continue;
        bool digits = true;
        for (auto p : parts) digits = digits && !p.empty() && parse_u64(p).has_value();
        if (digits) return std::string(word);
    }
    return bad("no driver version number in " + preview(line, 80));
}

std::string sysctl_key_dotted(std::string_view key) {
    std::string out(key);
    // sysctl.d(5): if the first separator is '/', slashes separate and dots are literal.
    auto first = out.find_first_of("./");
    if (first != std::string::npos && out[first] == '/') {
        for (char& c : out) c = c == '/' ? '.' : (c == '.' ? '/' : c);
    }
    return out;
}

std::string sysctl_key_path(std::string_view dotted_key) {
    std::string out(dotted_key);
    for (char& c : out) c = c == '.' ? '/' : (c == '/' ? '.' : c);
    return "/proc/sys/" + out;
}

void parse_sysctl_conf(std::string_view text, const std::string& file,
                       std::vector<SysctlSetting>& settings, std::vector<SysctlLine>& malformed) {
    int n = 0;
    for (auto raw : split(text, '\n')) {
        ++n;
        auto line = trim(raw);
        if (line.empty() || line.front() == '#' || line.front() == ';') continue;
        auto eq = line.find('=');
        // sysctl.d(5): "-key" alone (no '=') excludes the key from an earlier glob; not an error.
        if (eq == std::string_view::npos && line.starts_with('-') &&
            trim(line.substr(1)).find_first_of(" \t") == std::string_view::npos && line.size() > 1)
            continue;
        auto key = eq == std::string_view::npos ? std::string_view() : trim(line.substr(0, eq));
        bool optional = key.starts_with('-');
        if (optional) key = trim(key.substr(1));
        if (key.empty() || key.find_first_of(" \t") != std::string_view::npos) {
            malformed.push_back({file, n, sanitize_text(line)});
            continue;
        }
        SysctlSetting s;
        s.file = file;
        s.line = n;
        s.key = sanitize_text(sysctl_key_dotted(key));
        s.value = sanitize_text(trim(line.substr(eq + 1)));
        s.optional = optional;
        settings.push_back(std::move(s));
    }
}

}  // namespace trainrig
