# Build options. Each is a cache variable so `cmake -D...` and CMakePresets.json can set it.
set(TRAINRIG_CUDA AUTO CACHE STRING "Build the CUDA parts: AUTO (when a toolkit is found), ON, OFF")
set_property(CACHE TRAINRIG_CUDA PROPERTY STRINGS AUTO ON OFF)
option(TRAINRIG_BUILD_TESTS "Build the GoogleTest suites" ON)
option(TRAINRIG_BUILD_BENCH "Build the Google Benchmark microbenchmarks" ON)
option(TRAINRIG_FUZZ "Build libFuzzer harnesses (needs clang)" OFF)
option(TRAINRIG_WERROR "Treat warnings as errors" OFF)
set(TRAINRIG_GPU_EMULATOR AUTO CACHE STRING
    "Build the emulated CUDA device and the GPU code for it (tests/emulator): AUTO (when the CUDA toolkit's headers and Boost.Context are found), ON, OFF")
set_property(CACHE TRAINRIG_GPU_EMULATOR PROPERTY STRINGS AUTO ON OFF)
