#!/usr/bin/env bash
# Prepares the folder that a device command carries (issue 42): the lent GPU machine has no network and no ../shared,
# so everything benchmarks/gpu.sh's groups read travels in one ignored folder of the checkout.
#
#   bash benchmarks/gpu_pack.sh [DIR]          # default .gpu-carry (ignored by .gitignore); prints its size
#
# DIR/shared/  the parts of ../shared ($HF_BERT_TASKS_SHARED) the groups read: data/glue (SST-2 and the other GLUE
#              train files the transfer corpus reads; MRPC), data/conll2003, data/pretraining_text,
#              data/pretraining_books (issue 43's transfer_books), baselines/glue (run_glue.py, convert_glue.py)
# DIR/whl/     the wheels the device image lacks (datasets, evaluate, seqeval, ...): ../shared/tools/gpu-wheels.sh
#
# Fails (exit 2) when ../shared lacks one of them, or when DIR ends up over 60 MiB (the device tool carries 64 MiB in
# all). benchmarks/gpu_session.sh reads DIR on the device. Replaces DIR's previous contents.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-.gpu-carry}
SHARED=${HF_BERT_TASKS_SHARED:-../shared}
PARTS=(data/glue data/conll2003 data/pretraining_text data/pretraining_books baselines/glue)
for p in "${PARTS[@]}"; do
  [ -e "$SHARED/$p" ] || { echo "gpu_pack.sh: $SHARED/$p is absent (set HF_BERT_TASKS_SHARED)" >&2; exit 2; }
done
[ -f "$SHARED/tools/gpu-wheels.sh" ] || { echo "gpu_pack.sh: $SHARED/tools/gpu-wheels.sh is absent" >&2; exit 2; }
rm -rf "$DIR"
mkdir -p "$DIR/shared"
for p in "${PARTS[@]}"; do
  mkdir -p "$DIR/shared/$(dirname "$p")"
  cp -r "$SHARED/$p" "$DIR/shared/$p"
done
bash "$SHARED/tools/gpu-wheels.sh" "$DIR/whl" > /dev/null
size_kib=$(du -sk "$DIR" | cut -f1)
echo "gpu_pack.sh: $DIR holds $(( size_kib / 1024 )) MiB: $(du -sh "$DIR"/shared/data/* "$DIR"/shared/baselines/glue "$DIR"/whl | awk '{printf "%s %s; ", $2, $1}')"
if [ "$size_kib" -gt $(( 60 * 1024 )) ]; then
  echo "gpu_pack.sh: $DIR is over 60 MiB: the device tool carries 64 MiB in all" >&2
  exit 2
fi
