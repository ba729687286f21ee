// libFuzzer entry point for the data fuzz target (see data_fuzz_targets.h).
#include "data_fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    trainrig::fuzz::data_one_input(data, size);
    return 0;
}
