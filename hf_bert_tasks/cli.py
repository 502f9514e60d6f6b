"""``hf-bert-tasks`` command line: ``tasks``, ``finetune``, ``quickstart`` (later: ``pretrain``, ``compare``, ``push``).

Each subcommand forwards its arguments to the recipe main in :mod:`hf_bert_tasks.scripts`, so
``hf-bert-tasks finetune ARGS`` and ``python recipes/finetune.py ARGS`` are the same code path.
"""

from __future__ import annotations

import importlib
import json
import sys

#: subcommand -> (module under hf_bert_tasks.scripts, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "finetune": ("finetune", "fine-tune a checkpoint on a registered task (Trainer, paper defaults)"),
    "pretrain": ("pretrain", "pretrain BERT with MLM + NSP on a text corpus (WordPiece, presets, two phases)"),
    "quickstart": ("quickstart", "offline demo on the built-in samples (tiny BERT, a few minutes on CPU)"),
    "compare": ("compare", "fine-tuning vs LoRA vs frozen-feature strategies on one task and seeds (Table 7)"),
    "push": ("push", "push a finished run to the Hub with a full model card (every metric in model-index)"),
}


def list_tasks_command(argv: list[str]) -> int:
    """Print the registered tasks with metrics and data sources (``--json`` for machine-readable output)."""
    from . import get_task, list_tasks

    rows = [get_task(name).describe() for name in list_tasks()]
    if "--json" in argv:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'task':10s} {'problem type':28s} {'metrics (primary first)':34s} {'Hub dataset':26s} local files")
    for r in rows:
        hub = r["hub_dataset"] + (f" ({r['hub_config']})" if r["hub_config"] else "")
        files = sorted({f for names in r["local_files"].values() for f in names})
        print(f"{r['name']:10s} {r['problem_type']:28s} {', '.join(r['metrics']):34s} {hub:26s} {', '.join(files)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: hf-bert-tasks {tasks," + ",".join(SUBCOMMANDS) + "} [ARGS]\n\n  tasks        list registered tasks\n"
    usage += "".join(f"  {name:12s} {help_}\n" for name, (_, help_) in SUBCOMMANDS.items())
    if not argv or argv[0] in ("-h", "--help"):
        print(usage)
        return 0
    command, rest = argv[0], argv[1:]
    if command == "tasks":
        return list_tasks_command(rest)
    if command not in SUBCOMMANDS:
        print(f"hf-bert-tasks: unknown subcommand {command!r}\n\n{usage}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"hf_bert_tasks.scripts.{SUBCOMMANDS[command][0]}")
    module.main(rest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
