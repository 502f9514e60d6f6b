"""``hf-bert-tasks tasks``: the registered tasks with their metrics, data sources and the columns a user's own files
need (``--json``: machine-readable)."""

from __future__ import annotations

import json
import sys

from ..cli import PROG, ArgumentParser
from ..console import fill, print_table
from ..tasks import get_task, list_tasks


def main(argv: list[str] | None = None) -> int:
    """``hf-bert-tasks tasks``: print the registered tasks with metrics, data sources, the columns a user's own files
    need and the file formats each reads, as a table that fits the terminal (:func:`hf_bert_tasks.console.print_table`;
    ``--json``: a JSON list of :meth:`hf_bert_tasks.tasks.base.Task.describe`); returns the exit status 0.
    ``UsageError`` for an unknown flag."""

    parser = ArgumentParser(prog=f"{PROG} tasks", description="List the registered tasks.")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    rows = [get_task(name).describe() for name in list_tasks()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table, notes = [], []
    for r in rows:
        hub = r["hub_dataset"] + (f" ({r['hub_config']})" if r["hub_config"] else "")
        table.append((r["name"], r["problem_type"], ", ".join(r["metrics"]), hub))
        files = sorted({f for names in r["local_files"].values() for f in names})
        notes.append(  # what --train_file / --validation_file / --test_file must hold, and --data_dir's files
            (
                f"columns: {', '.join(r['required_columns'])}; label: {r['labels']}",
                "reads: " + get_task(r["name"]).user_file_formats_text(),
                f"--data_dir files: {', '.join(files)}",
            )
        )
    print_table(("task", "problem type", "metrics (primary first)", "Hub dataset"), table, notes=notes)
    print(
        "\n"
        + fill(
            "Your own data: --train_file / --validation_file / --test_file in a format the task reads, with the "
            "columns above, or name yours with --text_column_names a,b --label_column_name c."
        )
    )
    return 0


#: its name in ``cli`` before it became a subcommand module (issue 41, 2026-12-06)
list_tasks_command = main


if __name__ == "__main__":
    sys.exit(main())
