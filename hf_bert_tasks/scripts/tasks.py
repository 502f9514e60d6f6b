"""``hf-bert-tasks tasks``: the registered tasks with their metrics, data sources and the columns a user's own files
need (``--json``: machine-readable)."""

from __future__ import annotations

import json
import sys
import textwrap

from ..cli import PROG, ArgumentParser
from ..tasks import get_task, list_tasks


def main(argv: list[str] | None = None) -> int:
    """``hf-bert-tasks tasks``: print the registered tasks with metrics, data sources and the columns a user's own
    files need (``--json``: a JSON list of :meth:`hf_bert_tasks.tasks.base.Task.describe`); returns the exit status 0. ``UsageError`` for an
    unknown flag."""

    parser = ArgumentParser(prog=f"{PROG} tasks", description="List the registered tasks.")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    rows = [get_task(name).describe() for name in list_tasks()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    widths = (10, 27, 21, 20, 18)  # 96 characters + 4 spaces: a 100-column terminal; longer cells wrap
    table = [("task", "problem type", "metrics (primary first)", "Hub dataset", "local files")]
    for r in rows:
        hub = r["hub_dataset"] + (f" ({r['hub_config']})" if r["hub_config"] else "")
        files = sorted({f for names in r["local_files"].values() for f in names})
        table.append((r["name"], r["problem_type"], ", ".join(r["metrics"]), hub, ", ".join(files)))
    for n, cells in enumerate(table):
        wrapped = [textwrap.wrap(c, w) or [""] for c, w in zip(cells, widths)]
        for i in range(max(map(len, wrapped))):
            print(" ".join(f"{col[i] if i < len(col) else '':{w}s}" for col, w in zip(wrapped, widths)).rstrip())
        if n:  # what --train_file / --validation_file / --test_file must hold
            r = rows[n - 1]
            print(
                textwrap.fill(
                    f"columns: {', '.join(r['required_columns'])}; label: {r['labels']}",
                    99,
                    initial_indent=" " * 11,
                    subsequent_indent=" " * 13,
                )
            )
    print(
        "\nYour own data: --train_file / --validation_file / --test_file (.csv, .tsv, .jsonl) with the columns\n"
        "above, or name yours with --text_column_names a,b --label_column_name c."
    )
    return 0


#: its name in ``cli`` before it became a subcommand module (issue 41, 2026-12-06)
list_tasks_command = main


if __name__ == "__main__":
    sys.exit(main())
