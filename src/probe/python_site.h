// Where python3's packages are installed, worked out from the interpreter's install rather than
// by starting it: a venv's pyvenv.cfg, the prefix's lib/python3.N, Debian's dist-packages. Starting
// Python costs 20 ms to most of a second (a pyenv shim); importing torch to read its version,
// half a second more. Layouts we do not know (a wrapper script, PYTHONHOME) are left to the
// interpreter to answer (python_sys_path).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace trainrig {

// An environment variable's value, nullopt when unset (getenv, or a test's map).
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
EnvLookup process_env();

// The python3 a shell would run: the first executable python3 on PATH; empty when there is none.
std::string find_python3(const EnvLookup& env);

// The interpreter `python` runs: itself, or for a pyenv shim (a script) the one pyenv's rules
// choose (github.com/pyenv/pyenv, "Choosing the Python Version"): $PYENV_VERSION, else the first
// .python-version from `cwd` up, else $PYENV_ROOT/version; "system" is the next python3 on PATH.
// nullopt for a shim whose choice cannot be read.
std::optional<std::string> resolve_interpreter(const std::string& python, const EnvLookup& env,
                                               const std::string& cwd);

// The directories the interpreter at `python` imports packages from, in sys.path's order
// (PYTHONPATH, the venv's or the user's site-packages, the prefix's), those that exist. nullopt
// when its layout is not one this knows: not an ELF executable (a pyenv shim), PYTHONHOME set,
// no lib/python3.N under its prefix.
std::optional<std::vector<std::string>> site_dirs_from_layout(const std::string& python,
                                                              const EnvLookup& env);

// sys.path as the interpreter itself reports it (one python3 start).
Result<std::vector<std::string>> python_sys_path(const std::string& python,
                                                 std::chrono::milliseconds deadline);

}  // namespace trainrig
