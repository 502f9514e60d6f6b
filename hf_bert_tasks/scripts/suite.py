"""The paper's benchmark for one encoder (``hf-bert-tasks suite``): every task of Tables 1-4 and 7 fine-tuned from
``--model_name_or_path`` through the fine-tune recipe, one folder per task, then one table beside BERT-base and
BERT-large (``suite.md``, ``suite.json``, the chart ``suite.png``), the GLUE tasks' server files in
``glue_submission.zip``, and the suite's card ``README.md`` (every finished run's results in its ``model-index``;
``hf-bert-tasks push <output_dir> --repo_id ORG/NAME`` uploads these files, not the runs' models).

    hf-bert-tasks suite --model_name_or_path bert-base-uncased --output_dir runs/suite --lr_grid --seeds 1,2,3
    hf-bert-tasks suite --model_name_or_path runs/pretrain --output_dir runs/suite-samples --samples \
        --max_steps 50 --tasks mrpc,sst2,squad_v2,swag,conll2003          # offline, on the package's samples

Each task runs with the paper's protocol unless told otherwise (its defaults; ``--lr_grid`` alone: its paper grid,
best on dev; ``--seeds``: restarts, mean ± std); data from the Hub, ``--data_dir TASK=DIR`` per task, or the package's
samples (``--samples``; a task without one is skipped with a note). ``--feature_based`` adds Table 7's rows: CoNLL-2003
with the encoder frozen, one run per layer strategy. Resumable and shareable: a task whose folder holds
``all_results.json`` is finished and read back, never run again; a task being run holds ``suite_claim.json`` in its
folder (host and process), so several processes (or machines on a shared disk) started on the same ``--output_dir``
split the tasks between them, and a claim whose process is gone on this host is taken over. An unfinished run
restarts from its newest checkpoint (``--resume_from_checkpoint auto``) or from the start when it saved none.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys

from .. import paper
from ..cli import ArgumentParser, run_subcommand
from ..console import close_names

#: the paper's tasks, in the order of its tables (GLUE Table 1, SQuAD Tables 2-3, SWAG Table 4, CoNLL-2003 Table 7)
SUITE_TASKS = (
    "mnli",
    "qqp",
    "qnli",
    "sst2",
    "cola",
    "stsb",
    "mrpc",
    "rte",
    "wnli",
    "squad_v1",
    "squad_v2",
    "swag",
    "conll2003",
)
#: task -> its folder in ``hf_bert_tasks/samples`` (``--samples``)
SAMPLE_FOLDERS = {
    "sst2": "SST-2",
    "mrpc": "MRPC",
    "stsb": "STS-B",
    "mnli": "MNLI",
    "squad_v1": "SQuAD-v1.1",
    "squad_v2": "SQuAD-v2.0",
    "swag": "SWAG",
    "conll2003": "CoNLL-2003",
}
CLAIM_FILE = "suite_claim.json"
#: flags passed to every run as given (``None``: left out)
RUN_FLAGS = (
    "seeds",
    "max_train_samples",
    "max_eval_samples",
    "max_steps",
    "num_train_epochs",
    "per_device_train_batch_size",
    "learning_rate",
    "max_seq_length",
    "doc_stride",
    "max_query_length",
)


def build_parser() -> argparse.ArgumentParser:
    """``hf-bert-tasks suite``'s flags (plain argparse; each run's other flags are the fine-tune recipe's defaults)."""
    parser = ArgumentParser(prog="hf-bert-tasks suite", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model_name_or_path", required=True, help="Hub id, local folder or a pretraining run's output"
    )
    parser.add_argument("--output_dir", required=True, help="the suite's folder: one folder per task, suite.md/.json")
    parser.add_argument("--tasks", default=",".join(SUITE_TASKS), help="comma-separated tasks (default: all 13)")
    parser.add_argument("--samples", action="store_true", help="the package's samples as each task's data")
    parser.add_argument("--data_dir", action="append", default=[], metavar="TASK=DIR", help="a task's --data_dir")
    parser.add_argument(
        "--lr_grid", nargs="?", const="paper", default=None, help="a task's lr grid (alone: the paper's, §4.1)"
    )
    for name in RUN_FLAGS:
        parser.add_argument(f"--{name}", default=None, help=f"every run's --{name}")
    parser.add_argument(
        "--feature_based",
        nargs="?",
        const=",".join(TABLE7_STRATEGIES),
        default=None,
        metavar="STRATEGIES",
        help="also CoNLL-2003's feature-based rows of Table 7 (a frozen encoder, a BiLSTM head; alone: its six layer "
        "strategies, else comma-separated --feature_strategy values); the encoder's features are computed once",
    )
    parser.add_argument(
        "--feature_learning_rate",
        default=None,
        help="the feature-based runs' --learning_rate (default: the mode's, 1e-3; --learning_rate and --lr_grid are "
        "the fine-tuning runs')",
    )
    return parser


#: Table 7's feature-based rows (paper §5.3), in its order: the strategies the paper reports a number for
TABLE7_STRATEGIES = tuple(paper.TABLE7_FEATURE_BASED_DEV_F1)


def suite_runs(tasks: list[str], feature_based: str | None) -> list[dict]:
    """The suite's runs in table order: ``{"run", "task", "strategy"}`` (``run``: its folder name under
    ``--output_dir``; ``strategy``: ``None`` for fine-tuning, else a feature-based layer strategy). Fine-tuning for
    every task; with ``feature_based``, after CoNLL-2003, one feature-based run per strategy (``conll2003-feature_based-
    <strategy>``; Table 7 reports no other task). ``ValueError`` for an unknown strategy (with the closest) or
    ``--feature_based`` without CoNLL-2003 in ``--tasks``."""
    runs = []
    for task in tasks:
        runs.append({"run": task, "task": task, "strategy": None})
        if task == "conll2003" and feature_based:
            for strategy in feature_strategies(feature_based):
                runs.append({"run": f"{task}-feature_based-{strategy}", "task": task, "strategy": strategy})
    if feature_based and "conll2003" not in tasks:
        raise ValueError(f"--feature_based: Table 7's feature-based rows are CoNLL-2003's; --tasks {tasks} lacks it")
    return runs


def feature_strategies(text: str) -> list[str]:
    """The ``--feature_based`` strategies (``ValueError`` naming an unknown one, with the closest known one)."""
    from ..modes.feature_based.arguments import FeatureBasedArguments

    known = FeatureBasedArguments.__dataclass_fields__["feature_strategy"].metadata["choices"]
    names = [t.strip() for t in text.split(",") if t.strip()]
    if unknown := [t for t in names if t not in known]:
        raise ValueError(f"--feature_based: unknown strategy {unknown}{close_names(unknown, known)}; known: {known}")
    return list(dict.fromkeys(names))


def resolve_tasks(text: str) -> list[str]:
    """The ``--tasks`` list, in the paper's order; ``ValueError`` naming an unknown task (with the closest)."""
    from .. import list_tasks

    names = [t.strip().lower().replace("-", "_") for t in text.split(",") if t.strip()]
    if unknown := [t for t in names if t not in list_tasks()]:
        raise ValueError(f"--tasks: unknown task(s) {unknown}{close_names(unknown, list_tasks())}")
    order = {t: i for i, t in enumerate(SUITE_TASKS)}
    return sorted(dict.fromkeys(names), key=lambda t: order.get(t, len(order)))


def data_dirs(args, tasks: list[str]) -> dict[str, str | None]:
    """Each task's ``--data_dir`` (``--data_dir TASK=DIR``, else its sample with ``--samples``, else ``None``: the
    Hub). ``ValueError`` for a malformed ``--data_dir`` or one naming a task not in the suite."""
    from ..utils.resources import sample_path

    given = {}
    for item in args.data_dir:
        task, sep, folder = item.partition("=")
        if not sep or not folder:
            raise ValueError(f"--data_dir {item!r}: expected TASK=DIR, e.g. mrpc=glue_data/MRPC")
        if task not in tasks:
            raise ValueError(f"--data_dir {item!r}: task {task!r} is not in --tasks {tasks}")
        given[task] = folder
    sample = {t: os.path.join(sample_path(), SAMPLE_FOLDERS[t]) for t in tasks if t in SAMPLE_FOLDERS}
    return {t: given.get(t) or (sample.get(t) if args.samples else None) for t in tasks}


def claim(folder: str) -> bool:
    """Take the task folder for this process (``suite_claim.json``: host and pid, created exclusively); ``False`` when
    another live process holds it. A claim of this host whose process is gone is taken over."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, CLAIM_FILE)
    me = {"host": socket.gethostname(), "pid": os.getpid()}
    for _ in range(2):
        try:
            with open(path, "x", encoding="utf-8") as f:
                json.dump(me, f)
            return True
        except FileExistsError:
            try:
                with open(path, encoding="utf-8") as f:
                    holder = json.load(f)
            except (OSError, ValueError):
                holder = {}
            if holder.get("host") != me["host"] or _alive(holder.get("pid")):
                return False
            os.remove(path)  # a process of this host that is gone: its claim is stale
    return False


def _alive(pid) -> bool:
    """Whether the process ``pid`` of this host runs (signal 0 checks, sends nothing; never a pid <= 0, which names
    a process group)."""
    try:
        pid = int(pid)
        if pid <= 0:
            return False
        os.kill(pid, 0)
    except PermissionError:  # it exists, owned by another user
        return True
    except (OSError, TypeError, ValueError):
        return False
    return True


def release(folder: str) -> None:
    """Remove this process's claim of ``folder``."""
    path = os.path.join(folder, CLAIM_FILE)
    if os.path.isfile(path):
        os.remove(path)


def recorded_flags(args, parser: argparse.ArgumentParser | None = None) -> dict:
    """The suite's flags as given, for ``suite.json`` (the card is built from them, never guessed): every flag whose
    value differs from its default, ``--model_name_or_path`` and ``--output_dir`` left out (``suite.json`` records
    the encoder itself). A ``--data_dir`` folder is kept by its last two path parts, as
    :func:`hf_bert_tasks.hub.cards.model_origin` names a local folder: no home directory in a pushed file."""
    parser = parser or build_parser()
    flags = {
        name: value
        for name, value in vars(args).items()
        if name not in ("model_name_or_path", "output_dir") and value != parser.get_default(name)
    }
    if "data_dir" in flags:
        given = (item.partition("=") for item in flags["data_dir"])
        flags["data_dir"] = [f"{t}={'/'.join(os.path.normpath(d).split(os.sep)[-2:])}" for t, _, d in given]
    return flags


def run_argv(task: str, args, data_dir: str | None, folder: str, strategy: str | None = None) -> list[str]:
    """The fine-tune command line of one run (after ``finetune``); ``strategy``: a feature-based run of that layer
    strategy (``--mode feature_based``; the encoder's features of all layers cached once in ``--output_dir``'s
    ``feature_cache``, shared by the strategies; ``--feature_learning_rate``, not the fine-tuning lr flags)."""
    from ..utils.checkpoints import list_checkpoints

    argv = ["--task", task, "--model_name_or_path", args.model_name_or_path, "--output_dir", folder]
    argv += ["--data_dir", data_dir] if data_dir else []
    tuned = {"learning_rate": args.learning_rate, "lr_grid": args.lr_grid}
    if strategy is not None:
        argv += ["--mode", "feature_based", "--feature_strategy", strategy, "--feature_cache_layers", "all"]
        tuned = {"learning_rate": args.feature_learning_rate, "lr_grid": None}
    argv += [a for name, value in tuned.items() if value is not None for a in (f"--{name}", value)]
    flags = [name for name in RUN_FLAGS if name != "learning_rate"]
    argv += [a for name in flags if getattr(args, name) is not None for a in (f"--{name}", getattr(args, name))]
    argv += ["--report_to", "none"]  # checkpoints each epoch (the default) while it runs: a killed run resumes
    return argv + (["--resume_from_checkpoint", "auto"] if list_checkpoints(folder) and not tuned["lr_grid"] else [])


def main(argv: list[str] | None = None) -> dict:
    """Run every run of the suite (:func:`suite_runs`) that is neither finished nor claimed, then write ``suite.md``,
    ``suite.json``, ``suite.png`` and the suite's card ``README.md`` from every finished one
    (:func:`hf_bert_tasks.scripts.suite_report.write_suite`, with the flags given: :func:`recorded_flags`); returns
    the suite's summary. ``ValueError`` for bad flags; a run that fails is reported in the summary and the others
    still run."""
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    tasks = resolve_tasks(args.tasks)
    runs = suite_runs(tasks, args.feature_based)
    dirs = data_dirs(args, tasks)
    from ..finetune.args import parse_finetune_argv
    from ..finetune.recipe import main as finetune
    from ..hub.cards import write_card
    from ..utils.checkpoints import output_dir_is_finished
    from .suite_card import build_suite_card
    from .suite_report import write_suite

    status: dict[str, str] = {}
    for i, spec in enumerate(runs, 1):
        run, task = spec["run"], spec["task"]
        folder = os.path.join(args.output_dir, run)
        head = f"[{i}/{len(runs)}] {run}"
        if args.samples and dirs[task] is None:
            status[run] = "skipped: no sample (give --data_dir TASK=DIR)"
        elif output_dir_is_finished(folder):
            status[run] = "finished"
        elif not claim(folder):
            status[run] = "claimed by another process"
        else:
            print(f"{head}: running into {folder}", flush=True)
            try:
                finetune(parse_finetune_argv(run_argv(task, args, dirs[task], folder, spec["strategy"])))
                status[run] = "finished"
            except (ValueError, OSError) as err:
                status[run] = f"failed: {' '.join(str(err).split())}"
            finally:
                release(folder)
        print(f"{head}: {status[run]}", flush=True)
    summary = write_suite(args.output_dir, runs, status, args.model_name_or_path, recorded_flags(args, parser))
    write_card(args.output_dir, build_suite_card)  # README.md from suite.json (an edited one is kept, with a warning)
    print(f"suite table: {os.path.join(args.output_dir, 'suite.md')}")
    return summary


if __name__ == "__main__":
    sys.exit(run_subcommand("suite"))
