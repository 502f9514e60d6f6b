"""Push a finished run to the Hub with its model card (``hf-bert-tasks push``).

    hf-bert-tasks push runs/mrpc --repo_id my-org/bert-base-mrpc
    hf-bert-tasks push runs/mrpc --repo_id my-org/bert-base-mrpc --private --revision seed-42
    hf-bert-tasks push runs/mrpc --repo_id my-org/bert-base-mrpc --base_model bert-base-uncased --dry_run
    hf-bert-tasks push runs/suite --repo_id my-org/bert-base-suite      # a suite's card, table, chart and GLUE zip

One commit of weights, tokenizer, config, results, the run record and the card: the ``README.md`` the run wrote, or
for an older folder without one, a card rendered from its ``run_info.json`` (:func:`hf_bert_tasks.hub.push.card_for_push`;
``--task``, ``--base_model``, ``--seed_runs``, ``--license`` render it again). The token (``HF_TOKEN`` or the stored
login) is never printed. A suite's folder (``hf-bert-tasks suite``) pushes its card (every finished run's results in
its ``model-index``), ``suite.md``, ``suite.json``, ``suite.png`` and ``glue_submission.zip``, not its runs' models.
``--dry_run`` prints the card and the file list, with no network call; a failed push exits with status 1. Dashed
spellings (``--repo-id`` …) still work, deprecated.
"""

from __future__ import annotations

import argparse
import logging
import sys


def build_parser() -> argparse.ArgumentParser:
    """The ``push`` flags (argparse; errors raise :class:`hf_bert_tasks.cli.UsageError`)."""
    from ..cli import ArgumentParser, add_flag

    parser = ArgumentParser(prog="hf-bert-tasks push", description=__doc__.splitlines()[0])
    parser.add_argument("output_dir", help="a finished fine-tuning or pretraining output dir, or a suite's")
    add_flag(parser, "repo_id", required=True, metavar="ORG/NAME", help="the Hub repository to push to")
    parser.add_argument("--private", action="store_true", help="create the repo private (new repos only)")
    parser.add_argument("--revision", default=None, help="branch to push to (created from main if missing)")
    parser.add_argument("--task", default=None, help="registered task (default: the run record's, run_info.json)")
    add_flag(
        parser,
        "base_model",
        default=None,
        help="Hub id of the checkpoint the run started from (when it was a local folder, the record names none)",
    )
    add_flag(
        parser,
        "seed_runs",
        nargs="*",
        default=None,
        help="output dirs of the same configuration with other seeds (mean ± std on the card)",
    )
    parser.add_argument("--license", default=None, help="license of the card (default: the card's, apache-2.0)")
    add_flag(parser, "commit_message", default=None, help="commit message (default: a summary of the run)")
    readme = parser.add_mutually_exclusive_group()
    add_flag(
        readme,
        "keep_readme",
        flag=True,
        help="a README.md edited on the Hub is kept (its model-index results "
        "updated); without this or --overwrite_readme such a push stops and says so",
    )
    add_flag(
        readme, "overwrite_readme", flag=True, help="replace a README.md edited on the Hub with the generated card"
    )
    add_flag(parser, "dry_run", flag=True, help="print the card and the files that would be pushed; no network call")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv``, take the card (:func:`~hf_bert_tasks.hub.push.card_for_push`), push (or print it with
    ``--dry-run``). Returns the exit status."""
    args = build_parser().parse_args(argv)  # before the heavy imports: --help and usage errors answer at once
    from huggingface_hub import ModelCard

    from ..finetune.grid import load_seed_runs
    from ..hub.push import HubPushError, card_for_push, check_repo_id, files_to_push, push_output_dir

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    check_repo_id(args.repo_id)
    card_kwargs = {"task": args.task, "base_model": args.base_model, "license": args.license}
    if args.seed_runs:
        card_kwargs["seed_runs"] = load_seed_runs([args.output_dir, *args.seed_runs])
    if args.dry_run:
        files = files_to_push(args.output_dir) + ["README.md"]
        text = card_for_push(args.output_dir, args.repo_id, files, card_kwargs)
        print(text)
        print("\nfiles to push:", ", ".join(files))
        if not ModelCard(text, ignore_metadata_errors=True).data.base_model:  # a local folder records no Hub id
            print(
                "note: the card names no base model (the run started from a local folder); add --base_model "
                "ORG/NAME (the Hub id of that checkpoint) so the Hub links the two"
            )
        return 0
    try:
        result = push_output_dir(
            args.output_dir,
            args.repo_id,
            private=args.private,
            revision=args.revision,
            commit_message=args.commit_message,
            card_kwargs=card_kwargs,
            keep_readme=True if args.keep_readme else False if args.overwrite_readme else None,
        )
    except HubPushError as err:
        print(f"hf-bert-tasks push: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    print(
        f"pushed {len(result.files)} files to {result.repo_url} (revision {result.revision}, commit "
        f"{result.commit_oid}); card has {result.eval_results} eval results"
    )
    return 0


if __name__ == "__main__":
    from ..cli import run_subcommand

    sys.exit(run_subcommand("push"))
