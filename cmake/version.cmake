# SPDX-License-Identifier: Apache-2.0
# version.cmake: writes the generated header with the project's version and the
# git revision of the source tree (`git describe --always --dirty`, "unknown"
# outside git or without git). Run in script mode (cmake -P) by the
# `version_header` target before every build, so a new commit or a dirty tree
# shows without reconfiguring; configure_file rewrites the header only when its
# text changes, so an unchanged revision recompiles nothing. A build outside
# git (a container's context has no .git) names its revision in the environment
# variable SYMBOLIZER_REVISION (deploy/container/Containerfile: --build-arg
# REVISION=...); it wins over git.
#   -DSRC=<source dir> -DOUT=<header path> -DVERSION=<project version>
#   -DTEMPLATE=<cmake/base_version_gen.h.in>
set(SYMBOLIZER_REVISION "unknown")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE AND EXISTS "${SRC}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" describe --always --dirty
                  OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND rev)
    # Tags may hold any character: keep the header a plain C (and JSON) string.
    string(REGEX REPLACE "[^A-Za-z0-9._+-]" "_" rev "${rev}")
    set(SYMBOLIZER_REVISION "${rev}")
  endif()
endif()
if(NOT "$ENV{SYMBOLIZER_REVISION}" STREQUAL "")
  string(REGEX REPLACE "[^A-Za-z0-9._+-]" "_" rev "$ENV{SYMBOLIZER_REVISION}")
  set(SYMBOLIZER_REVISION "${rev}")
endif()
set(SYMBOLIZER_VERSION "${VERSION}")
configure_file("${TEMPLATE}" "${OUT}" @ONLY)
