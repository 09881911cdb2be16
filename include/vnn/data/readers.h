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

// One IDX file (magic 0 0 type ndim, big-endian uint32 sizes, data). Types:
// 0x08 -> uint8, 0x0C -> int32, 0x0D -> float32, 0x0E -> float64.
// Gzip-compressed and plain files are both read.
Tensor read_idx(const std::string& path);

// Default root: the argument, else $VNN_FASHION_MNIST_DIR, else
// /usr/share/datasets/fashion-mnist (Debian's dataset-fashion-mnist).
std::string fashion_mnist_root(const std::string& root = "");

// Fashion-MNIST: images float32 [1, 28, 28] in [0, 1], labels int64 0..9.
// Files {train,t10k}-{images-idx3,labels-idx1}-ubyte, each plain or .gz.
// limit > 0 keeps only the first `limit` examples.
class FashionMNIST : public Dataset {
 public:
  explicit FashionMNIST(const std::string& root = "", bool train = true, int64_t limit = 0);
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override;
  const Tensor& images() const { return images_; }  // [N, 1, 28, 28] float32
  const Tensor& labels() const { return labels_; }  // [N] int64
  static const std::vector<std::string>& class_names();

 private:
  Tensor images_, labels_;
  int64_t n_ = 0;
};

struct CsvOptions {
  std::string label_column;  // "" : no labels
  char delimiter = ',';
  bool header = true;        // false: columns are named c0, c1, ...
};
struct CsvTable {
  std::vector<std::string> feature_names;
  Tensor features;  // [rows, features] float32
  Tensor labels;    // [rows] int64, undefined without label_column
};
// Numeric CSV; errors name the file, line and column.
CsvTable read_csv(const std::string& path, const CsvOptions& options = {});

}  // namespace vnn::data
