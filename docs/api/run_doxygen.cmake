# ctest docs_api: every header of include/vnn (and the generated
# vnn/version.h) has its \file entry in docs/api/namespaces.dox, and Doxygen
# over all of them gives no warning (an undocumented public name, a bad doc
# command). Failures are printed.
file(GLOB_RECURSE headers RELATIVE "${SRC}/include" "${SRC}/include/vnn/*.h")
file(GLOB_RECURSE generated RELATIVE "${BIN}/include" "${BIN}/include/vnn/*.h")
list(APPEND headers ${generated})
file(READ "${SRC}/docs/api/namespaces.dox" dox)
set(missing "")
foreach(h IN LISTS headers)
  string(FIND "${dox}" "\\file ${h}\n" at)
  if(at EQUAL -1)
    string(APPEND missing "  ${h}\n")
  endif()
endforeach()
if(NOT missing STREQUAL "")
  message(FATAL_ERROR "docs_api: headers without a \\file entry in docs/api/namespaces.dox "
                      "(add one, with a \\brief):\n${missing}")
endif()

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
list(LENGTH headers n)
message(STATUS "docs_api: ${n} headers, no Doxygen warnings")
