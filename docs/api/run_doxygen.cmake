# ctest docs_api: Doxygen over the checked headers; any warning (an
# undocumented public name, a bad doc command) fails, and is printed.
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
set(log "")
if(EXISTS "${OUT}/warnings.log")
  file(READ "${OUT}/warnings.log" log)
endif()
if(rc OR NOT log STREQUAL "")
  message(FATAL_ERROR "doxygen (${rc}): undocumented or badly documented public API:\n${log}${err}")
endif()
message(STATUS "docs_api: no Doxygen warnings")
