# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Reads the main example's --tensorboard logs back with TensorBoard's own
# EventAccumulator (the reader behind `tensorboard --logdir`).
# usage: tensorboard_read.py <train_fashion_mnist> <work dir>
# Exit 77 (skipped) where the tensorboard package is not importable.
import os
import shutil
import subprocess
import sys

try:
    from tensorboard.backend.event_processing import event_accumulator as ea
except ImportError as e:
    print("skip: the tensorboard package is not importable by", sys.executable, "(%s);" % e,
          "ci/install-deps.sh installs it into ~/.cache/vnn/tensorboard-venv")
    sys.exit(77)

exe, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
# A corrupt file from an "earlier run" must not stop the writer.
os.makedirs(os.path.join(work, "tensorboard"))
with open(os.path.join(work, "tensorboard", "events.out.tfevents.0000000001.old.1.0"), "wb") as f:
    f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00truncated")
subprocess.run([exe, "--epochs", "2", "--limit", "512", "--workers", "2", "--model", "mlp", "--tensorboard",
                "--out", work], check=True)
os.remove(os.path.join(work, "tensorboard", "events.out.tfevents.0000000001.old.1.0"))


def load(path):
    acc = ea.EventAccumulator(path, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0, ea.TENSORS: 0})
    acc.Reload()
    return acc


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


run = load(os.path.join(work, "tensorboard"))
tags = run.Tags()
print("tags:", {k: v for k, v in tags.items() if v})
for t in ("loss/train_batch", "accuracy/test", "throughput/samples_per_s"):
    if t not in tags["scalars"]:
        fail("scalar %s missing: %s" % (t, tags["scalars"]))
acc = run.Scalars("accuracy/test")
if [e.step for e in acc] != [1, 2] or not all(0.0 <= e.value <= 1.0 for e in acc):
    fail("accuracy/test: %s" % acc)
# The same accuracy the example wrote to metrics.csv (float32 in the event).
rows = [line.split(",") for line in open(os.path.join(work, "metrics.csv")).read().split("\n")[1:] if line]
head = open(os.path.join(work, "metrics.csv")).readline().strip().split(",")
col = head.index("test_accuracy") if "test_accuracy" in head else head.index("accuracy")
for e, r in zip(acc, rows):
    if abs(e.value - float(r[col])) > 1e-4:
        fail("accuracy/test %g at step %d, metrics.csv says %s" % (e.value, e.step, r[col]))
batch = run.Scalars("loss/train_batch")
if len(batch) < 2 or [e.step for e in batch] != sorted(e.step for e in batch):
    fail("loss/train_batch: %s" % batch)
hist = [t for t in tags["histograms"] if t.startswith("weights/")]
if not hist:
    fail("no weights/ histograms: %s" % tags["histograms"])
h = run.Histograms(hist[0])[-1].histogram_value
if h.num <= 0 or abs(sum(h.bucket) - h.num) > 0.5 or not h.min <= h.max:
    fail("histogram %s inconsistent: num %g, buckets sum %g" % (hist[0], h.num, sum(h.bucket)))
if "config/text_summary" not in tags["tensors"]:
    fail("text config/text_summary missing: %s" % tags["tensors"])
text = run.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
if "model mlp" not in text:
    fail("text: %r" % text)
child = load(os.path.join(work, "tensorboard", "loss_train"))
if [e.step for e in child.Scalars("loss")] != [1, 2]:
    fail("add_scalars child loss_train: %s" % child.Scalars("loss"))
print("tensorboard read %d scalar, %d histogram and 1 text series from the example's logs" %
      (len(tags["scalars"]), len(hist)))
