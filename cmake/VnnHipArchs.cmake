# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Which AMD GPUs the HIP Kokkos vnn builds, and its HIP plugin, carry code
# objects for.
#
#   VNN_HIP_ARCHS   cache list of target IDs (gfx908;gfx90a). Kokkos 3.4
#                   names only VEGA900/906/908 (VNN_KOKKOS_HIP_ARCH), so the
#                   others are extra --offload-arch flags on every hipcc call:
#                   Kokkos's own library (its lock-array and other kernels run
#                   in Kokkos::initialize) and the plugin.
#   vnn_hip_arch_flags(<hipcc> <kokkos_arch> <out>)
#                   validates the list against Kokkos 3.4 and the compiler and
#                   sets <out> to those flags ("--offload-arch=gfx90a ...").
#   vnn_hip_kokkos_gfx(<Kokkos_ARCH entry> <out>)
#                   VEGA908 -> gfx908, VEGA90A -> gfx90a, AMD_GFX942 -> gfx942,
#                   NAVI1030 -> gfx1030; "" for a non-AMD arch.
#
# The HIP runtime runs a kernel only from a code object of the device's exact
# processor, so each one costs a full device compile of every kernel TU.
# Debian 12's hipcc 5.2.3 (clang 15) knows gfx940 but not gfx941/gfx942:
# MI300A/MI300X (gfx942) need a newer ROCm; gfx940 code (pre-production
# MI300A) does not run on them, so it is not in the default.
include_guard(GLOBAL)

set(VNN_HIP_ARCHS "gfx908;gfx90a" CACHE STRING
    "AMD GPU target IDs the HIP plugin and its vnn-built Kokkos carry code objects for (gfx908: MI100, gfx90a: MI200)")

function(vnn_hip_kokkos_gfx arch out)
  set(g "")
  if(arch MATCHES "^VEGA(90[0-9A-F])$")
    string(TOLOWER "gfx${CMAKE_MATCH_1}" g)
  elseif(arch MATCHES "^AMD_GFX([0-9A-F]+)(_APU)?$")
    string(TOLOWER "gfx${CMAKE_MATCH_1}" g)
  elseif(arch MATCHES "^NAVI(10[0-9][0-9])$")
    set(g "gfx${CMAKE_MATCH_1}")
  endif()
  set(${out} "${g}" PARENT_SCOPE)
endfunction()

function(vnn_hip_arch_flags hipcc kokkos_arch out)
  vnn_hip_kokkos_gfx("${kokkos_arch}" base)
  if(base STREQUAL "")
    message(FATAL_ERROR "vnn: VNN_KOKKOS_HIP_ARCH=${kokkos_arch} is no AMD arch of Kokkos (VEGA900, VEGA906, VEGA908)")
  endif()
  set(flags "")
  set(seen "")
  set(have_base FALSE)
  foreach(a IN LISTS VNN_HIP_ARCHS)
    # Kokkos 3.4's HIP backend assumes 64-wide wavefronts: gfx9 (GCN/CDNA).
    if(NOT a MATCHES "^(gfx9[0-9a-f][0-9a-f])(:(sramecc|xnack)[+-])*$")
      message(FATAL_ERROR "vnn: VNN_HIP_ARCHS entry '${a}' is not a gfx9 target ID (gfx908, gfx90a, "
        "gfx90a:xnack+, ...). Kokkos 3.4's HIP backend assumes 64-wide wavefronts (GCN/CDNA, gfx9); for RDNA "
        "(gfx10xx/gfx11xx) build the plugin on a Kokkos of your own (-DVNN_KOKKOS_HIP_DIR=...).")
    endif()
    set(proc "${CMAKE_MATCH_1}")
    list(FIND seen "${proc}" dup)
    if(NOT dup EQUAL -1)
      message(FATAL_ERROR "vnn: VNN_HIP_ARCHS names ${proc} twice (${VNN_HIP_ARCHS}): one target ID per "
        "processor; one without features runs in either xnack/sramecc mode")
    endif()
    list(APPEND seen "${proc}")
    if(proc STREQUAL base)
      # Kokkos adds --amdgpu-target=<base> itself, without features, and clang
      # refuses a processor with features in one flag and none in another.
      if(NOT a STREQUAL base)
        message(FATAL_ERROR "vnn: VNN_HIP_ARCHS entry '${a}': ${base} is the Kokkos arch "
          "(VNN_KOKKOS_HIP_ARCH=${kokkos_arch}), which Kokkos compiles without features; list it as ${base}")
      endif()
      set(have_base TRUE)
    else()
      string(APPEND flags " --offload-arch=${a}")
    endif()
  endforeach()
  string(STRIP "${flags}" flags)
  if(NOT have_base)
    message(STATUS "vnn: VNN_HIP_ARCHS (${VNN_HIP_ARCHS}) lacks ${base}, the Kokkos arch "
      "(VNN_KOKKOS_HIP_ARCH=${kokkos_arch}): its code objects are built as well")
  endif()

  # Once per list and compiler: does hipcc know every target?
  execute_process(COMMAND "${hipcc}" --version OUTPUT_VARIABLE v ERROR_QUIET)
  string(REGEX MATCH "clang version [0-9.]+" clang_v "${v}")
  set(key "${hipcc}|${clang_v}|${base}|${flags}")
  if(NOT "${_VNN_HIP_ARCHS_CHECKED}" STREQUAL "${key}")
    separate_arguments(flag_list UNIX_COMMAND "${flags}")
    execute_process(COMMAND "${hipcc}" -x hip --offload-arch=${base} ${flag_list} -fsyntax-only /dev/null
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      string(REPLACE ";" "," err "${err}")
      string(REGEX MATCHALL "error: [^\n]*" errors "${err}")
      list(JOIN errors "\n  " errors)
      message(FATAL_ERROR "vnn: ${hipcc} (${clang_v}) cannot compile for VNN_HIP_ARCHS=${VNN_HIP_ARCHS}:\n  "
        "${errors}\nDebian 12's hipcc 5.2 (clang 15) knows gfx900-gfx90c and gfx940, not gfx941/gfx942 "
        "(MI300): those need a newer ROCm.")
    endif()
    set(_VNN_HIP_ARCHS_CHECKED "${key}" CACHE INTERNAL "")
  endif()
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()
