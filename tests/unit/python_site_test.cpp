// Where python3's packages are, and PyTorch read from its installed metadata rather than imported.
#include "probe/python_site.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "probe/stack_parsers.h"
#include "probe/torch_metadata.h"
#include "temp_dir_test.h"

namespace trainrig {
namespace {

namespace fs = std::filesystem;

TEST(StackParsers, PackageVersion) {
    auto v = parse_package_version(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu124\nSummary: Tensors\n\n"
        "Version: 9.9 in the description\n");
    ASSERT_TRUE(v);
    EXPECT_EQ(*v, "2.5.1+cu124");
    EXPECT_FALSE(parse_package_version("Name: torch\n\nVersion: 1.0\n"));  // only the headers
    EXPECT_FALSE(parse_package_version(""));
}

TEST(StackParsers, TorchVersionPy) {
    // torch 2.x: annotated; 1.13 (Debian's python3-torch): plain, CPU-only.
    auto cu = parse_torch_version_py(
        "from typing import Optional\n__all__ = ['__version__', 'cuda']\n"
        "__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\n"
        "git_version = 'a8d6afb'\nhip: Optional[str] = None\n");
    ASSERT_TRUE(cu);
    EXPECT_EQ(cu->version, "2.5.1+cu124");
    EXPECT_EQ(cu->cuda, "12.4");
    auto cpu =
        parse_torch_version_py("__version__ = '1.13.0a0'\ndebug = False\ncuda = None\nhip = None");
    ASSERT_TRUE(cpu);
    EXPECT_EQ(cpu->version, "1.13.0a0");
    EXPECT_FALSE(cpu->cuda);
    EXPECT_FALSE(parse_torch_version_py("debug = False\n"));              // no __version__
    EXPECT_FALSE(parse_torch_version_py("__version__ = get_version()"));  // not evaluated
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

// An interpreter the layout reader accepts: an executable that starts like an ELF file.
void fake_interpreter(const fs::path& p) {
    write(p, std::string("\x7f"
                         "ELF",
                         4) +
                 "not really");
    fs::permissions(p, fs::perms::owner_all);
}

void install_torch(const fs::path& site, const std::string& version, const char* cuda) {
    write(site / ("torch-" + version + ".dist-info") / "METADATA",
          "Metadata-Version: 2.1\nName: torch\nVersion: " + version +
              "\nRequires-Dist: nvidia-nccl-cu12==2.21.5\n\n");
    write(site / "torch" / "version.py",
          "__version__ = '" + version + "'\ncuda: Optional[str] = " +
              (cuda ? "'" + std::string(cuda) + "'" : std::string("None")) + "\n");
}

class PythonSiteTest : public test::TempDirTest {
protected:
    EnvLookup env() {
        return [this](const char* k) -> std::optional<std::string> {
            auto it = env_.find(k);
            return it == env_.end() ? std::nullopt : std::optional<std::string>(it->second);
        };
    }
    std::map<std::string, std::string> env_;
};

TEST_F(PythonSiteTest, PrefixInstallWithUserSite) {
    const auto prefix = dir_ / "opt/python";
    fake_interpreter(prefix / "bin/python3.11");
    fs::create_symlink("python3.11", prefix / "bin/python3");
    fs::create_directories(prefix / "lib/python3.11/site-packages");
    fs::create_directories(dir_ / "home/.local/lib/python3.11/site-packages");
    fs::create_directories(dir_ / "extra");
    env_ = {{"HOME", (dir_ / "home").string()},
            {"PYTHONPATH", (dir_ / "extra").string() + "::" + (dir_ / "gone").string()},
            {"PATH", (dir_ / "nothing").string() + ":" + (prefix / "bin").string()}};
    const auto python = find_python3(env());
    EXPECT_EQ(python, (prefix / "bin/python3").string());
    auto dirs = site_dirs_from_layout(python, env());
    ASSERT_TRUE(dirs);
    // sys.path's order: PYTHONPATH, the user's site, the prefix's; folders that exist only.
    EXPECT_EQ(*dirs, (std::vector<std::string>{
                         (dir_ / "extra").string(),
                         (dir_ / "home/.local/lib/python3.11/site-packages").string(),
                         (prefix / "lib/python3.11/site-packages").string()}));
    env_["PYTHONNOUSERSITE"] = "1";
    EXPECT_EQ(site_dirs_from_layout(python, env())->size(), 2u);
}

TEST_F(PythonSiteTest, VenvSeesItsOwnPackagesUnlessToldOtherwise) {
    const auto prefix = dir_ / "opt/python";
    fake_interpreter(prefix / "bin/python3.12");
    fs::create_directories(prefix / "lib/python3.12/site-packages");
    const auto venv = dir_ / "venv";
    fs::create_directories(venv / "bin");
    fs::create_symlink(prefix / "bin/python3.12", venv / "bin/python3");
    fs::create_directories(venv / "lib/python3.12/site-packages");
    write(venv / "pyvenv.cfg", "home = " + (prefix / "bin").string() +
                                   "\ninclude-system-site-packages = false\nversion = 3.12.1\n");
    env_ = {{"HOME", (dir_ / "home").string()}};
    auto dirs = site_dirs_from_layout((venv / "bin/python3").string(), env());
    ASSERT_TRUE(dirs);
    EXPECT_EQ(*dirs, (std::vector<std::string>{(venv / "lib/python3.12/site-packages").string()}));
    write(venv / "pyvenv.cfg", "include-system-site-packages = True\n");
    dirs = site_dirs_from_layout((venv / "bin/python3").string(), env());
    ASSERT_TRUE(dirs);
    EXPECT_EQ(dirs->size(), 2u);
    EXPECT_EQ(dirs->back(), (prefix / "lib/python3.12/site-packages").string());
}

TEST_F(PythonSiteTest, LayoutsItDoesNotKnowAreLeftToPython) {
    // A pyenv shim is a shell script: which interpreter it runs, only it knows.
    write(dir_ / "shims/python3", "#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n");
    fs::permissions(dir_ / "shims/python3", fs::perms::owner_all);
    EXPECT_FALSE(site_dirs_from_layout((dir_ / "shims/python3").string(), env()));
    fake_interpreter(dir_ / "p/bin/python3.11");
    env_["PYTHONHOME"] = "/elsewhere";
    EXPECT_FALSE(site_dirs_from_layout((dir_ / "p/bin/python3.11").string(), env()));
    env_.clear();
    EXPECT_FALSE(site_dirs_from_layout((dir_ / "missing/python3").string(), env()));
    EXPECT_EQ(find_python3(env()), "");  // no PATH
}

// pyenv's shims choose by PYENV_VERSION, then .python-version up from the current folder, then
// the global version file; "system" is the next python3 on PATH.
TEST_F(PythonSiteTest, PyenvShimsAreFollowed) {
    const auto root = dir_ / "pyenv";
    write(root / "shims/python3", "#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n");
    fs::permissions(root / "shims/python3", fs::perms::owner_all);
    for (auto [version, binary] : {std::pair{"3.11.7", "python3.11"}, {"3.12.1", "python3.12"}}) {
        fake_interpreter(root / "versions" / version / "bin" / binary);
        fs::create_symlink(binary, root / "versions" / version / "bin/python3");
    }
    fake_interpreter(dir_ / "usr/bin/python3");
    write(root / "version", "# global\n3.11.7\n");
    write(dir_ / "project/.python-version", "3.12.1\n");
    fs::create_directories(dir_ / "project/src");
    const std::string shim = (root / "shims/python3").string();
    env_ = {{"PATH", (root / "shims").string() + ":" + (dir_ / "usr/bin").string()}};
    EXPECT_EQ(resolve_interpreter(shim, env(), dir_.string()),
              (root / "versions/3.11.7/bin/python3").string());
    EXPECT_EQ(resolve_interpreter(shim, env(), (dir_ / "project/src").string()),
              (root / "versions/3.12.1/bin/python3").string());
    env_["PYENV_VERSION"] = "system";
    EXPECT_EQ(resolve_interpreter(shim, env(), dir_.string()), (dir_ / "usr/bin/python3").string());
    env_["PYENV_VERSION"] = "3.9.0";  // not installed
    EXPECT_FALSE(resolve_interpreter(shim, env(), dir_.string()));
    // The resolved interpreter's site directories come from its own prefix.
    fs::create_directories(root / "versions/3.12.1/lib/python3.12/site-packages");
    auto dirs = site_dirs_from_layout((root / "versions/3.12.1/bin/python3").string(), env());
    ASSERT_TRUE(dirs);
    EXPECT_EQ(dirs->back(), (root / "versions/3.12.1/lib/python3.12/site-packages").string());
}

TEST_F(PythonSiteTest, TorchFromTheFirstSiteThatHasIt) {
    const auto user = dir_ / "user", system = dir_ / "system";
    fs::create_directories(user);
    install_torch(system, "2.5.1+cu124", "12.4");
    write(system / "nvidia_nccl_cu12-2.21.5.dist-info/METADATA",
          "Name: nvidia-nccl-cu12\n"
          "Version: 2.21.5\n\n");
    write(system / "torchgen-0.1.dist-info/METADATA", "Version: 0.1\n");  // not torch
    auto t = torch_from_metadata("/usr/bin/python3", {user.string(), system.string()});
    ASSERT_TRUE(t.is_known()) << t.status().message();
    EXPECT_EQ(t.value().version, "2.5.1+cu124");
    EXPECT_EQ(t.value().cuda.value(), "12.4");
    EXPECT_EQ(t.value().nccl.value(), "2.21.5");
    EXPECT_EQ(t.value().location, system.string());
    EXPECT_EQ(t.value().python, "/usr/bin/python3");
    EXPECT_TRUE(t.value().cuda_available.is_failed());  // not imported: not claimed
    // A CPU-only build in the user's site shadows the system's, as for `import torch`.
    install_torch(user, "2.6.0+cpu", nullptr);
    t = torch_from_metadata("/usr/bin/python3", {user.string(), system.string()});
    ASSERT_TRUE(t.is_known());
    EXPECT_EQ(t.value().version, "2.6.0+cpu");
    EXPECT_TRUE(t.value().cuda.is_absent());
}

TEST_F(PythonSiteTest, TorchMetadataProblemsAreNamed) {
    EXPECT_TRUE(torch_from_metadata("python3", {(dir_ / "empty").string()}).is_absent());
    // Debian's python3-torch: an egg-info with PKG-INFO.
    write(dir_ / "deb/torch-1.13.0a0+gitunknown.egg-info/PKG-INFO", "Version: 1.13.0a0\n");
    write(dir_ / "deb/torch/version.py", "__version__ = '1.13.0a0'\ncuda = None\n");
    auto deb = torch_from_metadata("python3", {(dir_ / "deb").string()});
    ASSERT_TRUE(deb.is_known());
    EXPECT_EQ(deb.value().version, "1.13.0a0");
    EXPECT_TRUE(deb.value().nccl.is_absent());
    // Installed, but its version.py is gone: a failure naming the file, never "not installed".
    write(dir_ / "broken/torch-2.5.1.dist-info/METADATA", "Version: 2.5.1\n");
    auto broken = torch_from_metadata("python3", {(dir_ / "broken").string()});
    ASSERT_TRUE(broken.is_failed());
    EXPECT_NE(broken.status().message().find("version.py"), std::string::npos);
    write(dir_ / "nover/torch-2.5.1.dist-info/METADATA", "Name: torch\n");
    auto nover = torch_from_metadata("python3", {(dir_ / "nover").string()});
    ASSERT_TRUE(nover.is_failed());
    EXPECT_NE(nover.status().message().find("METADATA"), std::string::npos);
}

}  // namespace
}  // namespace trainrig
