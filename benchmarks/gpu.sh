#!/usr/bin/env bash
# The one command for the day a GPU is lent (issue 26 item 4): BERT-base pretraining throughput and MFU, ours vs
# transformers' BertForPreTraining; GLUE fine-tuning throughput, ours vs run_glue.py; the pretraining transfer
# experiment at a GPU-sized preset. Every step appends its numbers to $OUT_DIR/gpu_results.json (rows: step, metric,
# value, units, anchor, device, commit; benchmarks/gpu_report.py) and the last one renders them as the markdown table
# for docs/benchmarks.md ($OUT_DIR/gpu_report.md).
#
#   bash benchmarks/gpu.sh                       # one CUDA GPU; results in runs/gpu/ (OUT_DIR=... to change)
#   bash benchmarks/gpu.sh --only transfer       # only these steps (comma-separated ids below), e.g. to redo a failed
#                                                # one: its rows replace its earlier rows, the others stay
#   bash benchmarks/gpu.sh --group mfu,finetune  # the steps of these groups (below; each fits one 8-minute command),
#                                                # then the table of their rows
#   bash benchmarks/gpu.sh --dry-run             # every step at toy size on CPU (tiny configs, a few steps, tiny data
#                                                # subsets: checks the plumbing, no meaningful numbers; CPU_SMOKE=1 is
#                                                # the old spelling); tests/test_gpu_script.py runs it
#
# Needs ../shared (GLUE baseline run_glue.py, SST-2, CoNLL-2003 and the pretraining text; HF_BERT_TASKS_SHARED=DIR
# if it lives elsewhere). Any failing step fails the script with that step's exit status, naming the step and
# showing its log's last lines; the report step also fails when a measuring step has no rows in the results file.
#
# Groups (issue 42: each fits one 8-minute device command; wall clock measured on one H200 at 2fe3324, 2026-12-04,
# benchmarks/gpu-runs/2026-12-04-h200-2fe3324/; benchmarks/gpu_session.sh runs groups on the device, each under
# `timeout`; its default timeouts are these budgets plus ~10 %):
#   mfu             ~260 s  pretrain_throughput (57 s measured, with the profiles) + pretrain_compiled (~100 s for the
#                           plain compiled model, its 41 s warm-up and profile included: the 170 s timeout of the
#                           first 2fe3324 session killed the group while compiling the second model; + 89 s measured
#                           for the static-slot model alone); GPU_SH_COMPILED_VARIANTS=on compiles the static-slot
#                           model only (~160 s)
#   finetune        ~90 s   glue_vs_run_glue (84 s measured, with the phase breakdown)
#   padding_free    ~150 s  padding_free (issue 57; an estimate, not yet run on a GPU: data ~40 s, 5 BERT-base
#                           workloads x 2 sides x 13 steps)
#   transfer        ~440 s  transfer (440 s measured at 96ab215: the one-seed BERT-mini experiment of the first run)
#   transfer_books  ~350 s  transfer_books (issue 43's benchmarks/gpu_transfer_books.sh: 322 s of stages measured
#                           against its own 330 s budget, + gpu.sh start-up and the rows; a 330 s timeout killed it)
#
# Steps (id: what; budget on one H100/H200, whole step including process start-up):
#   pretrain_throughput  90 s  gpu_bench.py: BERT-base MLM+NSP, bf16, SDPA, eager, synthetic batches of seq 128 x 256
#                              and seq 512 x 64 (32,768 tokens a step each), 5 warm-up + 20 timed steps per side:
#                              sequences/s and MFU (6 N tokens/s over the bf16 peak) of ours (masked-only decoder)
#                              and of transformers' BertForPreTraining (full-vocabulary MLM head), and their ratio
#                              --profile 3: torch.profiler over 3 more steps per row (GPU busy fraction, kernel
#                              families, top kernels and their share of the step's kernel time)
#   pretrain_compiled   200 s  ours at seq 128 with torch.compile (inductor), the plain masked-only head and the
#                              static-slot one (--static_predictions both), each profiled; ratios to eager
#   glue_vs_run_glue     90 s  gpu_bench.py glue: random-init BERT-base on the built-in MRPC sample, 200 steps x 32,
#                              bf16: train samples/s of hf-bert-tasks finetune and of run_glue.py, same settings, and
#                              each side's per-phase seconds (timed_main.py --phases: start-up, data loading +
#                              collation, forward + backward, optimizer, evaluation, after training) and their ratios;
#                              GPU_SH_GLUE_COMPILE=1 adds ours with torch.compile (~+50 s)
#   padding_free        150 s  benchmarks/padding_free.py: BERT-base, bf16, real batches (the transfer corpus's NSP
#                              instances at 128 x 256 and 512 x 64; SST-2 and CoNLL-2003 at 32): real tokens/s padded
#                              vs padding-free (varlen attention), the ratio, the padding share, MFU on real tokens
#   transfer            420 s  tools/pretraining_transfer.py: corpus (20 s); pretrain BERT-mini 3,000 steps x 256 x
#                              128, bf16 (180 s, assumes <= 60 ms a step); fine-tune SST-2 (1 epoch) and CoNLL-2003
#                              (3 epochs) from the pretrained and from a random init, seed 1 (210 s); report (10 s)
#   transfer_books      350 s  bash benchmarks/gpu_transfer_books.sh (issue 43: books corpus, lr grid, 3 seeds); it
#                              appends its own rows to the same results file
#   report                5 s  gpu_report.py render: the markdown table, after checking that every step above has
#                              rows in the results file (this run's, or an earlier run's for steps --only skipped)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
OUT=${OUT_DIR:-runs/gpu}
ALL_STEPS="pretrain_throughput,pretrain_compiled,glue_vs_run_glue,padding_free,transfer,transfer_books,report"
# group -> steps (a group's steps run in ALL_STEPS order)
group_steps() {
  case "$1" in
    mfu) echo "pretrain_throughput,pretrain_compiled" ;;
    finetune) echo "glue_vs_run_glue" ;;
    padding_free) echo "padding_free" ;;
    transfer) echo "transfer" ;;
    transfer_books) echo "transfer_books" ;;
    report) echo "report" ;;
    *) return 1 ;;
  esac
}
GROUPS_ALL="mfu,finetune,padding_free,transfer,transfer_books,report"
ONLY=""
GROUP=""
DRY=${CPU_SMOKE:-0}
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --only) [ $# -ge 2 ] || { echo "gpu.sh: --only needs a comma-separated list of steps ($ALL_STEPS)" >&2; exit 2; }
            ONLY=$2; shift ;;
    --only=*) ONLY=${1#--only=} ;;
    --group) [ $# -ge 2 ] || { echo "gpu.sh: --group needs a comma-separated list of groups ($GROUPS_ALL)" >&2; exit 2; }
             GROUP=$2; shift ;;
    --group=*) GROUP=${1#--group=} ;;
    *) echo "gpu.sh: unknown argument $1 (expected --dry-run, --only STEP[,STEP], --group GROUP[,GROUP])" >&2; exit 2 ;;
  esac
  shift
done
for g in ${GROUP//,/ }; do
  steps=$(group_steps "$g") || { echo "gpu.sh: unknown group '$g' in --group (groups: $GROUPS_ALL)" >&2; exit 2; }
  ONLY=${ONLY:+$ONLY,}$steps
done
if [ -n "$GROUP" ]; then ONLY=$ONLY,report; fi  # a group run ends with the table of what it measured
for s in ${ONLY//,/ }; do
  case ",$ALL_STEPS," in *",$s,"*) ;; *) echo "gpu.sh: unknown step '$s' in --only (steps: $ALL_STEPS)" >&2; exit 2 ;; esac
done
wants() { [ -z "$ONLY" ] || case ",$ONLY," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

SHARED=${HF_BERT_TASKS_SHARED:-../shared}
if [ ! -f "$SHARED/baselines/glue/run_glue.py" ] || [ ! -d "$SHARED/data/glue/SST-2" ]; then
  echo "gpu.sh: $SHARED lacks baselines/glue/run_glue.py or data/glue/SST-2: set HF_BERT_TASKS_SHARED to the folder" \
       "holding data/ and baselines/" >&2
  exit 2
fi
SHARED=$(cd "$SHARED" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RESULTS=$OUT/gpu_results.json
[ -n "$ONLY" ] || rm -f "$RESULTS"  # a full run starts a fresh file; --only keeps the other steps' rows

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
# wall NAME START BUDGET_S: record the step's wall clock (seconds since START) against its budget
wall() {
  step "$1 (wall clock row)" "$OUT/wall.log" "$PY" benchmarks/gpu_report.py wall --results "$RESULTS" --step "$1" \
    --seconds "$(( $(date +%s) - $2 ))" --budget_s "$3"
}

export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
GPU_SH_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$GPU_SH_COMMIT" != unknown ] && ! git diff --quiet HEAD 2>/dev/null; then GPU_SH_COMMIT="$GPU_SH_COMMIT+dirty"; fi
if [ "$DRY" = "1" ]; then
  GPU_SH_DEVICE="cpu (dry run: toy sizes, not a measurement)"; GPU_SH_DRY_RUN=1
  # --peak_tflops 1: a stand-in peak so the MFU rows are computed and checked on CPU; not a device figure
  PT=(--device cpu --tiny --dtype fp32 --seq 32 64 --pretrain_batch 4 2 --steps 2 --warmup 1 --peak_tflops 1
      --profile 1)
  PT_COMPILE=(--device cpu --tiny --dtype fp32 --seq 32 --pretrain_batch 4 --steps 2 --warmup 1 --peak_tflops 1
              --compile --compile_backend eager --static_predictions both --profile 1)
  GLUE=(--preset tiny --vocab_size 0 --max_steps 3 --batch_size 8 --precision fp32)
  PF=(--device cpu --dtype fp32 --preset tiny --vocab_size 2000 --seq 128 512 --batch 8 2 --finetune_batch 8
      --finetune_examples 100 --max_documents 200 --steps 2 --warmup 1 --threads 1)
  # the transfer experiment on a few hundred corpus lines and a few dozen labelled examples: a toy copy of ../shared
  TRANSFER_SHARED=$OUT/toy_shared
  TR_PRETRAIN=(--preset tiny --vocab_size 500 --max_seq_length 64 --max_steps 4 --per_device_train_batch_size 8
               --eval_steps 4 --dataloader_num_workers 1 --dataloader_persistent_workers True)
  TR_FINETUNE=(--seeds 1 --learning_rate 1e-4 --batch_size 8)
else
  command -v nvidia-smi > /dev/null || { echo "gpu.sh: no nvidia-smi: no CUDA GPU here (--dry-run runs on CPU)" >&2; exit 2; }
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  # the recipes would otherwise fall back to the CPU without a word (a CPU-only torch wheel, a hidden device)
  step "preflight: torch sees a CUDA device" "$OUT/preflight.log" "$PY" -c \
    "import sys, torch; sys.exit(0 if torch.cuda.is_available() else f'torch {torch.__version__} sees no CUDA device')"
  GPU_SH_DEVICE=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1); GPU_SH_DRY_RUN=0
  PT=(--device cuda --dtype bf16 --seq 128 512 --pretrain_batch 256 64 --steps 20 --warmup 5 --profile 3)
  # GPU_SH_COMPILED_VARIANTS=on: only the static-slot compiled model (~45 s less; the plain one's compiled rate is
  # then the first run's, not this run's)
  PT_COMPILE=(--device cuda --dtype bf16 --seq 128 --pretrain_batch 256 --steps 20 --warmup 3 --compile
              --static_predictions "${GPU_SH_COMPILED_VARIANTS:-both}" --profile 3)
  GLUE=(--preset base --vocab_size 30522 --max_steps 200 --batch_size 32 --precision bf16)
  PF=(--device cuda --dtype bf16 --preset base --vocab_size 8192 --seq 128 512 --batch 256 64 --finetune_batch 32
      --finetune_examples 4000 --steps 10 --warmup 3)
  TRANSFER_SHARED=$SHARED
  TR_PRETRAIN=(--preset mini --vocab_size 8192 --max_seq_length 128 --max_steps 3000 --per_device_train_batch_size 256
               --learning_rate 5e-4 --warmup_steps 0.06 --bf16 True --eval_steps 1000 --dataloader_num_workers 4
               --dataloader_persistent_workers True)
  TR_FINETUNE=(--seeds 1 --learning_rate 1e-4 --batch_size 32)
fi
export GPU_SH_DEVICE GPU_SH_COMMIT GPU_SH_DRY_RUN
echo "gpu.sh: device '$GPU_SH_DEVICE', commit $GPU_SH_COMMIT, results $RESULTS"
t0=$(date +%s)

if wants pretrain_throughput; then
  echo "== pretrain_throughput: BERT MLM+NSP step, ours vs transformers BertForPreTraining, same batches"
  ts=$(date +%s)
  step pretrain_throughput "$OUT/pretrain_throughput.log" "$PY" benchmarks/gpu_bench.py --only pretraining \
    --sides ours,reference "${PT[@]}" --json "$OUT/pretrain_throughput.json" --results "$RESULTS" \
    --step pretrain_throughput
  cat "$OUT/pretrain_throughput.log"
  wall pretrain_throughput "$ts" 90
fi
if wants pretrain_compiled; then
  echo "== pretrain_compiled: ours with torch.compile"
  ts=$(date +%s)
  step pretrain_compiled "$OUT/pretrain_compiled.log" "$PY" benchmarks/gpu_bench.py --only pretraining --sides ours \
    "${PT_COMPILE[@]}" --json "$OUT/pretrain_compiled.json" --results "$RESULTS" --step pretrain_compiled
  cat "$OUT/pretrain_compiled.log"
  wall pretrain_compiled "$ts" 200
fi
if wants glue_vs_run_glue; then
  echo "== glue_vs_run_glue: fine-tune throughput on the MRPC sample, hf-bert-tasks finetune vs run_glue.py"
  ts=$(date +%s)
  # GPU_SH_GLUE_COMPILE=1: also ours with --torch_compile True (~+50 s: over the finetune group's 100 s budget)
  GLUE_EXTRA=(); [ "${GPU_SH_GLUE_COMPILE:-0}" = "1" ] && GLUE_EXTRA=(--compiled_side)
  step glue_vs_run_glue "$OUT/glue_vs_run_glue.log" "$PY" benchmarks/gpu_bench.py glue --work "$OUT/glue" \
    --shared "$SHARED" "${GLUE[@]}" "${GLUE_EXTRA[@]}" --results "$RESULTS"
  cat "$OUT/glue_vs_run_glue.log"
  wall glue_vs_run_glue "$ts" 90
fi
if wants padding_free; then
  echo "== padding_free: real tokens/s, padded vs padding-free, on real pretraining, SST-2 and CoNLL-2003 batches"
  ts=$(date +%s)
  step padding_free "$OUT/padding_free.log" "$PY" benchmarks/padding_free.py --shared "$SHARED" "${PF[@]}" \
    --json "$OUT/padding_free.json" --results "$RESULTS" --step padding_free
  cat "$OUT/padding_free.log"
  wall padding_free "$ts" 150
fi
if wants transfer; then
  echo "== transfer: pretrain, then SST-2 and CoNLL-2003 from the pretrained and from a random init"
  ts=$(date +%s)
  TR=$OUT/transfer
  rm -rf "$TR"
  if [ "$DRY" = "1" ]; then  # the first lines of every file the corpus and fine-tuning stages read
    rm -rf "$TRANSFER_SHARED"
    D=$TRANSFER_SHARED/data
    mkdir -p "$D/pretraining_text" "$D/conll2003"
    for f in wikitext-2.valid.tokens wikitext-2-raw.test.raw; do head -n 30 "$SHARED/data/pretraining_text/$f" > "$D/pretraining_text/$f"; done
    head -n 200 "$SHARED/data/pretraining_text/tinyshakespeare.txt" > "$D/pretraining_text/tinyshakespeare.txt"
    for t in SST-2 CoLA MRPC RTE STS-B WNLI; do mkdir -p "$D/glue/$t"; head -n 41 "$SHARED/data/glue/$t/train.tsv" > "$D/glue/$t/train.tsv"; done
    head -n 33 "$SHARED/data/glue/SST-2/dev.tsv" > "$D/glue/SST-2/dev.tsv"
    head -n 400 "$SHARED/data/conll2003/train.txt" > "$D/conll2003/train.txt"
    head -n 200 "$SHARED/data/conll2003/valid.txt" > "$D/conll2003/valid.txt"
  fi
  step "transfer: corpus" "$OUT/transfer_corpus.log" "$PY" tools/pretraining_transfer.py corpus \
    --shared "$TRANSFER_SHARED" --out "$TR"
  tp=$(date +%s)
  step "transfer: pretrain" "$OUT/transfer_pretrain.log" "$PY" tools/pretraining_transfer.py pretrain --out "$TR" -- \
    "${TR_PRETRAIN[@]}" --whole_word_mask --max_predictions_per_seq 20 --logging_steps 100 --save_strategy no \
    --report_to none --disable_tqdm True --seed 42
  pretrain_s=$(( $(date +%s) - tp ))
  cat "$OUT/transfer_pretrain.log"
  step "transfer: finetune" "$OUT/transfer_finetune.log" "$PY" tools/pretraining_transfer.py finetune --out "$TR" \
    --shared "$TRANSFER_SHARED" --tasks sst2,conll2003 "${TR_FINETUNE[@]}"
  cat "$OUT/transfer_finetune.log"
  step "transfer: report" "$OUT/transfer_report.log" "$PY" tools/pretraining_transfer.py report --out "$TR"
  cat "$OUT/transfer_report.log"
  step "transfer: rows" "$OUT/transfer_rows.log" "$PY" benchmarks/gpu_report.py transfer --transfer_dir "$TR" \
    --results "$RESULTS" --pretrain_wall_s "$pretrain_s"
  wall transfer "$ts" 420
fi
if wants transfer_books; then
  echo "== transfer_books: issue 43's books transfer experiment (benchmarks/gpu_transfer_books.sh)"
  ts=$(date +%s)
  [ -f benchmarks/gpu_transfer_books.sh ] || { echo "gpu.sh: benchmarks/gpu_transfer_books.sh is absent (issue 43's" \
    "script; this step only calls it)" >&2; exit 2; }
  BOOKS_ARGS=()
  [ "$DRY" = "1" ] && BOOKS_ARGS=(--dry-run)
  step transfer_books "$OUT/transfer_books.log" env OUT_DIR="$OUT" PY="$PY" HF_BERT_TASKS_SHARED="$SHARED" \
    bash benchmarks/gpu_transfer_books.sh "${BOOKS_ARGS[@]}"
  cat "$OUT/transfer_books.log"
  wall transfer_books "$ts" 350
fi
if wants report; then
  echo "== report: $OUT/gpu_report.md (for docs/benchmarks.md)"
  # every measuring step must have rows in the file (from this run, or from an earlier one for steps --only skipped)
  # the steps this invocation ran (a full run: all; --only report alone: all, from earlier runs)
  EXPECT=${ALL_STEPS%,report}
  if [ -n "$ONLY" ] && [ "$ONLY" != report ]; then EXPECT=$(echo "${ONLY//,/ }" | tr ' ' '\n' | grep -vx report | paste -sd,); fi
  step report "$OUT/report.log" "$PY" benchmarks/gpu_report.py render "$RESULTS" --expect "$EXPECT" \
    --out "$OUT/gpu_report.md"
  cat "$OUT/gpu_report.md"
fi
echo "total $(( $(date +%s) - t0 )) s"
