// libFuzzer entry point for the parser fuzz target (see fuzz_targets.h).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    trainrig::fuzz::parsers_one_input(data, size);
    return 0;
}
