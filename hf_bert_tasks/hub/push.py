"""The one place that talks to the Hugging Face Hub: push an output dir (weights, tokenizer, card, results), load back.

A push (``hf-bert-tasks push``, or a recipe's ``--push_to_hub --hub_model_id org/name``) is **one commit**; a suite's
folder (``hf-bert-tasks suite``) pushes its own files and card, not its runs' models. The card is
the ``README.md`` the run wrote (:func:`hf_bert_tasks.hub.cards.write_card`), rendered only for an older folder
without one, and its ``model-index`` results **replace in place** those already on the Hub with the same key (why:
docs/design.md, "model-index merged in place"). The token goes to ``huggingface_hub`` only, never printed, logged or
written; nothing is written into ``output_dir``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

#: Files pushed from an output dir (top level; shell patterns).
PUSH_PATTERNS = (
    "config.json",
    "generation_config.json",
    "*.safetensors",
    "model.safetensors.index.json",
    "adapter_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "special_tokens_map.json",
    "added_tokens.json",
    "all_results.json",
    "train_results.json",
    "eval_results.json",
    "run_info.json",
    "trainer_state.json",
    "lr_grid_results.json",
    "pretraining_summary.json",
    "comparison.md",
    "comparison.json",
    "*.png",
    "*.tsv",
    "*predictions*.json",
    "*predictions*.txt",
    "null_odds*.json",
    "nbest*.json",
    # a frozen-feature model's remote code (config.json's auto_map; BertFeatureBasedModel.save_pretrained)
    "modeling.py",
    "heads.py",
    "strategies.py",
    # a suite's folder (hf-bert-tasks suite): its table and summary, and the GLUE server's zip; suite.png is a *.png
    "suite.md",
    "suite.json",
    "glue_submission.zip",
)
#: Not in the file list: pickles and optimizer/scheduler/RNG states; ``README.md``, the card, is uploaded by
#: :func:`push_output_dir` itself (:func:`card_for_push`, merged with the Hub's card by :func:`card_to_upload`).
NEVER_PUSH = ("training_args.bin", "*.pt", "*.pth", "optimizer*", "scheduler*", "rng_state*", "README.md")


def card_to_upload(remote_text: str | None, card, keep_readme: bool | None = None):
    """The ``README.md`` text to upload over ``remote_text`` (the Hub's, ``None`` if none): ``card`` (a
    ``ModelCard``, or the text of a local ``README.md``) with the remote ``model-index`` results merged in place, as
    it is when that changes nothing (no remote card, or every remote result replaced); unless the remote README was
    edited (:func:`readme_edited`): then ``keep_readme=True`` keeps the user's text (its ``model-index`` updated),
    ``False`` replaces it, and ``None`` raises. A re-serialised card gets a new hash line (:func:`card_text`) unless
    it is a local README the user edited.

    Raises:
        ValueError: an edited remote README and no ``keep_readme`` choice (names both flags).
    """
    from huggingface_hub import ModelCard

    from .cards import card_text, readme_edited

    text = card if isinstance(card, str) else card_text(card)
    if remote_text is None:
        return text
    card, remote = ModelCard(text, ignore_metadata_errors=True), ModelCard(remote_text, ignore_metadata_errors=True)
    ours = card.data.eval_results or []
    merged = merge_eval_results(remote.data.eval_results or [], ours) or None
    if readme_edited(remote_text):
        if keep_readme is None:
            raise ValueError(
                "the README.md on the Hub was edited after hf_bert_tasks wrote it (or was not written by "
                "it); pass --keep_readme to keep it (only its model-index results are updated) or "
                "--overwrite_readme to replace it with the generated card"
            )
        if keep_readme:
            remote.data.eval_results = merged
            return str(remote)
    if merged is None or len(merged) == len(ours):  # every remote result replaced by ours: ours unchanged
        return text
    card.data.eval_results = merged
    return str(card) if readme_edited(text) else card_text(card)


class HubPushError(RuntimeError):
    """A push failed; the message names the repo, the step and the cause. The local output dir is unchanged."""


@dataclass
class PushResult:
    """What a push did: the repo URL, the commit, the revision and the files uploaded (paths in the repo)."""

    repo_url: str
    commit_url: str
    commit_oid: str
    revision: str
    files: list[str] = field(default_factory=list)
    eval_results: int = 0


def check_repo_id(repo_id: str) -> str:
    """``repo_id`` if ``huggingface_hub.utils.validate_repo_id`` accepts it (letters, digits, ``-_.``; no ``--``,
    ``..`` or ``.git`` ending; at most 96 characters) and it names a namespace, else ``ValueError`` (naming the rule).
    """
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        if not isinstance(repo_id, str) or "/" not in repo_id:
            raise HFValidationError("no namespace")
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise ValueError(f"--repo_id {repo_id!r}: expected 'org/name' ({err})") from None
    return repo_id


def files_to_push(output_dir: str) -> list[str]:
    """Top-level files of ``output_dir`` that a push uploads (:data:`PUSH_PATTERNS` less :data:`NEVER_PUSH`), sorted;
    ``FileNotFoundError`` when ``output_dir`` is not a folder."""
    from huggingface_hub.utils import filter_repo_objects

    if not os.path.isdir(output_dir):
        raise FileNotFoundError(f"{output_dir}: no such folder (expected a finished run's output dir)")
    names = [n for n in sorted(os.listdir(output_dir)) if os.path.isfile(os.path.join(output_dir, n))]
    return list(filter_repo_objects(names, allow_patterns=list(PUSH_PATTERNS), ignore_patterns=list(NEVER_PUSH)))


def card_for_push(output_dir: str, repo_id: str | None, files: list[str], card_kwargs: dict | None = None) -> str:
    """The card a push uploads (before the merge with the Hub's, :func:`card_to_upload`): the card the run wrote
    (``output_dir/README.md``), rendered again from the folder's record (:func:`build_card`, for ``repo_id`` and
    ``files``) so that its "How to use" loads ``repo_id``, not the local folder, with ``card_kwargs`` (``push``'s
    ``--task`` / ``--base_model`` / ``--seed_runs`` / ``--license``; ``None`` values ignored) applied. A README
    that was edited (:func:`~hf_bert_tasks.hub.cards.readme_edited`) is uploaded as it is (a warning when it
    still loads the local folder), and so is an unedited one with no record to render from (same warning). A folder
    with no README but its record (``run_info.json``, ``pretraining_summary.json``, or a suite's ``suite.json``) gets
    its card rendered.
    Nothing is guessed from the folder's files.

    Raises:
        FileNotFoundError: neither ``README.md`` nor a run record in ``output_dir`` (names both files).
        ValueError: ``card_kwargs`` given for a ``README.md`` that was edited (:func:`readme_edited`; names them).
    """
    from .cards import (
        PRETRAINING_SUMMARY_FILE,
        README_FILE,
        RUN_INFO_FILE,
        SUITE_SUMMARY_FILE,
        card_text,
        readme_edited,
    )

    card_kwargs = {k: v for k, v in (card_kwargs or {}).items() if v is not None}
    path = os.path.join(output_dir, README_FILE)
    records = (RUN_INFO_FILE, PRETRAINING_SUMMARY_FILE, SUITE_SUMMARY_FILE)
    recorded = any(os.path.isfile(os.path.join(output_dir, name)) for name in records)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        edited = readme_edited(text)
        if edited and card_kwargs:
            raise ValueError(
                f"{path} was edited, so --{' --'.join(card_kwargs)} cannot be applied to it; change it by hand, or "
                f"delete it to render the card from {RUN_INFO_FILE} with them"
            )
        if edited or not recorded or (repo_id is None and not card_kwargs):
            if repo_id and _loads_folder(text, output_dir):
                logger.warning("%s loads the local folder in its usage code, not %s: change it by hand", path, repo_id)
            return text
    if not recorded:
        raise FileNotFoundError(
            f"{output_dir}: no README.md (the card a run writes) and no {RUN_INFO_FILE} (the record a card is "
            "rendered from); expected an output dir of hf-bert-tasks finetune or pretrain"
        )
    return card_text(build_card(output_dir, repo_id=repo_id, files=files, **card_kwargs))


def _loads_folder(text: str, output_dir: str) -> bool:
    """Whether the card ``text`` loads ``output_dir`` (as given, normalised or absolute) in its usage code."""
    forms = {output_dir, os.path.normpath(output_dir), os.path.abspath(output_dir)}
    return any(f'"{form}"' in text for form in forms)


def pop_push_settings(training_args) -> dict | None:
    """Take the Hub settings out of ``training_args`` before ``Trainer`` sees them; ``None`` without ``--push_to_hub``.

    The recipes push with :func:`push_output_dir` at the end (``Trainer``'s own card lacks most of ours). Every secret
    (:func:`hf_bert_tasks.flags.training.scrub_secrets`) is taken out, with or without ``--push_to_hub``, so ``Trainer``
    never pickles it. No network call. ``ValueError``: ``--push_to_hub`` without a (well-formed) ``--hub_model_id``.
    """
    from ..flags.training import scrub_secrets

    token = scrub_secrets(training_args).get("hub_token")
    if not getattr(training_args, "push_to_hub", False):
        return None
    repo_id = getattr(training_args, "hub_model_id", None)
    if not repo_id:
        raise ValueError("--push_to_hub needs --hub_model_id org/name (the repo to create or update)")
    check_repo_id(repo_id)
    training_args.push_to_hub = False
    return {
        "repo_id": repo_id,
        "private": bool(getattr(training_args, "hub_private_repo", False)),
        "revision": getattr(training_args, "hub_revision", None),
        "token": token,
    }


def finish_run(task, training_args, push: dict | None) -> PushResult | None:
    """End of a fine-tuning run: push ``output_dir`` with the card the run wrote if ``--push_to_hub`` (``push``:
    :func:`pop_push_settings`'s result), on the main process only. ``HubPushError`` when the push
    failed (``output_dir`` is complete and unchanged: push it with ``hf-bert-tasks push``)."""
    if push is None or not training_args.should_save:
        return None
    result = push_output_dir(
        training_args.output_dir,
        push["repo_id"],
        private=push["private"],
        revision=push["revision"],
        token=push["token"],
    )
    logger.info("pushed to %s (commit %s)", result.repo_url, result.commit_oid)
    return result


def push_output_dir(
    output_dir: str,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    token: str | None = None,
    commit_message: str | None = None,
    card=None,
    card_kwargs: dict | None = None,
    keep_readme: bool | None = None,
) -> PushResult:
    """Push a finished run to the Hub in one commit, with its card (:func:`card_for_push`) whose eval results are
    merged in place with the Hub's; returns a :class:`PushResult`.

    Args:
        output_dir: a fine-tuning (``all_results.json``) or pretraining (``pretraining_summary.json``) output dir, or
            a suite's folder (``suite.json``: its card, ``suite.md``, ``suite.json``, ``suite.png`` and
            ``glue_submission.zip``; the runs' folders are not uploaded, :func:`files_to_push` lists the top level).
        repo_id: ``org/name``; created if missing. private: create it private; an existing public repo is refused.
        revision: branch to push to (created from ``main`` if missing); default ``main``.
        token: a Hub token; default: ``HF_TOKEN`` or the stored login. Never logged.
        commit_message: default ``"Upload <folder> with hf_bert_tasks"``.
        card: a ready ``ModelCard`` (or ``README.md`` text); default :func:`card_for_push` with ``card_kwargs``.
        keep_readme: a README.md on the Hub edited since this package wrote it is kept (``True``), replaced
            (``False``) or, by default, the push stops and says so (:func:`card_to_upload`).

    Raises:
        FileNotFoundError / ValueError: bad ``output_dir`` or ``repo_id``, no card and no record to render one from
            (before any network call).
        HubPushError: the Hub refused or could not be reached (message: step, repo, cause); nothing local changed.
    """
    from huggingface_hub import CommitOperationAdd, HfApi, ModelCard, get_token
    from huggingface_hub.errors import EntryNotFoundError, RemoteEntryNotFoundError

    from .cards import SUITE_SUMMARY_FILE
    from .credentials import redact

    check_repo_id(repo_id)
    files = files_to_push(output_dir)
    # before the card: its errors are about other files; a suite's folder holds results, no model of its own
    if SUITE_SUMMARY_FILE not in files and not any(f.endswith(".safetensors") for f in files):
        raise FileNotFoundError(f"{output_dir}: no *.safetensors weights to push (found {files})")
    if card is None:
        card = card_for_push(output_dir, repo_id, files + ["README.md"], card_kwargs)
    revision = revision or "main"
    api = HfApi(token=token)
    step = "create the repo"
    try:
        repo_url = api.create_repo(repo_id, private=private, exist_ok=True)
        if private:
            step = "check the repo's visibility"
            if not api.model_info(repo_id).private:
                raise PermissionError(
                    f"{repo_id} already exists and is public; refusing to upload a run asked to be "
                    "private (make the repo private on the Hub first, or drop --private)"
                )
        if revision != "main":
            step = f"create branch {revision!r}"
            api.create_branch(repo_id, branch=revision, exist_ok=True)
        step = "read the card already on the Hub"
        try:  # its model-index results, each replaced in place by the new one with the same key
            with open(
                api.hf_hub_download(repo_id, "README.md", revision=revision, token=token), encoding="utf-8"
            ) as f:
                remote_text = f.read()
        except (EntryNotFoundError, RemoteEntryNotFoundError):
            remote_text = None  # no card on the Hub yet
        readme = card_to_upload(remote_text, card, keep_readme)
        step = "upload"
        operations = [
            CommitOperationAdd(path_in_repo=name, path_or_fileobj=os.path.join(output_dir, name)) for name in files
        ]
        operations.append(CommitOperationAdd(path_in_repo="README.md", path_or_fileobj=readme.encode("utf-8")))
        message = commit_message or f"Upload {os.path.basename(os.path.normpath(output_dir))} with hf_bert_tasks"
        info = api.create_commit(repo_id, operations, commit_message=message, revision=revision)
    except Exception as err:  # HfHubHTTPError, connection errors, invalid YAML (ValueError) ...
        cause = str(err).splitlines()[0] if str(err) else type(err).__name__
        server = getattr(err, "server_message", None)
        if server and server not in cause:
            cause += f" (server: {server.strip()})"
        cause = redact(cause, (token, get_token()))  # the given token, or HF_TOKEN / the stored login
        raise HubPushError(
            f"push of {output_dir} to {repo_id} (revision {revision}) failed at step '{step}': "
            f"{type(err).__name__}: {cause}. Nothing in {output_dir} was changed."
        ) from err
    logger.info("pushed %d files of %s to %s@%s (commit %s)", len(files) + 1, output_dir, repo_id, revision, info.oid)
    return PushResult(
        repo_url=str(repo_url),
        commit_url=info.commit_url,
        commit_oid=info.oid,
        revision=revision,
        files=files + ["README.md"],
        eval_results=len(ModelCard(readme, ignore_metadata_errors=True).data.eval_results or []),
    )


def pipeline_for(model: str, revision: str | None = None, token: str | None = None, **kwargs):
    """A ``transformers.pipeline`` for a pushed repo id or a local output dir, with the right task and options.

    The model's problem type (:func:`problem_type_of`: the ``task_problem_type`` its ``config.json`` records; else the
    registered :class:`~hf_bert_tasks.tasks.problems.ProblemType` whose ``model_head`` loads its architecture) gives
    the pipeline and its options: ``ProblemType.pipeline`` (its ``pipeline_module`` imported first: SQuAD's
    ``extractive-question-answering``) and ``pipeline_options`` (sequence classification truncating, regression
    ``function_to_apply="none"``, token classification ``aggregation_strategy="first"``, paper §5.3: docs/design.md,
    'pipeline_for uses aggregation_strategy="first"'); a pretraining checkpoint -> ``fill-mask`` (truncating).
    ``kwargs`` override these options. ``ValueError`` for a problem type no pipeline serves (multiple choice) or an
    unknown architecture (names it and what to use).
    """
    import importlib

    from transformers import AutoConfig, pipeline

    from ..modes.feature_based import mode as feature_based  # noqa: F401 - registers model_type "bert_feature_based" with the Auto classes

    config = AutoConfig.from_pretrained(model, revision=revision, token=token)
    arch = (config.architectures or [""])[0]
    if arch.endswith(("ForPreTraining", "ForMaskedLM")):
        task, options = "fill-mask", {"tokenizer_kwargs": {"truncation": True}}
    else:
        problem = problem_type_of(config)
        if problem is None:
            raise ValueError(
                f"{model}: architecture {arch or 'unknown'} has no pipeline here; load it with the matching "
                "AutoModelFor... class (multiple choice: AutoModelForMultipleChoice)"
            )
        if problem.pipeline is None:
            raise ValueError(
                f"{model}: no transformers pipeline serves {problem.name} models; load it with "
                f"{problem.model_head} (architecture {arch or 'unknown'})"
            )
        if problem.pipeline_module:
            importlib.import_module(problem.pipeline_module)  # registers the package's pipeline with transformers
        task, options = problem.pipeline, dict(problem.pipeline_options)
    options.update(kwargs)
    return pipeline(task, model=model, revision=revision, token=token, **options)


def problem_type_of(config):
    """The registered :class:`~hf_bert_tasks.tasks.problems.ProblemType` of a saved model's ``config`` (a
    ``PretrainedConfig`` or any object with its attributes): the one its ``task_problem_type`` names (written by the
    recipe, ``Task.model_config_kwargs``, and by the feature-based mode); else (a model trained elsewhere) the problem
    type whose ``model_head`` loads ``config.architectures[0]`` (its ``For...`` suffix), the one named by
    ``config.problem_type`` among those sharing a head (regression beside single-label classification), else the
    first registered. ``None`` when no registered problem type loads the architecture."""
    from ..tasks import PROBLEM_TYPES  # every family's problem type registered

    recorded = getattr(config, "task_problem_type", None)
    if recorded in PROBLEM_TYPES or getattr(config, "model_type", None) == "bert_feature_based":
        return PROBLEM_TYPES.get(recorded)
    arch = (getattr(config, "architectures", None) or [""])[0]
    candidates = [p for p in PROBLEM_TYPES.values() if arch and arch.endswith(p.architecture_suffix)]
    named = [p for p in candidates if p.name == getattr(config, "problem_type", None)]
    return (named or candidates or [None])[0]


def eval_result_key(result) -> tuple:
    """What identifies one result in ``model-index``: task, dataset (id, config, split), metric type and config."""
    return (
        result.task_type,
        result.dataset_type,
        result.dataset_config,
        result.dataset_split,
        result.metric_type,
        result.metric_config,
    )


def merge_eval_results(existing: list, new: list) -> list:
    """``existing`` with each result of ``new`` replacing the one with its :func:`eval_result_key` in place, the
    others of ``new`` appended: one entry per key."""
    merged = {eval_result_key(r): r for r in existing or []}
    merged.update((eval_result_key(r), r) for r in new)
    return list(merged.values())


def build_card(output_dir: str, **kwargs):
    """The card of any finished output dir, as a push renders it: for a suite's folder (``suite.json``)
    :func:`hf_bert_tasks.scripts.suite_card.build_suite_card`; for a folder with ``pretraining_summary.json`` and no
    ``all_results.json`` :func:`hf_bert_tasks.pretraining.card.build_pretraining_card` (keyword arguments it does not
    take, ``task`` and ``seed_runs``, are dropped); else :func:`hf_bert_tasks.finetune.card.build_finetune_card`.
    ``ValueError`` for ``task`` or ``seed_runs`` given for a suite (its card names every run's task; names the flags).
    Errors: the builder's."""
    from .cards import PRETRAINING_SUMMARY_FILE, SUITE_SUMMARY_FILE

    if os.path.isfile(os.path.join(output_dir, SUITE_SUMMARY_FILE)):
        from ..scripts.suite_card import build_suite_card

        if given := [k for k in ("task", "seed_runs") if kwargs.get(k) is not None]:
            raise ValueError(
                f"{output_dir} is a suite's folder ({SUITE_SUMMARY_FILE}); --{' and --'.join(given)}: a run's, not "
                "for the suite's card (it names every run's task); push a run's folder with it"
            )
        return build_suite_card(output_dir, **{k: v for k, v in kwargs.items() if k not in ("task", "seed_runs")})
    if os.path.isfile(os.path.join(output_dir, PRETRAINING_SUMMARY_FILE)) and not os.path.isfile(
        os.path.join(output_dir, "all_results.json")
    ):
        from ..pretraining.card import build_pretraining_card

        return build_pretraining_card(
            output_dir, **{k: v for k, v in kwargs.items() if k not in ("task", "seed_runs")}
        )
    from ..finetune.card import build_finetune_card

    return build_finetune_card(output_dir, **kwargs)
