// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of advanced indexing (vnn/advanced_index.h).
#include "opdb.hpp"
#include "vnn/advanced_index.h"

namespace vnn::opdb {
namespace {

OPDB("index_put") {
  std::vector<std::optional<Tensor>> idx;
  for (const auto& a : c.get(0, "indices")->items) {
    if (a.none()) idx.emplace_back(std::nullopt);
    else idx.emplace_back(a.tensor());
  }
  const Tensor& values = c.tensor(1, "values");
  return vnn::index_put(c.in(), idx, values, c.boolean(2, "accumulate", false));
};
}  // namespace
}  // namespace vnn::opdb
