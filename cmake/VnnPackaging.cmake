# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# pkg-config file and Debian packages (cpack -G DEB in the build directory).
#
#   libvnn                libvnn.so, vnn-devices, the cpu and opencl plugins in lib/vnn
#   libvnn-dev            headers, CMake config (find_package(vnn)), vnn.pc
#   libvnn-backend-cuda   the CUDA plugin (only when VNN_BACKEND_CUDA is ON)
#   libvnn-backend-hip    the HIP plugin (only when VNN_BACKEND_HIP is ON)
#
# Each is a CPack component; the shared-library dependencies come from
# dpkg-shlibdeps (ocl-icd-libopencl1, libopenblas0-openmp, libgomp1, ...),
# so a CPU machine installing libvnn never pulls in a GPU runtime.
include_guard(GLOBAL)

if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(FATAL_ERROR "vnn: vnn.pc needs a relative CMAKE_INSTALL_LIBDIR, got ${CMAKE_INSTALL_LIBDIR}")
endif()
file(RELATIVE_PATH VNN_PC_PREFIX_REL "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" VNN_PC_PREFIX_REL "${VNN_PC_PREFIX_REL}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/vnn.pc.in" "${PROJECT_BINARY_DIR}/vnn.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/vnn.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT dev)

# Every package carries vnn's LICENSE and THIRD-PARTY-NOTICES (what vnn links
# or bundles, with their licenses) in /usr/share/doc/<package>/, as Debian
# puts a package's copyright there; a GPU package only where its plugin is built.
set(_vnn_doc_packages runtime libvnn dev libvnn-dev)
if(VNN_BACKEND_CUDA)
  list(APPEND _vnn_doc_packages backend_cuda libvnn-backend-cuda)
endif()
if(VNN_BACKEND_HIP)
  list(APPEND _vnn_doc_packages backend_hip libvnn-backend-hip)
endif()
while(_vnn_doc_packages)
  list(POP_FRONT _vnn_doc_packages _vnn_component _vnn_package)
  install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" "${PROJECT_SOURCE_DIR}/THIRD-PARTY-NOTICES"
    DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_vnn_package}" COMPONENT ${_vnn_component})
endwhile()
install(FILES "${PROJECT_SOURCE_DIR}/CHANGELOG.md" DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/libvnn"
  COMPONENT runtime)

set(CPACK_PACKAGE_NAME libvnn)
set(CPACK_PACKAGE_VENDOR "vnn")
set(CPACK_PACKAGE_CONTACT "vnn maintainers <vnn@localhost>")
# The version: project(VERSION) in CMakeLists.txt, as vnn.pc, vnnConfigVersion.cmake and vnn/version.h.
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${PROJECT_BINARY_DIR}/lib")
set(CPACK_DEBIAN_PACKAGE_SECTION libs)

set(_vnn_same "(= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libvnn)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "vnn runtime: libvnn.so, vnn-devices and the CPU (OpenMP) and OpenCL backend plugins")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libvnn-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libvnn ${_vnn_same}")
set(CPACK_COMPONENT_DEV_DESCRIPTION "vnn development files: headers, CMake package config, pkg-config vnn.pc")
set(CPACK_DEBIAN_BACKEND_CUDA_PACKAGE_NAME libvnn-backend-cuda)
set(CPACK_COMPONENT_BACKEND_CUDA_DESCRIPTION "vnn CUDA backend plugin (Kokkos Cuda, cuBLAS)")
# cuBLAS and the CUDA runtime usually come from NVIDIA's installer, which
# dpkg-shlibdeps cannot map to a Debian package: depend on libvnn only.
set(CPACK_DEBIAN_BACKEND_CUDA_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_BACKEND_CUDA_PACKAGE_DEPENDS "libvnn ${_vnn_same}")
set(CPACK_DEBIAN_BACKEND_HIP_PACKAGE_NAME libvnn-backend-hip)
set(CPACK_COMPONENT_BACKEND_HIP_DESCRIPTION "vnn HIP backend plugin (Kokkos HIP, Debian's ROCm)")
set(CPACK_DEBIAN_BACKEND_HIP_PACKAGE_DEPENDS "libvnn ${_vnn_same}")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
include(CPack)
