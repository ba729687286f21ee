# Decides whether the emulated CUDA device is built (tests/emulator, docs/testing.md): it needs
# the CUDA toolkit's headers (not nvcc, not a driver) and Boost.Context for its fibers.
set(TRAINRIG_WITH_GPU_EMULATOR OFF)
if(NOT TRAINRIG_GPU_EMULATOR STREQUAL "OFF")
    find_package(CUDAToolkit QUIET)
    find_package(Boost 1.74 QUIET COMPONENTS context)
    if(CUDAToolkit_FOUND AND Boost_CONTEXT_FOUND)
        set(TRAINRIG_WITH_GPU_EMULATOR ON)
        message(STATUS "trainrig: emulated CUDA device enabled")
    elseif(TRAINRIG_GPU_EMULATOR STREQUAL "ON")
        message(FATAL_ERROR "TRAINRIG_GPU_EMULATOR=ON needs the CUDA toolkit's headers and "
                            "Boost.Context (libboost-context-dev)")
    else()
        message(STATUS "trainrig: no CUDA headers or Boost.Context, emulated CUDA device not built")
    endif()
endif()
