# How GoogleTest executables reach CTest.
#
# Per case (the default): every test case is a CTest test of its own (gtest_discover_tests), so
# `ctest -R` picks one and a crash names its case. Per binary (TRAINRIG_TESTS_PER_BINARY, set by
# the debug-asan preset): each executable runs whole, split into TRAINRIG_TEST_SHARDS shards
# (GoogleTest's own sharding). A sanitized Debug test binary takes about 0.8 s to start, which,
# paid once per case, was 10 of the sanitizer run's 19 minutes.
#
# Cases matched by a SLOW pattern are labelled `slow`: they run in the plain suite, scheduled
# first (COST), and the sanitizer run (`ctest --preset debug-asan`, which excludes `slow`) leaves
# them out. Discovered cases carry `slow` alone (gtest_discover_tests flattens a list-valued
# LABELS into separate properties); per binary, the slow part carries its kind and `slow`. Every
# test has a label: unit, integration, reference, gpu, script or slow.
option(TRAINRIG_TESTS_PER_BINARY "Register each test executable as a whole instead of per case"
       OFF)
set(TRAINRIG_TEST_SHARDS 2 CACHE STRING "Shards per test executable in per-binary mode")

# trainrig_register_tests(TARGET LABEL [PREFIX p] [SLOW gtest-pattern...] [PROPERTIES prop value...])
# PREFIX goes before each discovered case's name: two binaries built from one test source (the
# GPU tests, on a GPU and on the emulated device) give their cases distinct CTest names.
function(trainrig_register_tests target label)
    cmake_parse_arguments(arg "" "PREFIX" "SLOW;PROPERTIES" ${ARGN})
    string(JOIN ":" slow ${arg_SLOW})
    if(TRAINRIG_TESTS_PER_BINARY)
        set(rest "")
        if(slow)
            set(rest "--gtest_filter=-${slow}")
        endif()
        math(EXPR last "${TRAINRIG_TEST_SHARDS} - 1")
        foreach(i RANGE ${last})
            add_test(NAME ${target}.shard${i} COMMAND ${target} ${rest})
            set_tests_properties(${target}.shard${i} PROPERTIES LABELS "${label}"
                ENVIRONMENT_MODIFICATION
                    "GTEST_TOTAL_SHARDS=set:${TRAINRIG_TEST_SHARDS};GTEST_SHARD_INDEX=set:${i}"
                ${arg_PROPERTIES})
        endforeach()
        if(slow)
            add_test(NAME ${target}.slow COMMAND ${target} "--gtest_filter=${slow}")
            set_tests_properties(${target}.slow PROPERTIES LABELS "${label};slow" COST 30
                                 ${arg_PROPERTIES})
        endif()
    elseif(slow)
        gtest_discover_tests(${target} TEST_FILTER "-${slow}" DISCOVERY_TIMEOUT 60
                             TEST_PREFIX "${arg_PREFIX}"
                             PROPERTIES LABELS "${label}" ${arg_PROPERTIES})
        gtest_discover_tests(${target} TEST_FILTER "${slow}" DISCOVERY_TIMEOUT 60
                             TEST_PREFIX "${arg_PREFIX}"
                             PROPERTIES LABELS slow COST 30 ${arg_PROPERTIES})
    else()
        gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${arg_PREFIX}"
                             PROPERTIES LABELS "${label}" ${arg_PROPERTIES})
    endif()
endfunction()

# trainrig_add_test(NAME LABEL SOURCES... [PREFIX p] [SLOW gtest-pattern...]): one GoogleTest
# executable linked with trainrig_core, its cases registered as above.
function(trainrig_add_test name label)
    cmake_parse_arguments(arg "" "PREFIX;BINARY" "SLOW" ${ARGN})
    if(NOT arg_BINARY)
        set(arg_BINARY "$<TARGET_FILE:trainrig>")
    endif()
    add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
    target_link_libraries(${name} PRIVATE trainrig_core GTest::gtest GTest::gtest_main)
    target_compile_definitions(${name} PRIVATE
        TRAINRIG_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
        TRAINRIG_BINARY="${arg_BINARY}")
    trainrig_warnings(${name})
    # Test sources only drive the code under test, which keeps the build's optimisation: they
    # compile without it, in about half the time (10.7 s against 5.6 s for a rules test file).
    target_compile_options(${name} PRIVATE -O0)
    trainrig_register_tests(${name} ${label} PREFIX "${arg_PREFIX}" SLOW ${arg_SLOW})
endfunction()
