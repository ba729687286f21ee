# trainrig_add_test(NAME LABEL SOURCES...): one GoogleTest executable whose tests are discovered
# into CTest with the given label (unit, integration, gpu, slow, fuzz).
function(trainrig_add_test name label)
    add_executable(${name} ${ARGN})
    target_link_libraries(${name} PRIVATE trainrig_core GTest::gtest GTest::gtest_main)
    target_compile_definitions(${name} PRIVATE
        TRAINRIG_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
        TRAINRIG_BINARY="$<TARGET_FILE:trainrig>")
    trainrig_warnings(${name})
    gtest_discover_tests(${name} PROPERTIES LABELS ${label} DISCOVERY_TIMEOUT 60)
endfunction()
