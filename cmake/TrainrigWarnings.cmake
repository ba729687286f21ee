# trainrig_warnings(target): the warning set every trainrig target compiles with. The flags are
# for the host compiler: nvcc takes them through -Xcompiler for its host pass, without the
# -Wpedantic and -Wconversion that its generated stubs would trip.
function(trainrig_warnings target)
    target_compile_options(${target} PRIVATE
        $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                  -Wno-sign-conversion -Wnon-virtual-dtor>
        $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow,-Wnon-virtual-dtor>)
    # GCC 12 reports -Warray-bounds inside std::map when nlohmann::json objects are built and
    # walked at -O2 (a false positive: GCC bug 107138). Nearly every file builds JSON, and a
    # unity build batches files together, so it is off for whole targets on GCC 12.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
        target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-array-bounds>)
    endif()
    if(TRAINRIG_WERROR)
        target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
                                                 $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
    endif()
endfunction()
