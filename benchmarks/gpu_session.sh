#!/usr/bin/env bash
# One device command for the lent GPU machine (issue 42): installs the carried wheels, points HF_BERT_TASKS_SHARED
# at the carried data, runs benchmarks/gpu.sh's groups one after another, each under `timeout`, renders one table
# of all their rows and copies the small result files (JSON, markdown, logs) to $OUT.
#
#   bash benchmarks/gpu_pack.sh                                   # here, once: fills .gpu-carry (ignored, < 60 MiB)
#   bash benchmarks/gpu_session.sh padding_free finetune # on the device, command 1 (<= 270 s); carry [".gpu-carry"]
#   bash benchmarks/gpu_session.sh transfer_books        # on the device, command 2 (<= 380 s)
#   bash benchmarks/gpu_session.sh --dry-run padding_free finetune  # the same on CPU at toy size (rehearsal)
#
# The plan fits 15 minutes of device time: the two commands' timeouts add up to 650 s (10.8 min), plus the machine's
# start (~2 min). mfu (measured at 2fe3324) is out of it: it fits only in place of transfer_books (290 s).
# GROUP[:SECONDS]: a gpu.sh group (mfu, finetune, padding_free, transfer, transfer_books) and its timeout (default:
# the budget in gpu.sh's header plus ~10 %, from the H200 session at 2fe3324: mfu 290, finetune 100, transfer 480,
# transfer_books 380; padding_free 170, an estimate until its first GPU run; mfu and transfer_books do not fit one
# 530 s command together). SESSION_BUDGET_S (default 530) caps the whole
# command: a group starts only with >= 60 s left and its timeout is cut to what is left, so the session ends before a
# 9-minute device command does. A group that fails
# or times out does not stop the others; the exit status is the first failing group's (124: timed out).
# Environment: OUT (where results go; default runs/gpu-session/out), CARRY (default .gpu-carry), PY (default python3
# on the device; on CPU .venv/bin/python if present), SESSION_BUDGET_S.
# Heavy outputs (model weights, datasets caches) stay in WORK_DIR (default runs/gpu-session/work; emptied at the start),
# which is not copied.
set -euo pipefail
cd "$(dirname "$0")/.."
DRY=0
GROUPS_ARGS=()
for a in "$@"; do
  case "$a" in
    --dry-run) DRY=1 ;;
    -*) echo "gpu_session.sh: unknown option $a (expected --dry-run, then GROUP[:SECONDS] ...)" >&2; exit 2 ;;
    *) GROUPS_ARGS+=("$a") ;;
  esac
done
[ ${#GROUPS_ARGS[@]} -gt 0 ] || { echo "gpu_session.sh: name the groups to run, e.g. mfu:150 finetune:100" >&2; exit 2; }
declare -A DEFAULT_T=([mfu]=290 [finetune]=100 [padding_free]=170 [transfer]=480 [transfer_books]=380)
for a in "${GROUPS_ARGS[@]}"; do
  g=${a%%:*}
  [ -n "${DEFAULT_T[$g]:-}" ] || { echo "gpu_session.sh: unknown group '$g' (groups: ${!DEFAULT_T[*]})" >&2; exit 2; }
done
CARRY=${CARRY:-.gpu-carry}
RESULTS_OUT=${OUT:-runs/gpu-session/out}
WORK=${WORK_DIR:-runs/gpu-session/work}
BUDGET=${SESSION_BUDGET_S:-530}
t0=$(date +%s)
if [ "$DRY" = "1" ]; then
  PY=${PY:-.venv/bin/python}; [ -x "$PY" ] || PY=python3
  export HF_BERT_TASKS_SHARED=${HF_BERT_TASKS_SHARED:-$([ -d "$CARRY/shared" ] && echo "$CARRY/shared" || echo ../shared)}
else
  PY=${PY:-python3}
  [ -d "$CARRY/shared" ] && [ -d "$CARRY/whl" ] || { echo "gpu_session.sh: $CARRY/shared or $CARRY/whl is absent: run" \
    "benchmarks/gpu_pack.sh here and carry $CARRY" >&2; exit 2; }
  # the image lacks datasets, evaluate and seqeval (../shared/GPU-NOTES.md): install the carried wheels (~7 s)
  "$PY" -m pip install -q --no-index --find-links "$CARRY/whl" --no-cache-dir datasets evaluate seqeval "peft>=0.18"
  export HF_BERT_TASKS_SHARED=$CARRY/shared
fi
export PY
rm -rf "$WORK"
mkdir -p "$WORK" "$RESULTS_OUT"
"$PY" -c "import torch, transformers, datasets; print('gpu_session.sh: torch', torch.__version__, 'transformers',
transformers.__version__, 'datasets', datasets.__version__, 'cuda', torch.cuda.is_available())" | tee "$RESULTS_OUT/session.log"
status=0
for a in "${GROUPS_ARGS[@]}"; do
  g=${a%%:*}
  t=${a#*:}; [ "$t" != "$a" ] || t=${DEFAULT_T[$g]}
  left=$(( BUDGET - ($(date +%s) - t0) ))
  if [ "$left" -lt 60 ]; then
    echo "gpu_session.sh: group $g NOT RUN: $left s left of SESSION_BUDGET_S=$BUDGET" | tee -a "$RESULTS_OUT/session.log"
    [ "$status" -ne 0 ] || status=124
    continue
  fi
  [ "$t" -le "$left" ] || t=$left
  echo "gpu_session.sh: group $g (timeout $t s) at +$(( $(date +%s) - t0 )) s" | tee -a "$RESULTS_OUT/session.log"
  gs=0
  ts=$(date +%s)
  DRY_ARG=(); [ "$DRY" = "1" ] && DRY_ARG=(--dry-run)
  OUT_DIR=$WORK timeout --kill-after=10 "$t" bash benchmarks/gpu.sh "${DRY_ARG[@]}" --group "$g" \
    > "$RESULTS_OUT/group_$g.log" 2>&1 || gs=$?
  echo "gpu_session.sh: group $g exit $gs after $(( $(date +%s) - ts )) s" | tee -a "$RESULTS_OUT/session.log"
  [ "$gs" -eq 0 ] || [ "$status" -ne 0 ] || status=$gs
done
# one table of every row measured in this session
if [ -f "$WORK/gpu_results.json" ]; then
  "$PY" benchmarks/gpu_report.py render "$WORK/gpu_results.json" --out "$RESULTS_OUT/gpu_report.md" > /dev/null || status=1
fi
# the small files only (no weights or caches): JSON, markdown, logs, PNGs under 2 MB, their folders kept
(cd "$WORK" && find . \( -path ./toy_shared -o -path '*/cache-*' \) -prune -o -type f ! -name 'tokenizer*.json'  \( -name '*.json' -o -name '*.md' -o -name '*.log' \
   -o -name '*.png' -o -name '*.tsv' \) -size -2M -print) | while read -r f; do
  mkdir -p "$RESULTS_OUT/work/$(dirname "$f")"
  cp "$WORK/$f" "$RESULTS_OUT/work/$f"
done
[ ! -f "$WORK/gpu_results.json" ] || cp "$WORK/gpu_results.json" "$RESULTS_OUT/gpu_results.json"
echo "gpu_session.sh: done in $(( $(date +%s) - t0 )) s, exit $status; results in $RESULTS_OUT" | tee -a "$RESULTS_OUT/session.log"
exit "$status"
