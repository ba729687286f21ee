# What `cmake --install` puts where, and the Debian package CPack builds from it (`make package`,
# docs/packaging.md): the binary, the CUDA plugins when they are built, the systemd unit, man
# pages generated from the binary's own help, example configuration files and the documentation.
#
# The same file is the script that writes the generated files when installing, run as
#   cmake -DMODE=man -DTRAINRIG_BINARY=... -DHELP2MAN=... -DOUT_DIR=... -DTRAINRIG_VERSION=... -P
#   cmake -DMODE=examples -DSOURCE_DIR=... -DOUT_DIR=... -P
# so the packaging lives in one place.

if(CMAKE_SCRIPT_MODE_FILE)
    # ---- script mode -------------------------------------------------------------------------
    cmake_policy(VERSION 3.25)

    # The help text of `trainrig ARGN... --help`, as the user sees it.
    function(trainrig_help out)
        execute_process(COMMAND ${TRAINRIG_BINARY} ${ARGN} --help
                        OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
        if(NOT rc EQUAL 0)
            message(FATAL_ERROR "`trainrig ${ARGN} --help` failed (${rc}): ${err}")
        endif()
        set(${out} "${text}" PARENT_SCOPE)
    endfunction()

    # The names in the "Subcommands:" block of a help text, in its order, without `help` (which
    # only shows these pages' text).
    function(trainrig_subcommands text out)
        set(names "")
        if("${text}" MATCHES "\nSubcommands:\n(( [^\n]*\n)*)")
            string(REGEX MATCHALL "(^|\n)  [A-Za-z0-9][A-Za-z0-9_-]*" found "${CMAKE_MATCH_1}")
            foreach(name IN LISTS found)
                string(STRIP "${name}" name)
                if(NOT name STREQUAL "help")
                    list(APPEND names ${name})
                endif()
            endforeach()
        endif()
        set(${out} "${names}" PARENT_SCOPE)
    endfunction()

    # Text as roff that prints it unchanged, one output line per input line: help2man would read
    # the examples' "command   # comment" columns as option tables and fill the lines together.
    function(trainrig_roff_verbatim text out)
        string(REGEX REPLACE "\n+$" "" text "${text}")
        string(REPLACE "\\" "\\e" text "${text}")
        string(REPLACE "-" "\\-" text "${text}")
        # \& first on every line: no line is read as a request (".", "'") or, in help2man's
        # include file, as a [section] or /pattern/.
        string(REPLACE "\n" "\n\\&" text "${text}")
        set(${out} ".nf\n\\&${text}\n.fi\n" PARENT_SCOPE)
    endfunction()

    # One page: NAME is the page's name (trainrig-tune-apply), ARGS the command path (tune apply),
    # SEE_ALSO the related pages' names.
    function(trainrig_man_page name args see_also)
        trainrig_help(help ${args})
        string(REGEX MATCH "^[^\n]*" summary "${help}")
        string(REGEX REPLACE "^trainrig " "" summary "${summary}")
        string(REPLACE "\\" "\\e" summary "${summary}")
        string(REPLACE "-" "\\-" summary "${summary}")

        # The "Examples:" block (indented lines up to the next heading) goes to EXAMPLES as it is.
        set(include "")
        string(FIND "${help}" "\nExamples:\n" at)
        if(NOT at EQUAL -1)
            string(SUBSTRING "${help}" 0 ${at} head)
            math(EXPR after "${at} + 11")
            string(SUBSTRING "${help}" ${after} -1 rest)
            string(REGEX MATCH "^(( [^\n]*)?\n)*" examples "${rest}")
            string(LENGTH "${examples}" length)
            string(SUBSTRING "${rest}" ${length} -1 tail)
            set(help "${head}\n\n${tail}")
            string(REGEX REPLACE "(^|\n)  " "\\1" examples "${examples}")
            trainrig_roff_verbatim("${examples}" examples)
            string(APPEND include "[EXAMPLES]\n${examples}\n")
        endif()

        string(APPEND include "[SEE ALSO]\n")
        foreach(other IN LISTS see_also)
            string(REPLACE "-" "\\-" other "${other}")
            string(APPEND include ".BR ${other} (1)\n")
        endforeach()
        string(APPEND include
            ".PP\nThe documentation (README.md and docs/*.md of the trainrig source) is installed "
            "with it under share/doc/trainrig: /usr/share/doc/trainrig from the Debian package.\n")

        # help2man reads the text through a program of the page's name, which sets the page's
        # title and NAME.
        set(work ${OUT_DIR}/work)
        file(WRITE ${work}/${name}.help "${help}")
        file(WRITE ${work}/${name}.include "${include}")
        file(WRITE ${work}/bin/${name} "#!/bin/sh\nexec cat '${work}/${name}.help'\n")
        file(CHMOD ${work}/bin/${name} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
             GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
        set(page ${OUT_DIR}/man1/${name}.1)
        execute_process(
            COMMAND ${HELP2MAN} --no-info --section=1 --version-string=${TRAINRIG_VERSION}
                    "--name=${summary}" "--source=trainrig ${TRAINRIG_VERSION}"
                    --include=${work}/${name}.include --output=${page} ${work}/bin/${name}
            RESULT_VARIABLE rc ERROR_VARIABLE err)
        if(NOT rc EQUAL 0)
            message(FATAL_ERROR "help2man failed for ${name} (${rc}): ${err}")
        endif()
        # Debian policy: man pages compressed with gzip -9, without a name or time stamp (-n).
        execute_process(COMMAND gzip -9nf ${page} RESULT_VARIABLE rc)
        if(NOT rc EQUAL 0)
            message(FATAL_ERROR "gzip ${page} failed (${rc})")
        endif()
    endfunction()

    # The fenced block of a document whose language is LANG and whose first line begins FIRST.
    function(trainrig_doc_block doc lang first out)
        file(READ ${SOURCE_DIR}/${doc} text)
        string(FIND "${text}" "```${lang}\n${first}" at)
        if(at EQUAL -1)
            message(WARNING "${doc}: no ```${lang} block starting `${first}`; example not written")
            set(${out} "" PARENT_SCOPE)
            return()
        endif()
        string(LENGTH "```${lang}\n" open)
        math(EXPR at "${at} + ${open}")
        string(SUBSTRING "${text}" ${at} -1 text)
        string(FIND "${text}" "\n```" end)
        string(SUBSTRING "${text}" 0 ${end} text)
        set(${out} "${text}\n" PARENT_SCOPE)
    endfunction()

    if(MODE STREQUAL "man")
        # One page per command the binary lists, and one per subcommand of a command
        # (trainrig-tune-apply), so a new command or option needs no edit here.
        file(REMOVE_RECURSE ${OUT_DIR}/man1 ${OUT_DIR}/work)
        file(MAKE_DIRECTORY ${OUT_DIR}/man1 ${OUT_DIR}/work/bin)
        trainrig_help(top)
        trainrig_subcommands("${top}" commands)
        set(top_see_also "")
        foreach(command IN LISTS commands)
            list(APPEND top_see_also trainrig-${command})
        endforeach()
        trainrig_man_page(trainrig "" "${top_see_also}")
        foreach(command IN LISTS commands)
            trainrig_help(help ${command})
            trainrig_subcommands("${help}" subs)
            set(see_also trainrig)
            foreach(sub IN LISTS subs)
                list(APPEND see_also trainrig-${command}-${sub})
            endforeach()
            trainrig_man_page(trainrig-${command} ${command} "${see_also}")
            foreach(sub IN LISTS subs)
                trainrig_man_page(trainrig-${command}-${sub} "${command};${sub}"
                                  "trainrig;trainrig-${command}")
            endforeach()
        endforeach()
        file(REMOVE_RECURSE ${OUT_DIR}/work)
    elseif(MODE STREQUAL "examples")
        # The configuration files trainrig reads when a flag names them, taken from the
        # documents that describe them (tests/docs/examples.toml runs the same blocks).
        file(REMOVE_RECURSE ${OUT_DIR})
        file(MAKE_DIRECTORY ${OUT_DIR})
        foreach(spec "watch-alerts.toml|docs/watch.md|# defaults = false"
                     "tune-overrides.toml|docs/tuning.md|[sysctl]"
                     "plan-catalog.toml|docs/plan.md|[gpu.")
            string(REPLACE "|" ";" spec "${spec}")
            list(GET spec 0 file)
            list(GET spec 1 doc)
            list(GET spec 2 first)
            trainrig_doc_block(${doc} toml "${first}" text)
            if(text)
                file(WRITE ${OUT_DIR}/${file}
                     "# From ${doc}; there, every key is explained.\n${text}")
            endif()
        endforeach()
    else()
        message(FATAL_ERROR "TrainrigPackaging.cmake: MODE must be man or examples")
    endif()
    return()
endif()

# ---- project mode: install rules and CPack ------------------------------------------------

include(GNUInstallDirs)

install(TARGETS trainrig RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The plugins go where the binary looks after its own folder: ../lib/trainrig
# (src/core/plugin_library.cpp). Without CUDA they are not built and not installed.
foreach(plugin trainrig_gpu_bench trainrig_train_cuda)
    if(TARGET ${plugin})
        install(TARGETS ${plugin} LIBRARY DESTINATION lib/trainrig)
    endif()
endforeach()

# The systemd unit, its ExecStart pointed at the installed binary (the unit in packaging/ names
# /usr/local/bin for a hand install) and its hand-install comment left out. Rewritten at install
# time because only then is the prefix known: /usr in the package.
set(TRAINRIG_UNIT_SOURCE ${PROJECT_SOURCE_DIR}/packaging/trainrig-watch.service)
set(TRAINRIG_UNIT_STAGED ${CMAKE_BINARY_DIR}/packaging/trainrig-watch.service)
set(TRAINRIG_UNIT_BINDIR ${CMAKE_INSTALL_BINDIR})
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/packaging/install_unit.cmake @ONLY CONTENT [=[
file(READ "@TRAINRIG_UNIT_SOURCE@" unit)
string(FIND "${unit}" "[Unit]" at)
string(SUBSTRING "${unit}" ${at} -1 unit)
set(exec "ExecStart=${CMAKE_INSTALL_PREFIX}/@TRAINRIG_UNIT_BINDIR@/trainrig ")
string(REGEX REPLACE "\nExecStart=[^ \n]*/trainrig " "\n${exec}" unit "${unit}")
string(FIND "${unit}" "\n${exec}" found)
if(found EQUAL -1)
    message(FATAL_ERROR "@TRAINRIG_UNIT_SOURCE@: no `ExecStart=.../trainrig` line to rewrite")
endif()
file(WRITE "@TRAINRIG_UNIT_STAGED@" "# systemd unit for `trainrig watch` (docs/watch.md): \
systemctl enable --now trainrig-watch\n${unit}")
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system" TYPE FILE
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ FILES "@TRAINRIG_UNIT_STAGED@")
]=])
install(SCRIPT ${CMAKE_BINARY_DIR}/packaging/install_unit.cmake)

# Man pages, one per command and subcommand, from the built binary's --help (help2man), and the
# example configuration files, from the documents that describe them. Both are written when
# installing (`cmake --install`, CPack), not in every build: the pages run the binary about fifty
# times, which a sanitizer build would pay on each link. `man_pages` writes the pages into the
# build tree to look at them.
set(TRAINRIG_MAN_DIR ${CMAKE_BINARY_DIR}/man)
set(TRAINRIG_EXAMPLES_DIR ${CMAKE_BINARY_DIR}/examples)
find_program(TRAINRIG_HELP2MAN help2man)
if(TRAINRIG_HELP2MAN)
    set(TRAINRIG_MAN_COMMAND ${CMAKE_COMMAND} -DMODE=man -DTRAINRIG_BINARY=$<TARGET_FILE:trainrig>
        -DHELP2MAN=${TRAINRIG_HELP2MAN} -DOUT_DIR=${TRAINRIG_MAN_DIR}
        -DTRAINRIG_VERSION=${PROJECT_VERSION} -P ${CMAKE_CURRENT_LIST_FILE})
    add_custom_target(man_pages COMMAND ${TRAINRIG_MAN_COMMAND} DEPENDS trainrig
                      COMMENT "Writing man pages from trainrig --help into ${TRAINRIG_MAN_DIR}"
                      VERBATIM)
    list(JOIN TRAINRIG_MAN_COMMAND "\" \"" quoted)
    install(CODE "execute_process(COMMAND \"${quoted}\" COMMAND_ERROR_IS_FATAL ANY)")
    install(DIRECTORY ${TRAINRIG_MAN_DIR}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR}
            FILES_MATCHING PATTERN "*.1.gz")
else()
    message(STATUS
            "trainrig: help2man not found; no man pages (scripts/install-deps.sh installs it)")
endif()

# Example configuration files, under the documentation: trainrig reads none of them unless a
# flag names it, so none is a conffile in /etc.
install(CODE "execute_process(COMMAND \"${CMAKE_COMMAND}\" -DMODE=examples
    \"-DSOURCE_DIR=${PROJECT_SOURCE_DIR}\" \"-DOUT_DIR=${TRAINRIG_EXAMPLES_DIR}\"
    -P \"${CMAKE_CURRENT_LIST_FILE}\" COMMAND_ERROR_IS_FATAL ANY)")
install(DIRECTORY ${TRAINRIG_EXAMPLES_DIR}/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        FILES_MATCHING PATTERN "*.toml")

# The fleet's integrations (docs/fleet.md): Slurm's HealthCheckProgram wrapper where slurm.conf
# names it, the Prometheus rules and the Kubernetes example beside the other examples.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/packaging/slurm/slurm-healthcheck DESTINATION lib/trainrig)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/prometheus/trainrig-rules.yml
              ${PROJECT_SOURCE_DIR}/packaging/kubernetes/trainrig-npd.yaml
              ${PROJECT_SOURCE_DIR}/packaging/kubernetes/Dockerfile.npd
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# The documentation the help text points to (docs/checks.md, docs/formats.md...).
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.json")

# Maintainer scripts: the unit's system user, and systemd told about the unit. The service is
# not enabled on install: `systemctl enable --now trainrig-watch` is the operator's choice.
set(TRAINRIG_DEB_DIR ${CMAKE_BINARY_DIR}/packaging/debian)
file(WRITE ${TRAINRIG_DEB_DIR}/postinst [=[#!/bin/sh
set -e
if [ "$1" = configure ]; then
    # The user trainrig-watch.service runs as (User=trainrig); StateDirectory= makes its home.
    if ! getent passwd trainrig >/dev/null; then
        useradd --system --user-group --no-create-home --home-dir /var/lib/trainrig \
            --shell /usr/sbin/nologin --comment "trainrig watch" trainrig
    fi
    # Where `trainrig validate --report` writes and the health checks read (TRAINRIG_REPORTS):
    # a reports folder that exists, empty until the first validate, so that naming it is no
    # error (a path given that does not exist is one).
    install -d -m 0755 /var/lib/trainrig/reports
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload >/dev/null || true
        systemctl try-restart trainrig-watch.service >/dev/null || true
    fi
fi
exit 0
]=])
file(WRITE ${TRAINRIG_DEB_DIR}/prerm [=[#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
    systemctl disable --now trainrig-watch.service >/dev/null 2>&1 || true
fi
exit 0
]=])
file(WRITE ${TRAINRIG_DEB_DIR}/postrm [=[#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null || true
fi
exit 0
]=])

set(TRAINRIG_PACKAGE_MAINTAINER "trainrig maintainers <trainrig@localhost>" CACHE STRING
    "The Maintainer field of the Debian package: Name <address>")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME trainrig)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${TRAINRIG_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "validate, tune and monitor GPU servers for LLM training")
# Lines of at most 80 columns, as the control file's description wants them.
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
    "trainrig proves a GPU server ready to train: doctor's checks, the topology,"
    "benchmarks and a training run give one verdict and an auditable report. It"
    "tunes the machine (sysctl, limits, NCCL environment, NUMA binding) with"
    "rollback, watches it (NVML telemetry, Xid events, Prometheus metrics) and"
    "judges a fleet of nodes together. The GPU driver is loaded at run time, so"
    "trainrig runs on machines without one.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # trainrig_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends from the ELF files' needs (dpkg-shlibdeps). The CUDA plugins' cuBLASLt and NCCL come
# from NVIDIA's toolkit, not from a Debian package: they are left out (--ignore-missing-info,
# which CPack passes), and the plugins are loaded only when asked. NVML is dlopened.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(TRAINRIG_SHLIBDEPS_DIRS "")
if(CUDAToolkit_LIBRARY_DIR)
    list(APPEND TRAINRIG_SHLIBDEPS_DIRS ${CUDAToolkit_LIBRARY_DIR})
endif()
if(TRAINRIG_NCCL_LIBRARY)
    get_filename_component(nccl_dir ${TRAINRIG_NCCL_LIBRARY} DIRECTORY)
    list(APPEND TRAINRIG_SHLIBDEPS_DIRS ${nccl_dir})
endif()
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${TRAINRIG_SHLIBDEPS_DIRS}")
# useradd in postinst.
set(CPACK_DEBIAN_PACKAGE_DEPENDS passwd)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${TRAINRIG_DEB_DIR}/postinst;${TRAINRIG_DEB_DIR}/prerm;${TRAINRIG_DEB_DIR}/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
    GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_THREADS 0)
# The `package_source` target: the source tree, without build folders.
set(CPACK_SOURCE_GENERATOR TXZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build/" "/build-[^/]*/" "/\\\\.cache/" "__pycache__")
include(CPack)
