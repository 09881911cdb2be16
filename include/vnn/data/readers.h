// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Readers for data on disk: IDX files (MNIST / Fashion-MNIST, gzip or
// plain, through zlib), the Fashion-MNIST data set, and numeric CSV.
// Missing files throw FileError, corrupt ones FormatError; both name the
// file. Nothing falls back to other data silently.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vnn/data/dataset.h"
#include "vnn/io/safetensors.h"  // FileError

namespace vnn::data {

/// One IDX file (magic 0 0 type ndim, big-endian uint32 sizes, data). Types:
/// 0x08 -> uint8, 0x0C -> int32, 0x0D -> float32, 0x0E -> float64.
/// Gzip-compressed and plain files are both read.
Tensor read_idx(const std::string& path);

/// Default root: the argument, else $VNN_FASHION_MNIST_DIR, else
/// /usr/share/datasets/fashion-mnist (Debian's dataset-fashion-mnist).
std::string fashion_mnist_root(const std::string& root = "");

/// Fashion-MNIST: images float32 [1, 28, 28] in [0, 1], labels int64 0..9.
/// Files {train,t10k}-{images-idx3,labels-idx1}-ubyte, each plain or .gz.
/// limit > 0 keeps only the first `limit` examples.
class FashionMNIST : public Dataset {
 public:
  /// The train (or test, `train` false) split from `root` (see fashion_mnist_root); FileError / FormatError naming the file.
  explicit FashionMNIST(const std::string& root = "", bool train = true, int64_t limit = 0);
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override;
  /// All images, [N, 1, 28, 28] float32 in [0, 1].
  const Tensor& images() const { return images_; }  // [N, 1, 28, 28] float32
  /// All labels, [N] int64 in 0..9.
  const Tensor& labels() const { return labels_; }  // [N] int64
  /// The ten class names, "T-shirt/top" to "Ankle boot", by label.
  static const std::vector<std::string>& class_names();

 private:
  Tensor images_, labels_;
  int64_t n_ = 0;
};

/// Options of read_csv: label column, delimiter, header row.
struct CsvOptions {
  /// Name of the column holding integer labels ("" for none).
  std::string label_column;  // "" : no labels
  /// Field separator (default ',').
  char delimiter = ',';
  /// Whether the first line names the columns (false: they are named c0, c1, ...).
  bool header = true;        // false: columns are named c0, c1, ...
};
/// What read_csv returns: feature names, features and labels.
struct CsvTable {
  /// Names of the feature columns, in order.
  std::vector<std::string> feature_names;
  /// The features, [rows, features] float32.
  Tensor features;  // [rows, features] float32
  /// The labels, [rows] int64 (undefined without label_column).
  Tensor labels;    // [rows] int64, undefined without label_column
};
/// Numeric CSV; errors name the file, line and column.
CsvTable read_csv(const std::string& path, const CsvOptions& options = {});

}  // namespace vnn::data
