"""Pretrain recipe: the same code path as ``hf-bert-tasks pretrain`` (see its docstring for commands).

python recipes/pretrain.py --train_files corpus.txt --preset tiny --max_steps 2000 --output_dir runs/pretrain
python recipes/pretrain.py --config recipes/configs/pretrain_tiny.yaml
"""

from hf_bert_tasks.scripts.pretrain import main

if __name__ == "__main__":
    main()
