// Reading the stack data (TOML): every key checked, every row with a source, and the tables
// consistent with each other, so an edited copy that would mislead is refused with the line.
#include "stack/stack_data.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/text.h"
#include "core/toml_text.h"
#include "stack/cuda_drivers.h"
#include "stack/stack_data_text.h"

namespace trainrig::stack {

namespace stack_data_detail {

// Reads the keys of one table row; the first problem is kept and reported with its line.
class Row {
public:
    Row(const toml::table& t, std::string where) : t_(t), where_(std::move(where)) {}

    std::string text(const char* key, bool required = true) {
        seen_.push_back(key);
        const toml::node* n = t_.get(key);
        if (!n) {
            if (required) missing(key);
            return "";
        }
        auto v = n->value<std::string>();
        if (!v || v->empty()) return fail(key, "a non-empty string"), "";
        return *v;
    }
    int64_t integer(const char* key, bool required, int64_t lo, int64_t hi) {
        seen_.push_back(key);
        const toml::node* n = t_.get(key);
        if (!n) {
            if (required) missing(key);
            return 0;
        }
        auto v = n->value<int64_t>();
        if (!v || *v < lo || *v > hi)
            return fail(key, fmt::format("an integer from {} to {}", lo, hi).c_str()), 0;
        return *v;
    }
    bool boolean(const char* key) {
        seen_.push_back(key);
        const toml::node* n = t_.get(key);
        if (!n) return false;
        auto v = n->value<bool>();
        if (!v) return fail(key, "true or false"), false;
        return *v;
    }
    std::vector<std::string> texts(const char* key) {
        seen_.push_back(key);
        std::vector<std::string> out;
        const toml::node* n = t_.get(key);
        if (!n) return missing(key), out;
        const auto* a = n->as_array();
        if (!a || a->empty()) return fail(key, "a non-empty array of strings"), out;
        for (const auto& e : *a) {
            auto v = e.value<std::string>();
            if (!v || v->empty()) return fail(key, "a non-empty array of strings"), out;
            out.push_back(*v);
        }
        return out;
    }
    std::vector<int64_t> integers(const char* key, int64_t lo, int64_t hi) {
        seen_.push_back(key);
        std::vector<int64_t> out;
        const toml::node* n = t_.get(key);
        if (!n) return missing(key), out;
        const auto* a = n->as_array();
        if (!a || a->empty()) return fail(key, "a non-empty array of integers"), out;
        for (const auto& e : *a) {
            auto v = e.value<int64_t>();
            if (!v || *v < lo || *v > hi) return fail(key, "an array of integers"), out;
            out.push_back(*v);
        }
        return out;
    }
    const toml::array* array(const char* key) {
        seen_.push_back(key);
        const toml::node* n = t_.get(key);
        return n ? n->as_array() : nullptr;
    }
    // A value that parsed but means nothing ("12.x" for a CUDA version).
    void bad(const char* key, const std::string& why) { fail(key, why.c_str()); }
    // An unknown key is reported before a missing one: it is usually the missing one misspelt.
    void reject_unknown() {
        for (const auto& [key, node] : t_)
            if (std::find(seen_.begin(), seen_.end(), key.str()) == seen_.end() &&
                (status_.ok() || missing_)) {
                status_ = invalid_input(fmt::format("{} line {}: unknown key \"{}\"", where_,
                                                    node.source().begin.line, key.str()));
                missing_ = false;
            }
    }
    const Status& status() const { return status_; }
    const std::string& where() const { return where_; }
    int64_t line() const { return t_.source().begin.line; }

private:
    void missing(const char* key) {
        if (!status_.ok()) return;
        missing_ = true;
        status_ = invalid_input(
            fmt::format("{} line {}: \"{}\" is missing", where_, t_.source().begin.line, key));
    }
    void fail(const char* key, const char* expected) {
        if (!status_.ok()) return;
        status_ = invalid_input(fmt::format("{} line {}: \"{}\" must be {}", where_,
                                            t_.get(key)->source().begin.line, key, expected));
    }

    const toml::table& t_;
    std::string where_;
    std::vector<std::string> seen_;
    Status status_;
    bool missing_ = false;  // status_ is a missing key
};

bool is_date(std::string_view s, bool day_optional) {
    auto digits = [&](size_t at, size_t n) {
        for (size_t i = at; i < at + n; ++i)
            if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
        return true;
    };
    const bool month = s.size() >= 7 && digits(0, 4) && s[4] == '-' && digits(5, 2) &&
                       s.substr(5, 2) >= "01" && s.substr(5, 2) <= "12";
    if (!month) return false;
    if (s.size() == 7) return day_optional;
    return s.size() == 10 && s[7] == '-' && digits(8, 2) && s.substr(8, 2) >= "01" &&
           s.substr(8, 2) <= "31";
}

bool is_dotted(std::string_view s) {
    if (s.empty()) return false;
    for (auto part : split(s, '.'))
        if (!parse_u64(part)) return false;
    return true;
}

// Each [[name]] entry as a table, or an error naming the first that is not one.
Result<std::vector<const toml::table*>> rows_of(const toml::table& doc, const char* name,
                                                std::string_view where, bool required) {
    std::vector<const toml::table*> out;
    const toml::node* n = doc.get(name);
    if (!n) {
        if (!required) return out;
        return invalid_input(fmt::format("{}: no [[{}]] table", where, name));
    }
    const auto* a = n->as_array();
    if (!a)
        return invalid_input(
            fmt::format("{} line {}: \"{}\" must be an array of tables "
                        "([[{}]])",
                        where, n->source().begin.line, name, name));
    for (const auto& e : *a) {
        const auto* t = e.as_table();
        if (!t)
            return invalid_input(fmt::format("{} line {}: [[{}]] entries must be tables", where,
                                             e.source().begin.line, name));
        out.push_back(t);
    }
    return out;
}

Status read_cuda(const toml::table& t, std::string_view where, StackData& d) {
    Row r(t, fmt::format("{} [[cuda]]", where));
    CudaRelease c;
    const std::string version = r.text("version");
    c.released = r.text("released", false);
    c.toolkit_driver = r.text("toolkit_driver");
    c.minor_compat = r.text("minor_compat");
    c.source = r.text("source");
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    c.cuda = cuda_code(version);
    if (c.cuda == 0 || split(version, '.').size() != 2)
        r.bad("version", "a CUDA version such as \"12.8\"");
    if (!c.released.empty() && !is_date(c.released, true))
        r.bad("released", "a date, YYYY-MM or YYYY-MM-DD");
    if (!is_dotted(c.toolkit_driver)) r.bad("toolkit_driver", "a driver version (\"570.26\")");
    if (!is_dotted(c.minor_compat)) r.bad("minor_compat", "a driver version (\"525.60.13\")");
    TRAINRIG_TRY(r.status());
    if (d.find_cuda(c.cuda))
        return invalid_input(
            fmt::format("{} line {}: CUDA {} is listed twice", where, r.line(), version));
    d.cuda.push_back(std::move(c));
    return ok_status();
}

Status read_architecture(const toml::table& t, std::string_view where, StackData& d) {
    Row r(t, fmt::format("{} [[architecture]]", where));
    Architecture a;
    a.name = r.text("name");
    const auto ccs = r.texts("compute_capabilities");
    const std::string first = r.text("first_cuda");
    a.last_cuda_major = static_cast<int>(r.integer("last_cuda_major", false, 1, 99));
    a.last_driver_branch = static_cast<int>(r.integer("last_driver_branch", false, 100, 9999));
    a.source = r.text("source");
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    for (const auto& cc : ccs) {
        const auto v = parse_compute_capability(cc);
        if (v == 0) r.bad("compute_capabilities", "compute capabilities such as \"9.0\"");
        a.compute_capabilities.push_back(v);
    }
    a.first_cuda = cuda_code(first);
    if (a.first_cuda == 0) r.bad("first_cuda", "a CUDA version such as \"11.8\"");
    TRAINRIG_TRY(r.status());
    for (auto cc : a.compute_capabilities)
        if (d.find_architecture(cc))
            return invalid_input(fmt::format("{} line {}: compute capability {} is listed twice",
                                             where, r.line(), cc_text(cc)));
    d.architectures.push_back(std::move(a));
    return ok_status();
}

Status read_gpu(const toml::table& t, std::string_view where, StackData& d) {
    Row r(t, fmt::format("{} [[gpu]]", where));
    GpuModel g;
    g.id = r.text("id");
    g.names = r.texts("names");
    const std::string cc = r.text("compute_capability");
    for (auto id : r.integers("pci_device_ids", 1, 0xffff))
        g.pci_device_ids.push_back(static_cast<unsigned>(id));
    g.source = r.text("source");
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    g.compute_capability = parse_compute_capability(cc);
    if (g.compute_capability == 0) r.bad("compute_capability", "such as \"9.0\"");
    TRAINRIG_TRY(r.status());
    for (const auto& other : d.gpus)
        if (other.id == g.id)
            return invalid_input(
                fmt::format("{} line {}: GPU \"{}\" is listed twice", where, r.line(), g.id));
    d.gpus.push_back(std::move(g));
    return ok_status();
}

Status read_branch(const toml::table& t, std::string_view where, StackData& d) {
    Row r(t, fmt::format("{} [[driver_branch]]", where));
    DriverBranch b;
    b.branch = static_cast<int>(r.integer("branch", true, 100, 9999));
    const std::string type = r.text("type", false);
    b.end_of_life = r.text("end_of_life", false);
    b.ended = r.boolean("ended");
    b.source = r.text("source");
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    if (type == "ltsb")
        b.type = BranchType::kLongTerm;
    else if (type == "production")
        b.type = BranchType::kProduction;
    else if (type == "new-feature")
        b.type = BranchType::kNewFeature;
    else if (!type.empty())
        r.bad("type", "\"ltsb\", \"production\" or \"new-feature\"");
    if (!b.end_of_life.empty() && (b.end_of_life.size() != 7 || !is_date(b.end_of_life, true)))
        r.bad("end_of_life", "a month, YYYY-MM");
    TRAINRIG_TRY(r.status());
    if (d.find_branch(b.branch))
        return invalid_input(
            fmt::format("{} line {}: driver branch {} is listed twice", where, r.line(), b.branch));
    d.branches.push_back(std::move(b));
    return ok_status();
}

Status read_nccl(const toml::table& t, std::string_view where, StackData& d) {
    Row r(t, fmt::format("{} [[nccl]]", where));
    NcclRelease n;
    n.version = r.text("version");
    for (auto m : r.integers("cuda_majors", 9, 99)) n.cuda_majors.push_back(static_cast<int>(m));
    n.source = r.text("source");
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    if (!is_dotted(n.version) || split(n.version, '.').size() != 3)
        r.bad("version", "an NCCL version such as \"2.28.9\"");
    TRAINRIG_TRY(r.status());
    if (d.find_nccl(n.version))
        return invalid_input(
            fmt::format("{} line {}: NCCL {} is listed twice", where, r.line(), n.version));
    d.nccl.push_back(std::move(n));
    return ok_status();
}

Status read_build(const toml::table& t, const std::string& where, TorchRelease& release) {
    Row r(t, where);
    TorchBuild b;
    const std::string cuda = r.text("cuda");
    b.experimental = r.boolean("experimental");
    b.cudnn = r.text("cudnn", false);
    b.nccl = r.text("nccl", false);
    const auto arch = r.texts("arch");
    const std::string ptx = r.text("ptx", false);
    b.source = r.text("source");
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    b.cuda = cuda_code(cuda);
    if (b.cuda == 0) r.bad("cuda", "a CUDA version such as \"12.8\"");
    for (const auto& a : arch) {
        b.arch.push_back(parse_compute_capability(a));
        if (b.arch.back() == 0) r.bad("arch", "compute capabilities such as \"9.0\"");
    }
    if (!ptx.empty()) {
        b.ptx = parse_compute_capability(ptx);
        if (b.ptx == 0) r.bad("ptx", "a compute capability such as \"12.0\"");
    }
    if (!b.cudnn.empty() && !is_dotted(b.cudnn)) r.bad("cudnn", "a cuDNN version (\"9.1.0.70\")");
    TRAINRIG_TRY(r.status());
    for (const auto& other : release.builds)
        if (other.cuda == b.cuda)
            return invalid_input(fmt::format("{} line {}: CUDA {} is listed twice", where, r.line(),
                                             cuda_text(b.cuda)));
    release.builds.push_back(std::move(b));
    return ok_status();
}

Status read_torch(const toml::table& t, std::string_view where, StackData& d) {
    Row r(t, fmt::format("{} [[torch]]", where));
    TorchRelease rel;
    rel.version = r.text("version");
    rel.released = r.text("released", false);
    const auto python = r.texts("python");
    rel.source = r.text("source");
    const toml::array* builds = r.array("build");
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    if (minor_version(rel.version) != rel.version)
        r.bad("version", "a PyTorch minor version such as \"2.8\"");
    if (!rel.released.empty() && !is_date(rel.released, true))
        r.bad("released", "a date, YYYY-MM or YYYY-MM-DD");
    if (python.size() != 2 || minor_version(python[0]) != python[0] ||
        minor_version(python[1]) != python[1] || compare_versions(python[0], python[1]) > 0)
        r.bad("python", "[oldest, newest] CPython versions such as [\"3.10\", \"3.14\"]");
    if (!builds || builds->empty()) r.bad("build", "one or more [[torch.build]] tables");
    TRAINRIG_TRY(r.status());
    rel.python_min = python[0];
    rel.python_max = python[1];
    const std::string build_where = fmt::format("{} [[torch.build]] of {}", where, rel.version);
    for (const auto& e : *builds) {
        const auto* bt = e.as_table();
        if (!bt) return invalid_input(fmt::format("{}: entries must be tables", build_where));
        TRAINRIG_TRY(read_build(*bt, build_where, rel));
    }
    std::sort(rel.builds.begin(), rel.builds.end(),
              [](const TorchBuild& a, const TorchBuild& b) { return a.cuda < b.cuda; });
    if (d.find_torch(rel.version))
        return invalid_input(
            fmt::format("{} line {}: PyTorch {} is listed twice", where, r.line(), rel.version));
    d.torch.push_back(std::move(rel));
    return ok_status();
}

Status read_distro(const toml::table& t, std::string_view where, StackData& d) {
    Row r(t, fmt::format("{} [[distro]]", where));
    Distro x;
    x.id = r.text("id");
    x.name = r.text("name");
    const auto os = r.texts("os_release");
    x.python = r.text("python");
    x.keyring_url = r.text("keyring_url");
    x.source = r.text("source");
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    if (os.size() != 2) r.bad("os_release", "[ID, VERSION_ID] as /etc/os-release says them");
    if (minor_version(x.python) != x.python) r.bad("python", "a CPython version such as \"3.12\"");
    if (!x.keyring_url.starts_with("https://")) r.bad("keyring_url", "an https:// address");
    TRAINRIG_TRY(r.status());
    x.os_release_id = os[0];
    x.os_release_version = os[1];
    if (d.find_distro(x.id))
        return invalid_input(
            fmt::format("{} line {}: distro \"{}\" is listed twice", where, r.line(), x.id));
    d.distros.push_back(std::move(x));
    return ok_status();
}

// The tables must agree with each other: what one row names, another must define.
Status cross_check(const StackData& d, std::string_view where) {
    auto bad = [&](const std::string& what) {
        return invalid_input(fmt::format("{}: {}", where, what));
    };
    for (const auto& g : d.gpus)
        if (!d.find_architecture(g.compute_capability))
            return bad(
                fmt::format("GPU {} has compute capability {}, which no [[architecture]] "
                            "lists",
                            g.id, cc_text(g.compute_capability)));
    for (const auto& t : d.torch)
        for (const auto& b : t.builds) {
            if (!d.find_cuda(b.cuda))
                return bad(
                    fmt::format("PyTorch {} has a CUDA {} build, but [[cuda]] has no CUDA {}",
                                t.version, cuda_text(b.cuda), cuda_text(b.cuda)));
            if (!b.nccl.empty()) {
                const auto* n = d.find_nccl(b.nccl);
                if (!n)
                    return bad(fmt::format("PyTorch {}+cu{} names NCCL {}, which [[nccl]] lacks",
                                           t.version, b.cuda / 100, b.nccl));
                if (std::find(n->cuda_majors.begin(), n->cuda_majors.end(), b.cuda / 1000) ==
                    n->cuda_majors.end())
                    return bad(fmt::format("NCCL {} is not listed for CUDA {} (PyTorch {}+cu{})",
                                           b.nccl, b.cuda / 1000, t.version, b.cuda / 100));
            }
            for (auto cc : b.arch)
                if (!d.find_architecture(cc))
                    return bad(
                        fmt::format("PyTorch {}+cu{} targets compute capability {}, "
                                    "which no [[architecture]] lists",
                                    t.version, b.cuda / 100, cc_text(cc)));
        }
    return ok_status();
}

}  // namespace stack_data_detail

Result<StackData> parse_stack_data(std::string_view text, std::string_view where) {
    using namespace stack_data_detail;
    auto parsed = parse_toml(text, where);
    if (!parsed) return parsed.status();
    const toml::table& doc = parsed.value();
    StackData d;
    d.where = std::string(where);
    for (const auto& [key, node] : doc) {
        static const std::vector<std::string_view> kKnown = {
            "schema", "schema_version", "current_to", "cuda",  "architecture",
            "gpu",    "driver_branch",  "nccl",       "torch", "distro"};
        if (std::find(kKnown.begin(), kKnown.end(), key.str()) == kKnown.end())
            return invalid_input(fmt::format("{} line {}: unknown key \"{}\"", where,
                                             node.source().begin.line, key.str()));
    }
    if (doc["schema"].value_or(std::string()) != "trainrig.stack.data")
        return invalid_input(
            fmt::format("{}: not stack data (schema is not \"trainrig.stack.data\")", where));
    if (doc["schema_version"].value_or(int64_t{0}) != 1)
        return invalid_input(fmt::format("{}: schema_version is not 1", where));
    d.current_to = doc["current_to"].value_or(std::string());
    if (!is_date(d.current_to, false))
        return invalid_input(fmt::format("{}: \"current_to\" must be a date, YYYY-MM-DD", where));

    struct Table {
        const char* name;
        Status (*read)(const toml::table&, std::string_view, StackData&);
    };
    for (const Table& table :
         {Table{"cuda", read_cuda}, Table{"architecture", read_architecture},
          Table{"gpu", read_gpu}, Table{"driver_branch", read_branch}, Table{"nccl", read_nccl},
          Table{"torch", read_torch}, Table{"distro", read_distro}}) {
        auto rows = rows_of(doc, table.name, where, true);
        if (!rows) return rows.status();
        for (const auto* row : *rows) TRAINRIG_TRY(table.read(*row, where, d));
    }
    std::sort(d.cuda.begin(), d.cuda.end(),
              [](const CudaRelease& a, const CudaRelease& b) { return a.cuda < b.cuda; });
    std::sort(d.branches.begin(), d.branches.end(),
              [](const DriverBranch& a, const DriverBranch& b) { return a.branch < b.branch; });
    std::sort(d.torch.begin(), d.torch.end(), [](const TorchRelease& a, const TorchRelease& b) {
        return compare_versions(a.version, b.version) < 0;
    });
    TRAINRIG_TRY(cross_check(d, where));
    return d;
}

const StackData& builtin_stack_data() {
    static const StackData data = [] {
        auto parsed = parse_stack_data(kBuiltinStackData, "built-in stack data");
        if (!parsed) {
            // Only a broken build gets here; stack_data_test fails first.
            std::fprintf(stderr, "trainrig: %s\n", parsed.status().message().c_str());
            std::abort();
        }
        return std::move(parsed).value();
    }();
    return data;
}

namespace stack_data_detail {
std::mutex& override_mutex() {
    static std::mutex m;
    return m;
}
std::optional<StackData>& override_slot() {
    static std::optional<StackData> slot;
    return slot;
}
}  // namespace stack_data_detail

const StackData& stack_data() {
    std::lock_guard<std::mutex> lock(stack_data_detail::override_mutex());
    const auto& slot = stack_data_detail::override_slot();
    return slot ? *slot : builtin_stack_data();
}

void use_stack_data(StackData data) {
    std::lock_guard<std::mutex> lock(stack_data_detail::override_mutex());
    stack_data_detail::override_slot() = std::move(data);
}

}  // namespace trainrig::stack
