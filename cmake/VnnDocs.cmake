# The API reference (Doxygen, Debian's doxygen package).
#   docs target        HTML of all of include/vnn in <build>/docs/api/html;
#                      undocumented API is listed in warnings.log, not fatal.
#   docs_api ctest     Doxygen with FAIL_ON_WARNINGS over the headers of
#                      VNN_DOCS_CHECKED, which must stay fully documented
#                      (a brief on every public class, function and member).
#                      A header joins the list once it is documented.
include_guard(GLOBAL)
find_package(Doxygen QUIET)
if(NOT DOXYGEN_FOUND)
  message(STATUS "vnn: doxygen not found, no docs target (apt-get install doxygen)")
  return()
endif()
set(VNN_DOCS_CHECKED utils/summary_writer.h)

function(_vnn_doxyfile out_dir input warn_as_error doxyfile)
  set(VNN_DOXYGEN_OUT "${out_dir}")
  set(VNN_DOXYGEN_INPUT "${input}")
  set(VNN_DOXYGEN_WARN_AS_ERROR "${warn_as_error}")
  configure_file("${PROJECT_SOURCE_DIR}/docs/api/Doxyfile.in" "${doxyfile}" @ONLY)
endfunction()

_vnn_doxyfile("${PROJECT_BINARY_DIR}/docs/api"
              "${PROJECT_SOURCE_DIR}/include/vnn ${PROJECT_BINARY_DIR}/include/vnn" NO
              "${PROJECT_BINARY_DIR}/docs/Doxyfile")
add_custom_target(docs
  COMMAND ${CMAKE_COMMAND} -E make_directory "${PROJECT_BINARY_DIR}/docs/api"
  COMMAND Doxygen::doxygen "${PROJECT_BINARY_DIR}/docs/Doxyfile"
  COMMAND ${CMAKE_COMMAND} -E echo "vnn: API reference in ${PROJECT_BINARY_DIR}/docs/api/html/index.html"
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
  COMMENT "Doxygen: API reference of include/vnn"
  VERBATIM)

if(VNN_BUILD_TESTS)
  set(_checked)
  foreach(h IN LISTS VNN_DOCS_CHECKED)
    string(APPEND _checked " ${PROJECT_SOURCE_DIR}/include/vnn/${h}")
  endforeach()
  _vnn_doxyfile("${PROJECT_BINARY_DIR}/docs/checked" "${_checked}" FAIL_ON_WARNINGS
                "${PROJECT_BINARY_DIR}/docs/Doxyfile.checked")
  add_test(NAME docs_api COMMAND ${CMAKE_COMMAND} -DDOXYGEN=${DOXYGEN_EXECUTABLE}
           -DDOXYFILE=${PROJECT_BINARY_DIR}/docs/Doxyfile.checked -DOUT=${PROJECT_BINARY_DIR}/docs/checked
           -P "${PROJECT_SOURCE_DIR}/docs/api/run_doxygen.cmake")
  set_tests_properties(docs_api PROPERTIES LABELS "docs;cpu" TIMEOUT 300)
endif()
