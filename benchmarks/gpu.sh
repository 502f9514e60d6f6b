#!/usr/bin/env bash
# BERT-base on one GPU, under 5 minutes: training tokens/s and MFU for pretraining and fine-tuning, then the two
# recipes end to end with --bf16 (checks that the mixed-precision / SDPA / torch.compile flags pass through).
#
#   bash benchmarks/gpu.sh            # on a machine with a CUDA GPU (output also in runs/gpu/)
#   bash benchmarks/gpu.sh --dry-run  # the same steps on CPU with a tiny model (seconds; checks the plumbing;
#                                     # CPU_SMOKE=1 is the old spelling); tests/test_gpu_script.py runs it
#
# Any failing step fails the script (exit status of that step), naming the step and showing its log's last lines.
#
# Steps (each prints its own numbers; see benchmarks/gpu_bench.py for the FLOP count behind MFU):
#   1. gpu_bench.py, bf16, eager            pretraining (batch 256 x 128) and fine-tuning (batch 32 x 128)
#   2. gpu_bench.py, bf16, torch.compile    the same two, compiled
#   3. hf-bert-tasks pretrain --preset base --bf16 --torch_compile (built-in corpus, 60 steps): Trainer throughput
#   4. hf-bert-tasks finetune --task mrpc --bf16 (built-in MRPC sample, random BERT-base, 60 steps)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
OUT=${OUT_DIR:-runs/gpu}
for arg in "$@"; do
  case "$arg" in
    --dry-run) CPU_SMOKE=1 ;;
    *) echo "gpu.sh: unknown argument $arg (expected --dry-run)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
# step NAME LOG CMD...: run CMD with its output in LOG; on failure name the step, show the log's tail, exit with its status
step() {
  local name=$1 log=$2; shift 2
  local status=0
  "$@" > "$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    echo "gpu.sh: step '$name' FAILED (exit $status); last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit "$status"
  fi
}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
if [ "${CPU_SMOKE:-0}" = "1" ]; then
  BENCH=(--device cpu --tiny --dtype fp32 --steps 2 --warmup 1 --pretrain_batch 8 --finetune_batch 8)
  PRESET=(--preset tiny --vocab_size 500 --max_seq_length 64); STEPS=4; PREC=(); COMPILE=()
  FT_BATCH=8; PT_BATCH=8
else
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  BENCH=(--dtype bf16 --steps 30 --warmup 5)
  PRESET=(--preset base --vocab_size 30522 --max_seq_length 128); STEPS=60; PREC=(--bf16); COMPILE=(--torch_compile)
  FT_BATCH=32; PT_BATCH=128
fi
t0=$(date +%s)
echo "== 1. synthetic batches, eager"
step "1. synthetic batches, eager" "$OUT/eager.log" "$PY" benchmarks/gpu_bench.py "${BENCH[@]}" --json "$OUT/eager.json"
cat "$OUT/eager.log"
if [ "${CPU_SMOKE:-0}" != "1" ]; then
  echo "== 2. synthetic batches, torch.compile"
  step "2. synthetic batches, torch.compile" "$OUT/compiled.log" \
    "$PY" benchmarks/gpu_bench.py "${BENCH[@]}" --compile --json "$OUT/compiled.json"
  cat "$OUT/compiled.log"
fi
echo "== 3. pretrain recipe (Trainer, ${PREC[*]:-fp32} ${COMPILE[*]:-})"
step "3. pretrain recipe" "$OUT/pretrain.log" "$PY" -m hf_bert_tasks.cli pretrain --train_files hf_bert_tasks/samples/pretraining/corpus.txt "${PRESET[@]}" \
  --output_dir "$OUT/pretrain" --overwrite_output_dir --max_steps "$STEPS" --per_device_train_batch_size "$PT_BATCH" \
  --eval_strategy no --save_strategy no --logging_steps 20 --report_to none --disable_tqdm True \
  "${PREC[@]}" "${COMPILE[@]}"
grep -E "train_runtime|steps" "$OUT/pretrain.log" \
  || { echo "gpu.sh: step 3 logged no train_runtime/steps line: see $OUT/pretrain.log" >&2; exit 1; }
echo "== 4. fine-tune recipe on the MRPC sample (${PREC[*]:-fp32}, SDPA, pad_to_multiple_of 8)"
cat > "$OUT/random_model.py" <<'PYEOF'
import sys
from hf_bert_tasks.modeling import build_random_bert
from hf_bert_tasks.scripts.quickstart import sample_texts
from hf_bert_tasks.tokenization import train_wordpiece_tokenizer
out, preset = sys.argv[1], sys.argv[2]
build_random_bert(f"{out}/random-{preset}", train_wordpiece_tokenizer(sample_texts(), vocab_size=2000), preset=preset)
PYEOF
step "4a. random model for fine-tuning" "$OUT/random_model.log" "$PY" "$OUT/random_model.py" "$OUT" "${PRESET[1]}"
step "4b. fine-tune recipe" "$OUT/finetune.log" "$PY" -m hf_bert_tasks.cli finetune --task mrpc --data_dir hf_bert_tasks/samples/MRPC \
  --model_name_or_path "$OUT/random-${PRESET[1]}" --output_dir "$OUT/finetune" --overwrite_output_dir --do_train \
  --max_steps "$STEPS" --per_device_train_batch_size "$FT_BATCH" --save_strategy no --eval_strategy no \
  --report_to none --disable_tqdm True "${PREC[@]}"
cat > "$OUT/finetune_rate.py" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"finetune recipe: {r['train_samples_per_second']:.1f} sequences/s over {r['train_runtime']:.1f} s "
      f"(dynamic padding; train_loss {r['train_loss']:.3f})")
PYEOF
step "4c. fine-tune throughput" "$OUT/finetune_rate.log" "$PY" "$OUT/finetune_rate.py" "$OUT/finetune/train_results.json"
cat "$OUT/finetune_rate.log"
echo "total $(( $(date +%s) - t0 )) s"
