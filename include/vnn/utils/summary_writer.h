// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file
/// TensorBoard logs: vnn::utils::SummaryWriter, the C++ twin of
/// torch.utils.tensorboard.SummaryWriter. Writes TensorBoard event files
/// (TFRecord framing with masked CRC-32C around Event protobufs, encoded by
/// hand) that `tensorboard --logdir <logdir>` reads.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace vnn {
class Tensor;
/// Utilities around training: TensorBoard logs.
namespace utils {

/// Options of a SummaryWriter (torch's max_queue, flush_secs, filename_suffix).
struct SummaryWriterOptions {
  /// Events buffered in memory before they are written to the file.
  int max_queue = 10;
  /// Seconds between periodic flushes by the writer's background thread.
  double flush_secs = 120;
  /// Appended to the event file's name.
  std::string filename_suffix;
};

/// Writes scalars, histograms and text to a TensorBoard event file in logdir.
///
/// Every writer creates a new file, `events.out.tfevents.<time>.<host>.<pid>.<n>`,
/// and never reads old ones, so a corrupt or truncated file left in logdir by
/// an earlier run cannot break it. All methods are thread-safe (DataLoader
/// workers may log); events are flushed every flush_secs, when max_queue are
/// buffered, on flush() and on close() / destruction.
class SummaryWriter {
 public:
  /// Creates logdir (and parents) and opens a new event file; throws vnn::ValueError if it cannot.
  explicit SummaryWriter(const std::string& logdir, SummaryWriterOptions options = {});
  /// Flushes and closes (errors are swallowed here; call close() to see them).
  ~SummaryWriter();
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  /// One scalar point of the series `tag`. walltime < 0 means now (seconds since the epoch).
  void add_scalar(const std::string& tag, double value, int64_t step, double walltime = -1);
  /// Several series in one chart: each key k goes to `<logdir>/<main_tag>_<k>`, tag main_tag (as torch does).
  void add_scalars(const std::string& main_tag, const std::map<std::string, double>& values, int64_t step,
                   double walltime = -1);
  /// A histogram of `values` with `bins` equal-width buckets between their min and max.
  void add_histogram(const std::string& tag, const std::vector<double>& values, int64_t step, int bins = 30,
                     double walltime = -1);
  /// A histogram of a tensor's elements (copied to the host, any dtype but bool).
  void add_histogram(const std::string& tag, const Tensor& values, int64_t step, int bins = 30,
                     double walltime = -1);
  /// A text (markdown) entry, shown by TensorBoard's text plugin under tag.
  void add_text(const std::string& tag, const std::string& text, int64_t step, double walltime = -1);
  /// Writes every buffered event to disk now; throws vnn::Error if the write fails.
  void flush();
  /// Flushes and closes every file; later add_* calls throw vnn::ValueError.
  void close();
  /// The directory given at construction.
  const std::string& logdir() const;
  /// The path of this writer's event file in logdir.
  std::string file_path() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// CRC-32C (Castagnoli) of data, as TFRecord framing uses.
uint32_t crc32c(const void* data, size_t size);
/// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t masked_crc32c(const void* data, size_t size);

}  // namespace utils
}  // namespace vnn
