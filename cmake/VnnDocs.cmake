# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The API reference (Doxygen, Debian's doxygen package).
#   docs target        HTML of all of include/vnn in <build>/docs/api/html.
#   docs_api ctest     The same Doxygen run with FAIL_ON_WARNINGS: any
#                      undocumented public class, function, member, enum,
#                      typedef or macro in include/vnn (detail:: excluded)
#                      fails it, and so does a header without its \file
#                      entry in docs/api/namespaces.dox (without one Doxygen
#                      would not check the header's file-scope names).
#                      Skipped, with the reason, where doxygen is absent.
include_guard(GLOBAL)
find_package(Doxygen QUIET)
set(_vnn_doxygen_input
    "${PROJECT_SOURCE_DIR}/include/vnn ${PROJECT_BINARY_DIR}/include/vnn ${PROJECT_SOURCE_DIR}/docs/api/namespaces.dox")

function(_vnn_doxyfile out_dir warn_as_error doxyfile)
  set(VNN_DOXYGEN_OUT "${out_dir}")
  set(VNN_DOXYGEN_INPUT "${_vnn_doxygen_input}")
  set(VNN_DOXYGEN_WARN_AS_ERROR "${warn_as_error}")
  configure_file("${PROJECT_SOURCE_DIR}/docs/api/Doxyfile.in" "${doxyfile}" @ONLY)
endfunction()

if(NOT DOXYGEN_FOUND)
  message(STATUS "vnn: doxygen not found, no docs target; docs_api will be skipped (apt-get install doxygen)")
  if(VNN_BUILD_TESTS)
    add_test(NAME docs_api COMMAND ${CMAKE_COMMAND} -E echo
             "docs_api skipped: doxygen not found (apt-get install doxygen, or run ci/install-deps.sh)")
    set_tests_properties(docs_api PROPERTIES LABELS "docs;cpu" SKIP_REGULAR_EXPRESSION "docs_api skipped")
  endif()
  return()
endif()

_vnn_doxyfile("${PROJECT_BINARY_DIR}/docs/api" NO "${PROJECT_BINARY_DIR}/docs/Doxyfile")
add_custom_target(docs
  COMMAND ${CMAKE_COMMAND} -E make_directory "${PROJECT_BINARY_DIR}/docs/api"
  COMMAND Doxygen::doxygen "${PROJECT_BINARY_DIR}/docs/Doxyfile"
  COMMAND ${CMAKE_COMMAND} -E echo "vnn: API reference in ${PROJECT_BINARY_DIR}/docs/api/html/index.html"
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
  COMMENT "Doxygen: API reference of include/vnn"
  VERBATIM)

if(VNN_BUILD_TESTS)
  _vnn_doxyfile("${PROJECT_BINARY_DIR}/docs/checked" FAIL_ON_WARNINGS "${PROJECT_BINARY_DIR}/docs/Doxyfile.checked")
  add_test(NAME docs_api COMMAND ${CMAKE_COMMAND} -DDOXYGEN=${DOXYGEN_EXECUTABLE}
           -DDOXYFILE=${PROJECT_BINARY_DIR}/docs/Doxyfile.checked -DOUT=${PROJECT_BINARY_DIR}/docs/checked
           -DSRC=${PROJECT_SOURCE_DIR} -DBIN=${PROJECT_BINARY_DIR}
           -P "${PROJECT_SOURCE_DIR}/docs/api/run_doxygen.cmake")
  set_tests_properties(docs_api PROPERTIES LABELS "docs;cpu" TIMEOUT 300)
endif()
