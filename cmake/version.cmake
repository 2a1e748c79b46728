# Writes OUT (loopdyn/core/version.hpp) from IN with loopdyn's version: the project version and,
# in a git checkout, `git describe --always --dirty` (a tarball without git: the project version
# alone). Run at every build (target loopdyn_version); configure_file rewrites the header only
# when the text changes, so that an unchanged version recompiles nothing.
execute_process(COMMAND git describe --always --dirty --abbrev=10
                WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE describe ERROR_QUIET
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed)
if(failed OR describe STREQUAL "")
  set(LOOPDYN_VERSION_STRING "${PROJECT_VERSION}")
else()
  set(LOOPDYN_VERSION_STRING "${PROJECT_VERSION} (git ${describe})")
endif()
configure_file("${IN}" "${OUT}" @ONLY)
