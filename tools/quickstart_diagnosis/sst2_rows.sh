#!/bin/bash
# sst2_rows.sh CKPT SEED TAG CORE: the quickstart rows that read the checkpoint (160 labels pretrained, LoRA, frozen
# last, frozen concat_last_four) one at a time on core CORE (session 2026-12-02, issue 25); outputs under $OUT (/tmp/d/r)
ck=$1; s=$2; t=$3; c=$4
export OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1; mkdir -p "${OUT:-/tmp/d/r}"
P="taskset -c $c .venv/bin/python tools/quickstart_diagnosis/one_run.py $ck"
{
echo "== $t seed $s"
$P ${OUT:-/tmp/d/r}/$t-few $s 0 max_train_samples=160 epochs=20 2>&1 | grep RESULT | sed 's/^/few160 /'
$P ${OUT:-/tmp/d/r}/$t-lora $s 0 mode=\"lora\" epochs=5 learning_rate=2e-3 2>&1 | grep RESULT | sed 's/^/lora /'
$P ${OUT:-/tmp/d/r}/$t-last $s 0 mode=\"feature_based\" feature_strategy=\"last\" pooling=\"mean\" head=\"mlp\" feature_cache_layers=\"all\" feature_cache_dir=\"${OUT:-/tmp/d/r}/$t-fc\" epochs=30 learning_rate=3e-3 2>&1 | grep RESULT | sed 's/^/last /'
$P ${OUT:-/tmp/d/r}/$t-c4 $s 0 mode=\"feature_based\" feature_strategy=\"concat_last_four\" pooling=\"mean\" head=\"mlp\" feature_cache_layers=\"all\" feature_cache_dir=\"${OUT:-/tmp/d/r}/$t-fc\" epochs=30 learning_rate=3e-3 2>&1 | grep RESULT | sed 's/^/c4 /'
} 
