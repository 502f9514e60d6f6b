"""The route of one ``hf-bert-tasks finetune --task mrpc`` run in a plain process (issue 41): the package modules it
enters and how often it changes module, traced from the CLI entry exactly as ``tests/test_finetune_trace.py`` traces it
(that test runs under pytest, whose log-capture handlers add calls into ``cli.py``: a few more changes).

    python tools/finetune_route.py          # prints: <modules> <changes> [modules], then the route, one arrow a change
    python tools/finetune_route.py --fresh  # the same in a fresh process: nothing pre-imported (module bodies count)

MRPC sample, a random tiny BERT (2 layers, hidden 32, the sample WordPiece vocabulary), 2 steps, one torch thread.
"""

import itertools
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    import torch

    torch.set_num_threads(1)
    from hf_bert_tasks.utils.modeling import build_random_bert
    from hf_bert_tasks.utils.resources import sample_texts
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer
    from tests import test_finetune_trace as trace

    tmp = tempfile.mkdtemp()
    tokenizer = train_wordpiece_tokenizer(sample_texts(), vocab_size=1000)  # the tests' sample_tokenizer fixture
    model = build_random_bert(
        os.path.join(tmp, "model"),
        tokenizer,
        preset="tiny",
        seed=0,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
    )
    if "--fresh" not in sys.argv:
        trace.import_everything()
    argv = trace.mrpc_route_argv(model, os.path.join(tmp, "out"), os.path.join(tmp, "cache"))
    calls = trace.trace_run(argv)
    modules = sorted(set(calls))
    print(len(modules), sum(a != b for a, b in itertools.pairwise(calls)), modules)
    print(" > ".join(m.removesuffix(".py") for m, _ in itertools.groupby(calls)))


if __name__ == "__main__":
    main()
