# trainrig_warnings(target): the warning set every trainrig target compiles with.
function(trainrig_warnings target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             -Wno-sign-conversion -Wnon-virtual-dtor)
    if(TRAINRIG_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()
