// Shared option declarations and output writing; see shared_options.h.
#include "cli/shared_options.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "core/atomic_file.h"
#include "core/version.h"

namespace trainrig {

void declare_root_options(CLI::App& app, CollectOptions& opts) {
    app.add_option("--root", opts.root,
                   "Read the machine under DIR instead of / (a copy of /proc, /sys, "
                   "/etc and /dev/kmsg, as in tests/fixtures/machines)")
        ->envname("TRAINRIG_ROOT")
        ->type_name("DIR");
    app.add_option_function<double>(
           "--timeout",
           [&opts](double seconds) {
               opts.deadline = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
           },
           "Give the GPU driver (NVML), the CUDA/NCCL libraries and nvcc SECONDS to answer "
           "before reporting that they did not (importing torch gets 4x)")
        ->envname("TRAINRIG_TIMEOUT")
        ->check(CLI::Range(0.1, 600.0))
        ->default_str("5")
        ->type_name("SECONDS");
}

void declare_machine_options(CLI::App& app, CollectOptions& opts) {
    declare_root_options(app, opts);
    app.add_option("--data-dir", opts.data_dir,
                   "Check the storage behind the folder training data is read from")
        ->envname("TRAINRIG_DATA_DIR")
        ->type_name("PATH");
    app.add_option("--env-file", opts.env_file,
                   "Judge the NCCL/torch variables in FILE (KEY=VALUE lines) instead of this "
                   "process's environment")
        ->type_name("FILE");
}

void declare_output_options(CLI::App& app, OutputOptions& opts) {
    app.add_option("-o,--output", opts.output,
                   "Write to FILE (replaced atomically: readers never see half a file) instead of "
                   "stdout; - is stdout")
        ->type_name("FILE");
}

std::string json_result(nlohmann::json doc, std::string_view command, int exit_code) {
    doc["trainrig_version"] = kTrainrigVersion;
    doc["command"] = std::string(command);
    doc["exit_code"] = exit_code;
    return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Status write_output(const OutputOptions& opts, const std::string& text) {
    if (opts.output && *opts.output != "-") return write_file_atomic(*opts.output, text);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
        return errno_status(errno, "write", "standard output");
    return ok_status();
}

}  // namespace trainrig
