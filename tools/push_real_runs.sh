#!/bin/bash
# Issue 7 real input: push real runs to a local Hub with the CLI, load them back by repo id with pipeline().
# usage: tools/push_real_runs.sh NAME=OUTPUT_DIR=TASK ...   (TASK "pretrain" for a pretraining dir)
set -u
cd "$(dirname "$0")/.."
R=runs/hub_real
mkdir -p $R
TOKEN=hf_local_real_push_token
PORT=8799
.venv/bin/python tests/hub_server.py --port $PORT --token $TOKEN > $R/server.log 2>&1 &
SERVER=$!
sleep 3
export HF_ENDPOINT=http://127.0.0.1:$PORT HF_HUB_DISABLE_XET=1 HF_HUB_OFFLINE=0 HF_TOKEN=$TOKEN HF_HOME=$R/hf_home \
       HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false HF_HUB_DISABLE_PROGRESS_BARS=1
export RUNS="$*"
for spec in "$@"; do
  IFS='=' read -r name dir task <<< "$spec"
  t0=$(date +%s)
  if [ "$task" = pretrain ]; then
    .venv/bin/hf-bert-tasks push "$dir" --repo_id hf-bert-tasks/$name 2>&1 | grep -v httpx2
  else
    .venv/bin/hf-bert-tasks push "$dir" --repo_id hf-bert-tasks/$name --task $task \
        --base_model sentence-transformers/all-MiniLM-L6-v2 2>&1 | grep -v httpx2
  fi
  echo "push $name wall_s=$(( $(date +%s) - t0 ))"
done
.venv/bin/python - <<'PY'
import os, time
import torch
from huggingface_hub import HfApi, ModelCard
from transformers import AutoModel, pipeline
api = HfApi()
os.makedirs("runs/hub_real/cards", exist_ok=True)
for spec in os.environ["RUNS"].split():
    name, local_dir, task = spec.split("=")
    repo = f"hf-bert-tasks/{name}"
    print("==", repo, "files:", sorted(api.list_repo_files(repo)))
    t = time.time()
    pipe = pipeline(model=repo, **({"aggregation_strategy": "simple"} if task == "conll2003" else {}))
    print("pipeline task:", pipe.task, "load_s=%.1f" % (time.time() - t))
    if task == "pretrain":
        print(pipe("the king of [MASK] said .")[:3])
    elif task == "conll2003":
        print(pipe("George Washington met officials of the European Union in Brussels on Monday."))
    elif task == "mrpc":
        for a, b in (("The company said profits rose 5 percent in the third quarter.",
                      "Profits at the company rose 5 percent in the third quarter, it said."),
                     ("The company said profits rose 5 percent in the third quarter.",
                      "The weather in Paris was cold on Tuesday.")):
            print(pipe({"text": a, "text_pair": b}))
    else:
        for a, b in (("A man is playing a guitar on the stage.", "A man plays music."),
                     ("A man is playing a guitar on the stage.", "Nobody is on the stage.")):
            print(pipe({"text": a, "text_pair": b}))
    a, b = AutoModel.from_pretrained(repo).state_dict(), AutoModel.from_pretrained(local_dir).state_dict()
    print("encoder weights identical to", local_dir, ":", sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a))
    card = ModelCard.load(repo)
    with open(f"runs/hub_real/cards/{name}.md", "w") as f:
        f.write(str(card))
    print("card eval results:", [(r.dataset_split, r.metric_type, r.metric_value) for r in card.data.eval_results])
PY
kill $SERVER
