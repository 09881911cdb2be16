// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn-plugin-check: loads one backend plugin the way the core does
// (dlopen RTLD_NOW|RTLD_LOCAL, entry point, table) and exercises it:
// probe, device_info for every device, then on device 0 init_device, alloc,
// a host->device->host round trip, a fill op, events and a queue.
//
//   vnn-plugin-check <plugin.so> [--require-device]
//
// Exit codes: 0 all steps passed; 77 no device or no driver (ctest marks the
// test skipped), unless --require-device (or VNN_REQUIRE_DEVICE=1) is given,
// then 1; 1 any failure.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "vnn/backend_abi.h"

namespace {

const char* status_name(vnn_status s) {
  switch (s) {
    case VNN_STATUS_OK: return "OK";
    case VNN_STATUS_UNSUPPORTED: return "UNSUPPORTED";
    case VNN_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case VNN_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case VNN_STATUS_NO_DEVICE: return "NO_DEVICE";
    case VNN_STATUS_DRIVER_MISSING: return "DRIVER_MISSING";
    case VNN_STATUS_DEVICE_ERROR: return "DEVICE_ERROR";
    case VNN_STATUS_INTERNAL: return "INTERNAL";
    case VNN_STATUS_NOT_READY: return "NOT_READY";
  }
  return "?";
}

const vnn_backend* be = nullptr;
int failures = 0;

bool step(const char* what, vnn_status s) {
  if (s == VNN_STATUS_OK) {
    std::printf("  %-34s ok\n", what);
    return true;
  }
  std::printf("  %-34s %s: %s\n", what, status_name(s), be->last_error());
  ++failures;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <plugin.so> [--require-device]\n", argv[0]);
    return 2;
  }
  bool require = (argc > 2 && std::strcmp(argv[2], "--require-device") == 0);
  if (const char* e = std::getenv("VNN_REQUIRE_DEVICE")) require = require || std::strcmp(e, "1") == 0;

  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::printf("dlopen(%s) failed: %s\n", argv[1], dlerror());
    return 1;
  }
  auto entry = reinterpret_cast<vnn_backend_entry_fn>(dlsym(lib, VNN_BACKEND_ENTRY_NAME));
  if (!entry) {
    std::printf("%s has no %s\n", argv[1], VNN_BACKEND_ENTRY_NAME);
    return 1;
  }
  be = entry(VNN_BACKEND_ABI_VERSION);
  if (!be || be->abi_version != VNN_BACKEND_ABI_VERSION) {
    std::printf("%s: ABI mismatch (plugin %u, host %u)\n", argv[1], be ? be->abi_version : 0u,
                VNN_BACKEND_ABI_VERSION);
    return 1;
  }
  std::printf("backend %s: %s\n", be->name, be->description);

  int32_t count = 0;
  vnn_status s = be->probe(&count);
  std::printf("probe: %s, %d device(s)%s%s\n", status_name(s), count,
              s == VNN_STATUS_OK ? "" : ": ", s == VNN_STATUS_OK ? "" : be->last_error());
  if (s == VNN_STATUS_NO_DEVICE || s == VNN_STATUS_DRIVER_MISSING) return require ? 1 : 77;
  if (s != VNN_STATUS_OK) return 1;

  for (int32_t d = 0; d < count; ++d) {
    vnn_device_info info;
    std::memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (!step("device_info", be->device_info(d, &info))) continue;
    std::printf("  %s:%d %s [%s] %s, %d CUs, %.1f GiB, pci %s, %s, driver %s%s%s\n", be->name, d, info.name,
                info.vendor, info.arch, info.compute_units, info.total_memory / 1073741824.0, info.pci_id,
                info.uuid, info.driver_version, info.usable ? "" : ", UNUSABLE: ",
                info.usable ? "" : info.unusable_reason);
  }

  // Device 0: start the runtime and move data.
  if (!step("init_device(0)", be->init_device(0))) return 1;
  const size_t n = 1 << 20;
  std::vector<float> host(n), back(n, 0.f);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000) * 0.5f;
  void* buf = nullptr;
  if (!step("alloc 4 MiB", be->alloc(0, n * sizeof(float), &buf))) return 1;
  step("copy_to_device (blocking)", be->copy_to_device(0, buf, 0, host.data(), n * sizeof(float), nullptr, 1));
  step("copy_to_host (blocking)", be->copy_to_host(0, back.data(), buf, 0, n * sizeof(float), nullptr, 1));
  if (std::memcmp(host.data(), back.data(), n * sizeof(float)) != 0) {
    std::printf("  round trip                         MISMATCH\n");
    ++failures;
  } else {
    std::printf("  round trip                         equal\n");
  }

  vnn_tensor_desc t;
  std::memset(&t, 0, sizeof(t));
  t.data = buf;
  t.dtype = VNN_FLOAT32;
  t.ndim = 1;
  t.sizes[0] = static_cast<int64_t>(n);
  t.strides[0] = 1;
  double value = 3.25;
  vnn_op op;
  std::memset(&op, 0, sizeof(op));
  op.struct_size = sizeof(op);
  op.kind = VNN_OP_FILL;
  op.num_outputs = 1;
  op.outputs = &t;
  op.num_scalars = 1;
  op.scalars = &value;
  void* q = nullptr;
  void *e0 = nullptr, *e1 = nullptr;
  step("queue_create", be->queue_create(0, &q));
  step("event_create x2", be->event_create(0, &e0) == VNN_STATUS_OK ? be->event_create(0, &e1)
                                                                    : VNN_STATUS_INTERNAL);
  step("event_record", be->event_record(0, e0, q));
  op.queue = q;
  if (step("run fill (float32, 1M) on queue", be->run(0, &op))) {
    step("event_record", be->event_record(0, e1, q));
    step("event_synchronize", be->event_synchronize(0, e1));
    double ms = -1;
    if (step("event_elapsed", be->event_elapsed(0, e0, e1, &ms))) std::printf("  fill took %.3f ms\n", ms);
    step("copy_to_host (async) + sync", be->copy_to_host(0, back.data(), buf, 0, n * sizeof(float), q, 0) ==
                                                VNN_STATUS_OK
                                            ? be->queue_synchronize(0, q)
                                            : VNN_STATUS_INTERNAL);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += back[i] != 3.25f;
    std::printf("  fill result                        %s (%zu wrong)\n", bad ? "WRONG" : "right", bad);
    failures += bad != 0;
  }
  be->event_destroy(0, e0);
  be->event_destroy(0, e1);
  step("queue_destroy", be->queue_destroy(0, q));
  step("free", be->free(0, buf));
  std::printf("%s: %s\n", be->name, failures ? "FAILED" : "all steps passed");
  return failures ? 1 : 0;
}
