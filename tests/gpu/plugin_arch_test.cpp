// Both CUDA plugins hold code for every GPU of plan's catalog (their compute capabilities are
// src/stack/stack_data.toml's rows of the same ids): native code (an ELF cubin) that each runs —
// a cubin for X.y runs on X.z with z >= y, no other (CUDA C Programming Guide, "Binary
// Compatibility") — and PTX of the newest architecture, which the driver compiles for GPUs newer
// than the catalog's. cuobjdump lists what is embedded (--list-elf, --list-ptx) where the toolkit
// has it; this test also reads the fatbinary headers itself, and where both exist they must
// agree. Needs no GPU: it runs wherever the plugins are built.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text.h"
#include "plan/hardware.h"
#include "stack/stack_data.h"

namespace trainrig {
namespace {

// Architectures as numbers: 80 for sm_80 / compute_80.
struct EmbeddedCode {
    std::set<int> elf, ptx;
    bool operator==(const EmbeddedCode&) const = default;
};

std::string text_of(const std::set<int>& s) {
    std::string out;
    for (int a : s) out += (out.empty() ? "" : " ") + std::to_string(a);
    return out.empty() ? "none" : out;
}

template <class T>
T read_at(const std::vector<char>& bytes, size_t at) {
    T v{};
    if (at + sizeof v <= bytes.size()) std::memcpy(&v, bytes.data() + at, sizeof v);
    return v;
}

// The fatbinary containers of the ELF section .nv_fatbin: a 16-byte header (magic 0xBA55ED50,
// version, header size, size of the entries), then entries of a header (kind at 0: 1 PTX,
// 2 ELF; its own size at 4; the payload's at 8; the architecture at 28) and a payload each.
// The layout is NVIDIA's, undocumented; the tests below hold this reading to what the build
// asked for and, where it is installed, to cuobjdump.
std::vector<char> read_range(std::ifstream& in, uint64_t at, uint64_t size) {
    std::vector<char> bytes(size);
    in.seekg(static_cast<std::streamoff>(at));
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    if (!in) bytes.clear();
    return bytes;
}

EmbeddedCode read_fatbins(const std::string& path) {
    EmbeddedCode out;
    std::ifstream in(path, std::ios::binary);
    const auto eh = read_at<Elf64_Ehdr>(read_range(in, 0, sizeof(Elf64_Ehdr)), 0);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return out;
    const auto sections = read_range(in, eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
    const auto strtab = read_at<Elf64_Shdr>(sections, eh.e_shstrndx * sizeof(Elf64_Shdr));
    const auto names = read_range(in, strtab.sh_offset, strtab.sh_size);
    for (size_t i = 0; i < eh.e_shnum; ++i) {
        const auto sh = read_at<Elf64_Shdr>(sections, i * sizeof(Elf64_Shdr));
        if (sh.sh_name >= names.size() ||
            std::strncmp(names.data() + sh.sh_name, ".nv_fatbin", names.size() - sh.sh_name) != 0)
            continue;
        const auto f = read_range(in, sh.sh_offset, sh.sh_size);
        size_t at = 0;
        while (at + 16 <= f.size()) {
            if (read_at<uint32_t>(f, at) != 0xBA55ED50u) {
                at += 8;  // containers are 8-byte aligned; padding between them
                continue;
            }
            const size_t first = at + read_at<uint16_t>(f, at + 6);
            const size_t stop = first + read_at<uint64_t>(f, at + 8);
            for (size_t e = first; e + 32 <= stop;) {
                const auto kind = read_at<uint16_t>(f, e);
                const auto header = read_at<uint32_t>(f, e + 4);
                const auto arch = static_cast<int>(read_at<uint32_t>(f, e + 28));
                if (kind == 1) out.ptx.insert(arch);
                if (kind == 2) out.elf.insert(arch);
                if (header == 0) break;
                e += header + read_at<uint64_t>(f, e + 8);
            }
            at = std::max(stop, at + 16);
        }
    }
    return out;
}

// cuobjdump's listing: "ELF file    1: libtrainrig_train_cuda.1.sm_80.cubin".
std::set<int> cuobjdump_list(const std::string& option, const std::string& path) {
    std::set<int> out;
    const std::string cmd =
        shell_quote(TRAINRIG_CUOBJDUMP) + " " + option + " " + shell_quote(path) + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    std::string text;
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) text.append(buf, n);
    const int rc = ::pclose(p);
    EXPECT_EQ(rc, 0) << cmd << ":\n" << text;
    static const std::regex file(R"(\.sm_(\d+)[a-z]?\.(cubin|ptx))");
    for (std::sregex_iterator m(text.begin(), text.end(), file), none; m != none; ++m)
        out.insert(std::stoi((*m)[1]));
    return out;
}

bool have_cuobjdump() { return std::string(TRAINRIG_CUOBJDUMP).size() > 0; }

EmbeddedCode embedded(const std::string& path) {
    if (!have_cuobjdump()) return read_fatbins(path);
    return {cuobjdump_list("--list-elf", path), cuobjdump_list("--list-ptx", path)};
}

// What the plugins' CUDA_ARCHITECTURES asked for, commas for CMake's semicolons:
// "80-real,90-real,100-real,100-virtual".
EmbeddedCode requested() {
    EmbeddedCode out;
    for (std::string_view item : split(TRAINRIG_CUDA_ARCHITECTURES, ',')) {
        const size_t dash = item.find('-');
        const int arch = std::stoi(std::string(item.substr(0, dash)));
        const std::string_view kind = dash == std::string_view::npos ? "" : item.substr(dash + 1);
        if (kind != "virtual") out.elf.insert(arch);
        if (kind != "real") out.ptx.insert(arch);
    }
    return out;
}

// Every GPU of plan's catalog with its compute capability (80 for 8.0).
std::vector<std::pair<std::string, int>> catalog() {
    std::vector<std::pair<std::string, int>> out;
    const auto& stack = stack::builtin_stack_data();
    for (const auto& g : plan::builtin_hardware().gpus) {
        int cc = 0;
        for (const auto& m : stack.gpus)
            if (m.id == g.id) cc = m.compute_capability;
        out.emplace_back(g.id, cc);
    }
    return out;
}

class PluginArch : public ::testing::TestWithParam<const char*> {};

TEST_P(PluginArch, EveryCatalogGpuRunsNativeCode) {
    const EmbeddedCode code = embedded(GetParam());
    for (const auto& [id, cc] : catalog()) {
        ASSERT_GT(cc, 0) << id << " has no compute capability in src/stack/stack_data.toml";
        const bool runs = std::any_of(code.elf.begin(), code.elf.end(), [cc = cc](int sm) {
            return sm / 10 == cc / 10 && sm % 10 <= cc % 10;
        });
        EXPECT_TRUE(runs) << GetParam() << " has no native code for " << id
                          << " (compute capability " << cc / 10 << "." << cc % 10
                          << "); it holds sm " << text_of(code.elf)
                          << "; CMAKE_CUDA_ARCHITECTURES is " << TRAINRIG_CUDA_ARCHITECTURES
                          << " (src/cuda/CMakeLists.txt)";
    }
}

TEST_P(PluginArch, TheNewestArchitectureAlsoHasPtx) {
    const EmbeddedCode code = embedded(GetParam());
    ASSERT_FALSE(code.elf.empty()) << GetParam();
    int newest_gpu = 0;
    for (const auto& entry : catalog()) newest_gpu = std::max(newest_gpu, entry.second);
    const int newest = *code.elf.rbegin();
    EXPECT_GE(newest, newest_gpu);
    EXPECT_TRUE(code.ptx.count(newest)) << GetParam() << " holds PTX for " << text_of(code.ptx)
                                        << ", not for its newest architecture " << newest;
}

// The fatbinary reading holds exactly what the build asked nvcc for.
TEST_P(PluginArch, TheFatbinaryReadingMatchesTheBuild) {
    const EmbeddedCode read = read_fatbins(GetParam());
    EXPECT_EQ(text_of(read.elf), text_of(requested().elf)) << GetParam();
    EXPECT_EQ(text_of(read.ptx), text_of(requested().ptx)) << GetParam();
}

TEST_P(PluginArch, CuobjdumpAgreesWithTheFatbinaryReading) {
    if (!have_cuobjdump()) GTEST_SKIP() << "no cuobjdump beside nvcc";
    const EmbeddedCode read = read_fatbins(GetParam()), listed = embedded(GetParam());
    EXPECT_EQ(text_of(read.elf), text_of(listed.elf)) << "cuobjdump --list-elf " << GetParam();
    EXPECT_EQ(text_of(read.ptx), text_of(listed.ptx)) << "cuobjdump --list-ptx " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(, PluginArch,
                         ::testing::Values(TRAINRIG_GPU_BENCH_PLUGIN, TRAINRIG_TRAIN_CUDA_PLUGIN),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                             return std::string(p.param).find("bench") != std::string::npos
                                        ? "gpu_bench"
                                        : "train_cuda";
                         });

}  // namespace
}  // namespace trainrig
