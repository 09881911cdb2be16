// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* A minimal Kokkos Tools library: appends the name of every parallel
 * dispatch to the file named by VNN_TEST_TOOL_OUT, one per line, flushed at
 * once (the process may end before kokkosp_finalize_library runs). The
 * callback signatures are those of the Kokkos Tools interface (3.x-5.x). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static FILE* out_file = NULL;
static uint64_t next_id = 0;

static void note(const char* what, const char* name) {
  if (!out_file) return;
  fprintf(out_file, "%s %s\n", what, name ? name : "(null)");
  fflush(out_file);
}

void kokkosp_init_library(int load_seq, uint64_t interface_version, uint32_t device_count, void* device_info) {
  (void)load_seq;
  (void)interface_version;
  (void)device_count;
  (void)device_info;
  const char* path = getenv("VNN_TEST_TOOL_OUT");
  if (path) out_file = fopen(path, "w");
  note("init", "kokkos-tool");
}

void kokkosp_finalize_library(void) {
  note("finalize", "kokkos-tool");
  if (out_file) fclose(out_file);
  out_file = NULL;
}

void kokkosp_begin_parallel_for(const char* name, uint32_t device_id, uint64_t* kernel_id) {
  (void)device_id;
  *kernel_id = next_id++;
  note("parallel_for", name);
}
void kokkosp_end_parallel_for(uint64_t kernel_id) { (void)kernel_id; }

void kokkosp_begin_parallel_reduce(const char* name, uint32_t device_id, uint64_t* kernel_id) {
  (void)device_id;
  *kernel_id = next_id++;
  note("parallel_reduce", name);
}
void kokkosp_end_parallel_reduce(uint64_t kernel_id) { (void)kernel_id; }

void kokkosp_begin_parallel_scan(const char* name, uint32_t device_id, uint64_t* kernel_id) {
  (void)device_id;
  *kernel_id = next_id++;
  note("parallel_scan", name);
}
void kokkosp_end_parallel_scan(uint64_t kernel_id) { (void)kernel_id; }
