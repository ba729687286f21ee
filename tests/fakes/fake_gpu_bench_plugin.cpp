// A stand-in for libtrainrig_gpu_bench.so (src/measure/gpu_plugin_abi.h) whose benchmarks never
// finish, for the tests of validate's stage watchdog: FAKE_GPU_BENCH=slow polls the cancel flag
// and returns "interrupted" once it is set, as a well-behaved benchmark does; FAKE_GPU_BENCH=hang
// ignores it, as a call stuck in the driver would; FAKE_GPU_BENCH=crash dies of SIGSEGV, as a
// benchmark that touches freed memory does. It lists one GPU and measures nothing.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#pragma GCC visibility push(default)
#include "measure/gpu_plugin_abi.h"
#pragma GCC visibility pop

namespace {

char* copy(const std::string& s) {
    char* out = static_cast<char*>(std::malloc(s.size() + 1));
    std::memcpy(out, s.c_str(), s.size() + 1);
    return out;
}

}  // namespace

extern "C" {

char* trainrig_gpu_bench_list(void) {
    return copy(R"({"abi": 1, "devices": [{"index": 0, "name": "Fake GPU", "pci_bus_id": )"
                R"("00000000:41:00.0", "compute_capability": "9.0", "memory_bytes": 1, )"
                R"("numa_node": 0, "pcie_gen": 5, "pcie_width": 16}], "error": null})");
}

char* trainrig_gpu_bench_run(const char*, const volatile int* cancel) {
    const char* mode = std::getenv("FAKE_GPU_BENCH");
    const bool hang = mode && std::strcmp(mode, "hang") == 0;
    if (mode && std::strcmp(mode, "crash") == 0) std::raise(SIGSEGV);
    while (hang || !*cancel) ::usleep(20000);
    return copy(R"({"records": [], "error": "interrupted"})");
}

void trainrig_gpu_bench_free(char* json) { std::free(json); }

}  // extern "C"
