# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Kokkos supply for vnn's Kokkos plugins.
#
#   vnn_provide_kokkos(<openmp|cuda|hip> <out_var>)
#
# sets <out_var> to a directory usable as Kokkos_DIR (it holds
# KokkosConfig.cmake) for find_package(Kokkos CONFIG REQUIRED), and in the
# caller's scope also
#   VNN_KOKKOS_<CONFIG>_VERSION       "3.4.1"
#   VNN_KOKKOS_<CONFIG>_ORIGIN        where it came from (for logs)
#   VNN_KOKKOS_<CONFIG>_CXX_COMPILER  compiler a consumer must use (cuda: a
#                                     fixed nvcc_wrapper, hip: hipcc, openmp:
#                                     the caller's CMAKE_CXX_COMPILER)
#   VNN_KOKKOS_<CONFIG>_CXX_FLAGS     flags a consumer must add (the CUDA 13
#                                     measures for Kokkos 3.x, else empty)
#
# Order:
#  1. A user-given Kokkos (VNN_KOKKOS_<CONFIG>_DIR, Kokkos_DIR, Kokkos_ROOT,
#     CMAKE_PREFIX_PATH, in that order) whose enabled devices match the
#     config: OpenMP for openmp, Cuda for cuda, HIP for hip. Its config files
#     are read, not loaded, so a CUDA Kokkos never enters a host project.
#  2. Otherwise Kokkos is built from source at configure time into a cache
#     outside the source tree,
#       ${VNN_KOKKOS_CACHE_DIR}/<version>-<config>-<hash>/install
#     (static, -fPIC, Release, Serial + the device), once: a stamp marks a
#     finished build and file(LOCK) serialises concurrent configures. The
#     source comes from cmake/kokkos/fetch-kokkos.sh (VNN_KOKKOS_SOURCE, then
#     Debian's trilinos source package, then an upstream release tarball).
#
#   vnn_kokkos_devices_match(<config> <out_var>)
# after a find_package(Kokkos) in the caller's project: TRUE when the found
# Kokkos's Kokkos_DEVICES suit <config> (top levels that find_package first
# use it to decide whether the fallback is needed).
include_guard(GLOBAL)

set(VNN_KOKKOS_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}/kokkos" CACHE INTERNAL "")

if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_vnn_kokkos_default_cache "$ENV{XDG_CACHE_HOME}/vnn/kokkos")
else()
  set(_vnn_kokkos_default_cache "$ENV{HOME}/.cache/vnn/kokkos")
endif()
set(VNN_KOKKOS_CACHE_DIR "${_vnn_kokkos_default_cache}" CACHE PATH
    "Where vnn keeps Kokkos sources and the Kokkos builds it makes")
set(VNN_KOKKOS_SOURCE "$ENV{VNN_KOKKOS_SOURCE}" CACHE STRING
    "Kokkos (or Trilinos) source directory or tarball to build Kokkos from")
set(VNN_KOKKOS_CUDA_ARCH "AMPERE80" CACHE STRING "Kokkos_ARCH_<x> for the CUDA Kokkos (AMPERE80: sm_80 + PTX)")
# Kokkos 3.4 knows no Hopper arch, and its Cuda::initialize aborts when the
# major compute capability its kernels were built for differs from the
# device's: PTX JIT is not enough, Hopper needs real sm_90 code. The Kokkos
# vnn builds gets these as extra SASS (numbers: 90 -> sm_90), passed by its
# nvcc_wrapper to every nvcc call (Kokkos itself and the plugin).
set(VNN_KOKKOS_CUDA_EXTRA_SASS "90" CACHE STRING
    "Extra sm_XX SASS compiled into the CUDA Kokkos vnn builds and its plugin (list of numbers, e.g. 90;100)")
set(VNN_KOKKOS_HIP_ARCH "VEGA908" CACHE STRING "Kokkos_ARCH_<x> for the HIP Kokkos")
# VNN_HIP_ARCHS: the other AMD archs (gfx90a, ...) Kokkos 3.4 cannot name.
include(${CMAKE_CURRENT_LIST_DIR}/VnnHipArchs.cmake)
set(VNN_KOKKOS_BUILD_JOBS "2" CACHE STRING "Parallel jobs for the configure-time Kokkos build")
# Bump when the build recipe below changes: it is part of the cache key.
set(_VNN_KOKKOS_RECIPE 4)

# Devices a config needs, as Kokkos_DEVICES spells them (upper case).
function(_vnn_kokkos_required_devices config out)
  if(config STREQUAL "openmp")
    set(${out} OPENMP SERIAL PARENT_SCOPE)
  elseif(config STREQUAL "cuda")
    set(${out} CUDA PARENT_SCOPE)
  elseif(config STREQUAL "hip")
    set(${out} HIP PARENT_SCOPE)
  else()
    message(FATAL_ERROR "vnn: unknown Kokkos config '${config}' (openmp, cuda or hip)")
  endif()
endfunction()

function(_vnn_kokkos_devices_ok config devices out)
  _vnn_kokkos_required_devices(${config} need)
  string(TOUPPER "${devices}" have)
  set(ok TRUE)
  foreach(d IN LISTS need)
    if(NOT d IN_LIST have)
      set(ok FALSE)
    endif()
  endforeach()
  # A host config must not pick a Kokkos with a device backend in it.
  if(config STREQUAL "openmp")
    foreach(d CUDA HIP SYCL OPENMPTARGET HPX)
      if(d IN_LIST have)
        set(ok FALSE)
      endif()
    endforeach()
  endif()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

function(vnn_kokkos_devices_match config out)
  _vnn_kokkos_devices_ok(${config} "${Kokkos_DEVICES}" ok)
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

# Human-readable device list: "OpenMP+Serial", "Cuda+Serial".
function(_vnn_kokkos_devices_text devices out)
  set(txt "")
  foreach(d IN LISTS devices)
    string(TOUPPER "${d}" u)
    if(u STREQUAL "OPENMP")
      set(n OpenMP)
    elseif(u STREQUAL "SERIAL")
      set(n Serial)
    elseif(u STREQUAL "CUDA")
      set(n Cuda)
    elseif(u STREQUAL "HIP")
      set(n HIP)
    else()
      set(n ${d})
    endif()
    if(txt STREQUAL "")
      set(txt ${n})
    else()
      set(txt "${txt}+${n}")
    endif()
  endforeach()
  set(${out} "${txt}" PARENT_SCOPE)
endfunction()

# Reads an installed Kokkos's devices and version without loading it.
# <dir> is a Kokkos_DIR (holding KokkosConfig.cmake).
function(_vnn_kokkos_read_install dir out_devices out_version)
  set(devices "")
  set(version "")
  if(EXISTS "${dir}/KokkosConfigCommon.cmake")
    file(STRINGS "${dir}/KokkosConfigCommon.cmake" lines REGEX "^[ \t]*[Ss][Ee][Tt][ \t]*\\([ \t]*Kokkos_DEVICES[ \t]")
    if(lines)
      list(GET lines 0 l)
      string(REGEX REPLACE "^[ \t]*[Ss][Ee][Tt][ \t]*\\([ \t]*Kokkos_DEVICES[ \t]+\"?([^\")]*)\"?[ \t]*\\).*" "\\1" devices "${l}")
      string(REPLACE " " ";" devices "${devices}")
    endif()
  endif()
  if(EXISTS "${dir}/KokkosConfigVersion.cmake")
    file(STRINGS "${dir}/KokkosConfigVersion.cmake" lines REGEX "PACKAGE_VERSION \"[0-9.]+\"")
    if(lines)
      list(GET lines 0 l)
      string(REGEX REPLACE ".*PACKAGE_VERSION \"([0-9.]+)\".*" "\\1" version "${l}")
    endif()
  endif()
  set(${out_devices} "${devices}" PARENT_SCOPE)
  set(${out_version} "${version}" PARENT_SCOPE)
endfunction()

# Turns a user hint (a Kokkos_DIR or an install prefix) into a Kokkos_DIR.
function(_vnn_kokkos_config_dir hint out)
  set(${out} "" PARENT_SCOPE)
  foreach(sub "" lib/cmake/Kokkos lib64/cmake/Kokkos lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/Kokkos
              share/cmake/Kokkos cmake)
    if(EXISTS "${hint}/${sub}/KokkosConfig.cmake")
      get_filename_component(d "${hint}/${sub}" ABSOLUTE)
      set(${out} "${d}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# cuda: a copy of an nvcc_wrapper whose default arch CUDA 13 accepts and which
# calls the nvcc found here, whatever PATH says at build time.
function(_vnn_kokkos_fix_nvcc_wrapper src dst arch nvcc extra_sass)
  file(READ "${src}" text)
  set(gencode "")
  foreach(s IN LISTS extra_sass)
    string(APPEND gencode " --generate-code=arch=compute_${s},code=sm_${s}")
  endforeach()
  if(gencode)
    string(REPLACE "nvcc_command=\"$nvcc_compiler $cuda_args" "nvcc_command=\"$nvcc_compiler${gencode} $cuda_args"
           text "${text}")
    if(NOT text MATCHES "--generate-code=arch=compute_")
      message(FATAL_ERROR "vnn: cannot add ${gencode} to ${src}: its nvcc_command line is not the one vnn knows")
    endif()
  endif()
  string(REGEX REPLACE "\ndefault_arch=\"sm_[0-9]+\"" "\ndefault_arch=\"${arch}\"" text "${text}")
  string(REPLACE "\nnvcc_compiler=nvcc\n" "\nnvcc_compiler=\"${nvcc}\"\n" text "${text}")
  get_filename_component(dir "${dst}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  file(WRITE "${dst}.tmp" "${text}")
  file(CHMOD "${dst}.tmp" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
       GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  file(RENAME "${dst}.tmp" "${dst}")
endfunction()

function(_vnn_kokkos_find_nvcc out)
  find_program(VNN_NVCC nvcc HINTS "$ENV{CUDA_HOME}/bin" "$ENV{CUDA_PATH}/bin" "$ENV{CUDA_ROOT}/bin"
               /usr/local/cuda/bin)
  set(${out} "${VNN_NVCC}" PARENT_SCOPE)
endfunction()

function(_vnn_kokkos_tool_version tool out)
  execute_process(COMMAND "${tool}" --version OUTPUT_VARIABLE v ERROR_VARIABLE e RESULT_VARIABLE rc)
  set(${out} "${v}${e}" PARENT_SCOPE)
endfunction()

# Compile-time measures a consumer of a <kokkos_version> CUDA Kokkos needs
# with the given nvcc, CUDA >= 13 only: the force-included overloads of the
# runtime calls CUDA 13 changed (vnn_cuda13_compat.h) for Kokkos < 4.7 (3.4.01
# and 4.6.01 measured; 4.7+ is not and gets none), and for Kokkos 3.x also
# -DKOKKOS_IMPL_HALF_TYPE_DEFINED (its Kokkos_Cuda_Half.hpp does not compile
# against CUDA 13's cuda_fp16.h; 4.6.01's does).
function(_vnn_kokkos_cuda_flags kokkos_version nvcc header_dir out)
  set(${out} "" PARENT_SCOPE)
  _vnn_kokkos_tool_version("${nvcc}" v)
  if(v MATCHES "release ([0-9]+)\\.")
    set(cuda_major ${CMAKE_MATCH_1})
  else()
    set(cuda_major 0)
  endif()
  if(kokkos_version VERSION_LESS 4.7 AND cuda_major GREATER_EQUAL 13)
    file(MAKE_DIRECTORY "${header_dir}")
    configure_file("${VNN_KOKKOS_MODULE_DIR}/vnn_cuda13_compat.h" "${header_dir}/vnn_cuda13_compat.h" COPYONLY)
    set(flags "-include ${header_dir}/vnn_cuda13_compat.h")
    if(kokkos_version VERSION_LESS 4.0)
      set(flags "-DKOKKOS_IMPL_HALF_TYPE_DEFINED ${flags}")
    endif()
    set(${out} "${flags}" PARENT_SCOPE)
  endif()
endfunction()

function(_vnn_kokkos_arch_sm arch out)
  # Kokkos arch name -> sm_XX for the wrapper's default.
  set(map "KEPLER35=sm_35;MAXWELL50=sm_50;PASCAL60=sm_60;PASCAL61=sm_61;VOLTA70=sm_70;VOLTA72=sm_72;TURING75=sm_75;AMPERE80=sm_80;AMPERE86=sm_86;ADA89=sm_89;HOPPER90=sm_90;BLACKWELL100=sm_100;BLACKWELL120=sm_120")
  set(sm sm_80)
  foreach(p IN LISTS map)
    string(REPLACE "=" ";" kv "${p}")
    list(GET kv 0 k)
    list(GET kv 1 s)
    if(k STREQUAL arch)
      set(sm ${s})
    endif()
  endforeach()
  set(${out} ${sm} PARENT_SCOPE)
endfunction()

function(_vnn_kokkos_source_version dir out)
  file(STRINGS "${dir}/CMakeLists.txt" lines REGEX "^[ \t]*[sS][eE][tT][ \t]*\\([ \t]*Kokkos_VERSION_(MAJOR|MINOR|PATCH)[ \t]+[0-9]+")
  set(major 0)
  set(minor 0)
  set(patch 0)
  foreach(l IN LISTS lines)
    if(l MATCHES "Kokkos_VERSION_(MAJOR|MINOR|PATCH)[ \t]+([0-9]+)")
      string(TOLOWER ${CMAKE_MATCH_1} which)
      set(${which} ${CMAKE_MATCH_2})
    endif()
  endforeach()
  math(EXPR patch "${patch}")
  if(patch LESS 10)
    set(patch "0${patch}")
  endif()
  set(${out} "${major}.${minor}.${patch}" PARENT_SCOPE)
endfunction()

# Publishes the results in the caller of vnn_provide_kokkos.
macro(_vnn_kokkos_publish out dir version origin compiler flags)
  string(TOUPPER "${config}" _vk_up)
  set(${out} "${dir}" PARENT_SCOPE)
  set(VNN_KOKKOS_${_vk_up}_VERSION "${version}" PARENT_SCOPE)
  set(VNN_KOKKOS_${_vk_up}_ORIGIN "${origin}" PARENT_SCOPE)
  set(VNN_KOKKOS_${_vk_up}_CXX_COMPILER "${compiler}" PARENT_SCOPE)
  set(VNN_KOKKOS_${_vk_up}_CXX_FLAGS "${flags}" PARENT_SCOPE)
  set(VNN_KOKKOS_${_vk_up}_EXTRA_SASS "${extra_sass}" PARENT_SCOPE)
endmacro()

function(vnn_provide_kokkos config out)
  _vnn_kokkos_required_devices(${config} need)
  string(TOUPPER "${config}" up)
  set(cache "${VNN_KOKKOS_CACHE_DIR}")

  # Consumer compiler for this config.
  if(config STREQUAL "cuda")
    _vnn_kokkos_find_nvcc(nvcc)
    if(NOT nvcc)
      message(FATAL_ERROR "vnn: Kokkos for cuda needs nvcc (not found in PATH, CUDA_HOME, /usr/local/cuda/bin)")
    endif()
    get_filename_component(nvcc "${nvcc}" REALPATH)
    _vnn_kokkos_arch_sm(${VNN_KOKKOS_CUDA_ARCH} sm)
    set(host_cxx "$ENV{NVCC_WRAPPER_DEFAULT_COMPILER}")
    if(host_cxx STREQUAL "")
      set(host_cxx g++)
    endif()
    _vnn_kokkos_tool_version("${nvcc}" nvcc_version)
    _vnn_kokkos_tool_version("${host_cxx}" host_version)
    set(tool_id "${nvcc}|${nvcc_version}|${host_cxx}|${host_version}|${VNN_KOKKOS_CUDA_ARCH}")
    set(extra_sass "${VNN_KOKKOS_CUDA_EXTRA_SASS}")
    string(REPLACE "sm_" "" extra_sass "${extra_sass}")
    string(REPLACE "," ";" extra_sass "${extra_sass}")
    string(REGEX REPLACE "^sm_" "" main_sm "${sm}")
    list(REMOVE_ITEM extra_sass "${main_sm}")
    string(APPEND tool_id "|sass ${extra_sass}")
  elseif(config STREQUAL "hip")
    find_program(VNN_HIPCC hipcc HINTS "$ENV{ROCM_PATH}/bin" /opt/rocm/bin)
    if(NOT VNN_HIPCC)
      message(FATAL_ERROR "vnn: Kokkos for hip needs hipcc (not found in PATH, ROCM_PATH, /opt/rocm/bin)")
    endif()
    _vnn_kokkos_tool_version("${VNN_HIPCC}" hip_version)
    set(tool_id "${VNN_HIPCC}|${hip_version}|${VNN_KOKKOS_HIP_ARCH}")
    vnn_hip_arch_flags("${VNN_HIPCC}" "${VNN_KOKKOS_HIP_ARCH}" hip_arch_flags)
    if(hip_arch_flags)
      string(APPEND tool_id "|${hip_arch_flags}")
    endif()
    set(consumer_cxx "${VNN_HIPCC}")
  else()
    set(tool_id "${CMAKE_CXX_COMPILER}|${CMAKE_CXX_COMPILER_ID}|${CMAKE_CXX_COMPILER_VERSION}")
    # A sanitized build (cmake/VnnSanitize.cmake) gets a Kokkos built with the
    # same flags under its own key: plain and sanitized objects never mix.
    if(VNN_SANITIZE_FLAGS)
      list(JOIN VNN_SANITIZE_FLAGS " " san_flags)
      string(APPEND tool_id "|sanitize ${san_flags}")
    endif()
    set(consumer_cxx "${CMAKE_CXX_COMPILER}")
  endif()

  # 1. A user-given Kokkos with the right devices.
  set(hints "")
  foreach(v VNN_KOKKOS_${up}_DIR Kokkos_DIR Kokkos_ROOT)
    if(DEFINED ${v} AND NOT "${${v}}" STREQUAL "" AND NOT "${${v}}" MATCHES "NOTFOUND$")
      list(APPEND hints "${${v}}")
    endif()
  endforeach()
  if(DEFINED ENV{Kokkos_ROOT})
    list(APPEND hints "$ENV{Kokkos_ROOT}")
  endif()
  list(APPEND hints ${CMAKE_PREFIX_PATH})
  foreach(h IN LISTS hints)
    _vnn_kokkos_config_dir("${h}" dir)
    if(NOT dir)
      continue()
    endif()
    _vnn_kokkos_read_install("${dir}" devices version)
    _vnn_kokkos_devices_ok(${config} "${devices}" ok)
    _vnn_kokkos_devices_text("${devices}" dtext)
    if(NOT ok)
      string(FIND "${dir}" "${cache}/" in_cache)
      if(NOT in_cache EQUAL 0)  # vnn's own builds for other configs pass silently
        message(STATUS "vnn: Kokkos ${version} at ${dir} has devices '${dtext}', not what ${config} needs: skipped")
      endif()
      continue()
    endif()
    set(flags "")
    if(config STREQUAL "cuda")
      # Its own nvcc_wrapper (prefix/bin), fixed for the local nvcc.
      get_filename_component(prefix "${dir}/../../.." ABSOLUTE)
      string(SHA256 h "${dir}|${tool_id}")
      string(SUBSTRING "${h}" 0 10 h)
      set(consumer_cxx "${cache}/user-${h}/bin/nvcc_wrapper")
      if(NOT EXISTS "${prefix}/bin/nvcc_wrapper")
        message(STATUS "vnn: the CUDA Kokkos at ${dir} has no ${prefix}/bin/nvcc_wrapper: skipped")
        continue()
      endif()
      # A user's Kokkos keeps its own arch choice (its library has no extra SASS).
      set(extra_sass "")
      _vnn_kokkos_fix_nvcc_wrapper("${prefix}/bin/nvcc_wrapper" "${consumer_cxx}" ${sm} "${nvcc}" "")
      _vnn_kokkos_cuda_flags("${version}" "${nvcc}" "${cache}/user-${h}/include" flags)
    endif()
    if(config STREQUAL "hip" AND hip_arch_flags)
      # Its library has code objects for its own arch only.
      message(STATUS "vnn: a user-given HIP Kokkos keeps its own arch: VNN_HIP_ARCHS applies to the Kokkos vnn builds")
    endif()
    set(origin "user-given ${dir}")
    message(STATUS "vnn: Kokkos ${version} (${dtext}) from ${origin}")
    _vnn_kokkos_publish(${out} "${dir}" "${version}" "${origin}" "${consumer_cxx}" "${flags}")
    return()
  endforeach()

  # 2. Build from source into the cache.
  file(MAKE_DIRECTORY "${cache}/src")
  file(LOCK "${cache}/src.lock" GUARD FUNCTION TIMEOUT 3600 RESULT_VARIABLE lock_rc)
  if(NOT lock_rc EQUAL 0)
    message(FATAL_ERROR "vnn: cannot lock ${cache}/src.lock: ${lock_rc}")
  endif()
  string(SHA256 sel "${VNN_KOKKOS_SOURCE}")
  string(SUBSTRING "${sel}" 0 12 sel)
  set(sel_file "${cache}/src/selected-${sel}.txt")
  set(src "")
  if(EXISTS "${sel_file}")
    file(STRINGS "${sel_file}" line LIMIT_COUNT 1)
    string(REPLACE "\t" ";" line "${line}")
    list(GET line 0 src)
    list(GET line 1 src_origin)
    if(NOT EXISTS "${src}/core/src/Kokkos_Core.hpp")
      set(src "")
    endif()
  endif()
  if(src STREQUAL "")
    message(STATUS "vnn: fetching Kokkos source (cmake/kokkos/fetch-kokkos.sh)")
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env "VNN_KOKKOS_SOURCE=${VNN_KOKKOS_SOURCE}"
              bash "${VNN_KOKKOS_MODULE_DIR}/fetch-kokkos.sh" "${cache}" "${sel_file}.new"
      RESULT_VARIABLE rc OUTPUT_VARIABLE fetch_out ERROR_VARIABLE fetch_err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "vnn: no Kokkos for '${config}'. No matching Kokkos was given "
        "(Kokkos_DIR / Kokkos_ROOT / CMAKE_PREFIX_PATH / VNN_KOKKOS_${up}_DIR), and the source "
        "fetch failed:\n${fetch_err}")
    endif()
    file(RENAME "${sel_file}.new" "${sel_file}")
    file(STRINGS "${sel_file}" line LIMIT_COUNT 1)
    string(REPLACE "\t" ";" line "${line}")
    list(GET line 0 src)
    list(GET line 1 src_origin)
  endif()
  file(LOCK "${cache}/src.lock" RELEASE)
  _vnn_kokkos_source_version("${src}" version)
  if(config STREQUAL "cuda" AND version VERSION_GREATER_EQUAL 4.0 AND extra_sass)
    # The extra SASS is Kokkos 3.x's workaround: Kokkos 4 runs its PTX on
    # later GPUs (a warning, not an abort) and has arch flags up to Blackwell.
    message(STATUS "vnn: Kokkos ${version}: VNN_KOKKOS_CUDA_EXTRA_SASS (${extra_sass}) is for Kokkos 3.x and "
                   "not used; Kokkos_ARCH_${VNN_KOKKOS_CUDA_ARCH} gives its SASS and PTX for later GPUs "
                   "(-DVNN_KOKKOS_CUDA_ARCH=HOPPER90 for native Hopper code)")
    set(extra_sass "")
    string(REGEX REPLACE "\\|sass .*$" "|sass " tool_id "${tool_id}")
  endif()

  string(SHA256 key "${_VNN_KOKKOS_RECIPE}|${src}|${version}|${config}|${tool_id}")
  string(SUBSTRING "${key}" 0 10 key)
  set(entry "${cache}/${version}-${config}-${key}")
  set(install "${entry}/install")
  set(kokkos_dir "${install}/lib/cmake/Kokkos")
  set(stamp "${entry}/vnn-build.stamp")

  set(flags "")
  if(config STREQUAL "cuda")
    set(consumer_cxx "${entry}/bin/nvcc_wrapper")
    _vnn_kokkos_cuda_flags("${version}" "${nvcc}" "${entry}/include" flags)
  elseif(config STREQUAL "hip")
    set(flags "${hip_arch_flags}")  # the library and the plugin: the same code objects
  endif()
  if(config STREQUAL "openmp")
    set(dtext "OpenMP+Serial")
  else()
    _vnn_kokkos_devices_text("${need};SERIAL" dtext)
  endif()

  file(MAKE_DIRECTORY "${entry}")
  file(LOCK "${entry}.lock" GUARD FUNCTION TIMEOUT 7200 RESULT_VARIABLE lock_rc)
  if(NOT lock_rc EQUAL 0)
    message(FATAL_ERROR "vnn: cannot lock ${entry}.lock: ${lock_rc}")
  endif()
  if(EXISTS "${stamp}" AND EXISTS "${kokkos_dir}/KokkosConfig.cmake")
    message(STATUS "vnn: Kokkos ${version} (${dtext}) from ${src_origin}, cached at ${install}")
    _vnn_kokkos_publish(${out} "${kokkos_dir}" "${version}" "${src_origin} (built by vnn)" "${consumer_cxx}" "${flags}")
    return()
  endif()

  message(STATUS "vnn: building Kokkos ${version} (${dtext}) from ${src_origin} into ${install} "
                 "(once; logs in ${entry})")
  string(TIMESTAMP t0 "%s")
  file(REMOVE_RECURSE "${entry}/build" "${install}")
  set(args
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_INSTALL_PREFIX=${install}
    -DCMAKE_INSTALL_LIBDIR=lib
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON
    -DBUILD_SHARED_LIBS=OFF
    -DCMAKE_CXX_STANDARD=17
    -DCMAKE_CXX_EXTENSIONS=OFF
    -DKokkos_ENABLE_SERIAL=ON
    -DKokkos_ENABLE_TESTS=OFF
    -DKokkos_ENABLE_EXAMPLES=OFF
    -DKokkos_ENABLE_BENCHMARKS=OFF)
  if(config STREQUAL "openmp")
    list(APPEND args -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DKokkos_ENABLE_OPENMP=ON)
    if(san_flags)
      list(APPEND args "-DCMAKE_CXX_FLAGS=${san_flags}")
    endif()
  elseif(config STREQUAL "cuda")
    _vnn_kokkos_fix_nvcc_wrapper("${src}/bin/nvcc_wrapper" "${consumer_cxx}" ${sm} "${nvcc}" "${extra_sass}")
    get_filename_component(cuda_root "${nvcc}" DIRECTORY)
    get_filename_component(cuda_root "${cuda_root}" DIRECTORY)
    list(APPEND args -DCMAKE_CXX_COMPILER=${consumer_cxx} -DKokkos_ENABLE_CUDA=ON
         -DKokkos_ARCH_${VNN_KOKKOS_CUDA_ARCH}=ON -DCUDAToolkit_ROOT=${cuda_root}
         -DCMAKE_CXX_FLAGS=${flags})
    if(version VERSION_LESS 4.0)
      list(APPEND args -DKokkos_ENABLE_CUDA_LAMBDA=ON)
    endif()
  elseif(config STREQUAL "hip")
    list(APPEND args -DCMAKE_CXX_COMPILER=${VNN_HIPCC} -DKokkos_ENABLE_HIP=ON
         -DKokkos_ARCH_${VNN_KOKKOS_HIP_ARCH}=ON "-DCMAKE_CXX_FLAGS=${flags}")
  endif()
  set(gen_args -G "${CMAKE_GENERATOR}")
  if(CMAKE_MAKE_PROGRAM)
    list(APPEND gen_args -DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM})
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} ${gen_args} -S "${src}" -B "${entry}/build" ${args}
                  RESULT_VARIABLE rc OUTPUT_FILE "${entry}/configure.log" ERROR_FILE "${entry}/configure.err")
  if(NOT rc EQUAL 0)
    file(READ "${entry}/configure.err" err LIMIT 6000)
    message(FATAL_ERROR "vnn: configuring Kokkos ${version} for ${config} failed (${entry}/configure.log):\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${entry}/build" --target install --parallel ${VNN_KOKKOS_BUILD_JOBS}
                  RESULT_VARIABLE rc OUTPUT_FILE "${entry}/build.log" ERROR_FILE "${entry}/build.err")
  if(NOT rc EQUAL 0)
    file(READ "${entry}/build.log" log)
    string(LENGTH "${log}" n)
    if(n GREATER 6000)
      math(EXPR start "${n} - 6000")
      string(SUBSTRING "${log}" ${start} 6000 log)
    endif()
    message(FATAL_ERROR "vnn: building Kokkos ${version} for ${config} failed (${entry}/build.log):\n${log}")
  endif()
  if(config STREQUAL "cuda")
    # The installed wrapper is Kokkos's original one: make it the fixed copy.
    configure_file("${consumer_cxx}" "${install}/bin/nvcc_wrapper" COPYONLY)
  endif()
  file(REMOVE_RECURSE "${entry}/build")
  string(TIMESTAMP t1 "%s")
  math(EXPR secs "${t1} - ${t0}")
  file(WRITE "${stamp}" "Kokkos ${version} ${config} from ${src_origin}\nsource ${src}\nbuilt in ${secs} s\n")
  message(STATUS "vnn: Kokkos ${version} (${dtext}) from ${src_origin}, built in ${secs} s, cached at ${install}")
  _vnn_kokkos_publish(${out} "${kokkos_dir}" "${version}" "${src_origin} (built by vnn)" "${consumer_cxx}" "${flags}")
endfunction()
