"""One contract for every registered task in every training mode (issue 14 item 5), like peft's common tester.

For each (task, mode) the fine-tune recipe runs end to end on a few examples written here in the task's original file
format: read -> preprocess -> collate -> forward -> train (``--max_steps 2``) -> evaluate -> predict -> save; then the
saved folder is loaded with ``pipeline()`` (:func:`hf_bert_tasks.hub.push.pipeline_for`; SQuAD: the package's
``extractive-question-answering`` pipeline) and its model card is built. Tasks come from the task registry and modes
from :func:`training_modes`, so a new task or mode joins automatically; a task needs tiny data from
:func:`write_tiny_data` (GLUE-style tasks get it from their own reader declarations).

One tiny BERT (2 layers, hidden 16, a written vocabulary) is built once for the module. The only documented
non-support: transformers 5 has no multiple-choice pipeline (``hub.pipeline_for``'s docstring): the test asserts that
``pipeline_for`` refuses a SWAG folder and loads it with ``AutoModelForMultipleChoice`` instead.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import os

import pytest

import hf_bert_tasks
from hf_bert_tasks.tasks import TASK_REGISTRY
from tests.conftest import tiny_run_argv


def training_modes() -> list[str]:
    """Every training mode: the mode registry (``hf_bert_tasks.modes``) where it exists, else the ``--mode``
    choices declared on ``FinetuneTrainingArguments`` (read from the source, as ``flags.dataclass_fields`` does, so
    collecting the tests imports no transformers)."""
    try:
        from hf_bert_tasks.modes import TRAINING_MODES  # the mode registry (issue 14 item 1)
    except ImportError:
        from hf_bert_tasks.flags.help import dataclass_fields

        mode = next(
            f
            for f in dataclass_fields("hf_bert_tasks.finetune.config", "FinetuneTrainingArguments")
            if f.name == "mode"
        )
        return list(mode.choices)
    return list(TRAINING_MODES)


TASKS = hf_bert_tasks.list_tasks()
MODES = training_modes()
CASES = [(task, mode) for task in TASKS for mode in MODES]

MAX_SEQ_LENGTH = 48
#: Settings every run shares (with :func:`tests.conftest.tiny_run_argv`'s: no checkpoints, no report backends):
#: 2 optimizer steps, no evaluation during training (the final one runs).
COMMON = [
    "--max_steps",
    "2",
    "--per_device_train_batch_size",
    "4",
    "--per_device_eval_batch_size",
    "4",
    "--max_seq_length",
    str(MAX_SEQ_LENGTH),
    "--learning_rate",
    "1e-3",
    "--eval_strategy",
    "no",
    "--logging_steps",
    "1",
    "--disable_tqdm",
    "true",
    "--seed",
    "0",
    "--no_cache_tokenized",
    "--max_query_length",
    "16",
    "--doc_stride",
    "16",
]
#: Per-mode settings that keep the run tiny (a mode not listed runs with its defaults).
MODE_FLAGS = {"feature_based": ["--head_hidden_size", "16"], "lora": ["--lora_r", "2", "--lora_alpha", "4"]}

#: The written WordPiece vocabulary (ids = line numbers); every word of the tiny data is in it.
WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "ran",
    "to",
    ".",
    ",",
    "?",
    "is",
    "was",
    "not",
    "good",
    "bad",
    "new",
    "york",
    "in",
    "he",
    "she",
    "it",
    "and",
    "rug",
    "who",
    "where",
    "what",
    "red",
    "blue",
    "big",
    "small",
    "park",
    "house",
    "river",
    "city",
    "nadia",
    "hiro",
    "met",
    "at",
    "cup",
    "world",
    "cross",
    "london",
    "paris",
    "walked",
    "later",
    "sold",
    "map",
    "coloured",
    "delightful",
]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "##s", "##ed", "##ing"]
SIZES = {"train": 8}  # other splits: 4 examples
N_OTHER = 4


def sentence(i: int) -> str:
    """A deterministic sentence of vocabulary words, different for every ``i``."""
    subjects, verbs, things = (
        ["the cat", "a dog", "he", "she", "nadia", "hiro"],
        ["sat on", "ran to", "walked to"],
        ["the mat", "the rug", "a park", "the house", "the river", "a city"],
    )
    text = f"{subjects[i % 6]} {verbs[i % 3]} {things[(i * 5) % 6]}"
    return text + (" and it was good ." if i % 2 else " .")


# ------------------------------------------------------------------------------------------------ tiny data
def _glue_label(task, i: int) -> str:
    """The raw label the files hold for example ``i`` (every class occurs in 4 examples)."""
    if task.problem_type == "regression":
        return f"{(i * 1.3) % 5:.2f}"
    name = task.label_names[i % len(task.label_names)]
    return next(raw for raw, mapped in task.raw_label_map.items() if mapped == name)


def _write_glue(task, folder) -> None:
    """Files named by ``task.local_files`` (the first ``.tsv`` name), columns as its reader declares them."""
    for split, names in task.local_files.items():
        name = next(n for n in names if n.endswith(".tsv"))
        n = SIZES.get(split, N_OTHER)
        labelled = split not in task.test_splits
        lines = []
        if task.positional is not None and labelled:  # headerless (CoLA train/dev): fields at fixed positions
            for i in range(n):
                fields = ["src"] * (max(task.positional.values()) + 1)
                for column, at in task.positional.items():
                    fields[at] = _glue_label(task, i) if column == task.label_column else sentence(i)
                lines.append(fields)
        else:
            columns = [task.file_columns.get(c, c) for c in task.text_columns]
            label = [task.file_label_column or task.label_column] if labelled else []
            lines.append(["index", *columns, *label])
            for i in range(n):
                texts = [sentence(i + k) for k in range(len(columns))]
                lines.append([str(i), *texts, *([_glue_label(task, i)] if labelled else [])])
        (folder / name).write_text("".join("\t".join(f) + "\n" for f in lines), encoding="utf-8")


def _write_swag(task, folder) -> None:
    header = [
        "",
        "video-id",
        "fold-ind",
        "startphrase",
        "sent1",
        "sent2",
        "gold-source",
        "ending0",
        "ending1",
        "ending2",
        "ending3",
        "label",
    ]
    for split, names in task.local_files.items():
        labelled = split not in task.test_splits
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(header if labelled else header[:-1])
        for i in range(SIZES.get(split, N_OTHER)):
            endings = [sentence(i + k) for k in range(4)]
            row = [i, f"clip_{i}", i, "", sentence(i), "later he", "gold", *endings]
            writer.writerow(row + [i % 4] if labelled else row)
        (folder / names[0]).write_text(buf.getvalue(), encoding="utf-8")


def _write_conll(task, folder) -> None:
    words = [
        ("nadia", "B-PER"),
        ("met", "O"),
        ("hiro", "B-PER"),
        ("at", "O"),
        ("the", "O"),
        ("red", "B-ORG"),
        ("cross", "I-ORG"),
        ("in", "O"),
        ("new", "B-LOC"),
        ("york", "I-LOC"),
        ("world", "B-MISC"),
        ("cup", "I-MISC"),
        (".", "O"),
    ]
    for split, names in task.local_files.items():
        lines = ["-DOCSTART- -X- -X- O", ""]
        for i in range(SIZES.get(split, N_OTHER)):
            n = 5 + (i * 3) % 9
            lines += [f"{w} NN O {t}" for w, t in words[:n]] + [""]
        (folder / names[0]).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_squad(task, folder) -> None:
    version = "2.0" if task.version_2_with_negative else "1.1"
    questions = [
        ("who sat on the mat ?", "the cat"),
        ("where did the dog run ?", "to a park"),
        ("what was red ?", "the house"),
        ("who walked to the river ?", "nadia"),
    ]
    context = "the cat sat on the mat . a dog ran to a park . the house was red . nadia walked to the river ."
    for split, names in task.local_files.items():
        labelled = split not in task.test_splits
        items = []
        for i in range(SIZES.get(split, N_OTHER)):
            question, answer = questions[i % len(questions)]
            impossible = version == "2.0" and i % 4 == 3
            item = {"id": f"{split}{i}", "question": question, "answers": []}
            if labelled and not impossible:
                item["answers"] = [{"text": answer, "answer_start": context.index(answer)}]
            if version == "2.0":
                item["is_impossible"] = impossible and labelled
            items.append(item)
        data = [{"title": "t", "paragraphs": [{"context": context, "qas": items}]}]
        (folder / names[0]).write_text(json.dumps({"version": version, "data": data}), encoding="utf-8")


#: problem type -> writer of its tiny original files (GLUE-style sequence tasks share one generic writer).
WRITERS = {
    "single_label_classification": _write_glue,
    "regression": _write_glue,
    "multiple_choice": _write_swag,
    "token_classification": _write_conll,
    "question_answering": _write_squad,
}


def write_tiny_data(task, folder) -> str:
    """Write a few examples of every split of ``task`` in its original format into ``folder``; returns the folder.

    Raises:
        NotImplementedError: no writer for the task's problem type (a new kind of task must add one here).
    """
    if task.problem_type not in WRITERS:
        raise NotImplementedError(
            f"task {task.name!r}: no tiny-data writer for problem type {task.problem_type!r}; "
            "add one to WRITERS in tests/test_contract_task_mode.py"
        )
    folder.mkdir(parents=True, exist_ok=True)
    WRITERS[task.problem_type](task, folder)
    return str(folder)


# ------------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    """A random 2-layer, hidden-16 BERT with a tokenizer over :data:`VOCAB`, shared by every case."""
    from transformers import BertTokenizer

    from hf_bert_tasks.utils.modeling import build_random_bert

    root = tmp_path_factory.mktemp("contract-model")
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(vocab=str(root / "vocab.txt"), do_lower_case=True)
    return build_random_bert(
        str(root / "bert"),
        tokenizer,
        preset="tiny",
        seed=0,
        hidden_size=16,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )


@pytest.fixture(scope="module", autouse=True)
def _frozen_heap(tiny_model_dir):
    """Speed only: every Trainer run ends with accelerate's ``free_memory`` -> ``gc.collect()``, which scans every
    object of this process (torch, transformers, ...): ~40 % of a tiny run's CPU time. Objects alive once the
    model is built (imports included) are moved out of the collector's view for this module (``gc.freeze``);
    everything the runs create is collected as usual."""
    import gc

    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(scope="module")
def data_dirs(tmp_path_factory):
    """Tiny data per task, written once (``{task: folder}``, created on first use)."""
    root = tmp_path_factory.mktemp("contract-data")
    cache: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in cache:
            cache[name] = write_tiny_data(TASK_REGISTRY[name], root / name)
        return cache[name]

    return get


class _Wrote(logging.Handler):
    """Collects the paths the recipe logs as ``wrote <path>`` (``Task.predict``'s files)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.paths: list[str] = []

    def emit(self, record):
        if record.getMessage().startswith("wrote "):
            self.paths.append(record.getMessage()[len("wrote ") :])


@pytest.fixture(scope="module", params=CASES, ids=[f"{t}-{m}" for t, m in CASES])
def run(request, tmp_path_factory, tiny_model_dir, data_dirs):
    """The recipe run of one (task, mode): ``{"task", "mode", "out", "data_dir", "results", "predictions"}``."""
    from hf_bert_tasks.finetune import recipe as finetune

    name, mode = request.param
    out, data_dir = str(tmp_path_factory.mktemp(f"{name}-{mode}")), data_dirs(name)
    handler, logger = _Wrote(), logging.getLogger("hf_bert_tasks.finetune.recipe")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        results = finetune.main(
            tiny_run_argv(
                name, tiny_model_dir, out, "--mode", mode, *COMMON, *MODE_FLAGS.get(mode, []), data_dir=data_dir
            )
        )
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return {
        "task": TASK_REGISTRY[name],
        "mode": mode,
        "out": out,
        "data_dir": data_dir,
        "results": results,
        "predictions": handler.paths,
    }


# ------------------------------------------------------------------------------------------------ the contract
def test_trains_the_given_steps_and_reports_every_declared_metric(run):
    task, results = run["task"], run["results"]
    with open(os.path.join(run["out"], "trainer_state.json"), encoding="utf-8") as f:
        assert json.load(f)["global_step"] == 2  # --max_steps 2 in every mode (one Trainer trains them all)
    assert math.isfinite(results["train_loss"])
    with open(os.path.join(run["out"], "all_results.json"), encoding="utf-8") as f:
        assert json.load(f).keys() >= {k for k in results if k.startswith("eval_")}
    for split in task.eval_splits:
        for metric in task.metric_names:
            key = f"eval_{metric}{task.split_metric_suffix(split)}"
            assert isinstance(results.get(key), float), (key, sorted(results))


def test_predicts_every_test_split_into_files(run):
    task = run["task"]
    written = run["predictions"]
    assert len(written) >= len(task.test_splits), written
    for path in written:
        assert os.path.getsize(path) > 0, path


def test_saved_model_gives_the_logits_the_run_wrote(run):
    """Save -> load fidelity in every mode (a LoRA merge, a feature-based head and its layer weights): the saved
    folder, loaded with the task's Auto class and fed the task's own preprocess + collator, reproduces the logits the
    run wrote for its first eval split (``<split>_predictions.tsv``). Tasks scored from post-processed answers (NER
    tags, SQuAD spans) write no logits and skip."""
    task, out = run["task"], run["out"]
    split = task.eval_splits[0]
    path = os.path.join(out, f"{split}_predictions.tsv")
    if not os.path.isfile(path):
        pytest.skip(f"{task.name} writes no per-example logits ({task.problem_type})")
    import numpy as np
    import torch
    from transformers import AutoTokenizer

    import hf_bert_tasks.modes.feature_based.mode  # noqa: F401 - registers the feature-based model with the Auto classes

    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    columns = [c for c in rows[0] if c.startswith("logit_")] or ["prediction"]  # regression: the score itself
    written = np.array([[float(r[c]) for c in columns] for r in rows])
    tokenizer = AutoTokenizer.from_pretrained(out)
    model = task.model_class().from_pretrained(out).eval()
    features = task.preprocess(task.load(run["data_dir"])[split], tokenizer, MAX_SEQ_LENGTH, split)
    batch = task.data_collator(tokenizer)([features[i] for i in range(len(features))])
    batch.pop("labels", None)
    with torch.no_grad():
        logits = model(**batch).logits.numpy().reshape(written.shape)
    # one padded batch here, length-sorted batches of 4 in the run: only float rounding differs
    np.testing.assert_allclose(logits, written, rtol=1e-4, atol=1e-5)


def test_saved_config_records_the_tasks_problem_type(run):
    """Every task and mode saves its problem type in ``config.json`` (``task_problem_type``), which
    ``hub.push.problem_type_of`` reads first to serve the folder."""
    with open(os.path.join(run["out"], "config.json"), encoding="utf-8") as f:
        assert json.load(f)["task_problem_type"] == run["task"].problem_type


def test_saved_folder_loads_with_pipeline(run):
    """``pipeline_for`` (the documented loader) on the saved folder answers one literal input; SQuAD: the package's
    ``extractive-question-answering`` pipeline. Multiple choice has no pipeline in transformers 5 (documented in
    ``pipeline_for``): it must refuse the folder, which then loads with ``AutoModelForMultipleChoice``."""
    task, out = run["task"], run["out"]
    from hf_bert_tasks.hub.push import pipeline_for

    if task.problem_type == "multiple_choice":
        import torch
        from transformers import AutoModelForMultipleChoice, AutoTokenizer

        with pytest.raises(ValueError, match="AutoModelForMultipleChoice"):
            pipeline_for(out)
        model, tokenizer = AutoModelForMultipleChoice.from_pretrained(out), AutoTokenizer.from_pretrained(out)
        enc = tokenizer([sentence(0)] * 4, [sentence(k) for k in range(4)], padding=True, return_tensors="pt")
        with torch.no_grad():
            logits = model(**{k: v.unsqueeze(0) for k, v in enc.items()}).logits
        assert logits.shape == (1, 4)
        return
    if task.problem_type == "question_answering":
        from transformers import pipeline

        import hf_bert_tasks.tasks.squad.pipeline  # noqa: F401 - registers "extractive-question-answering"

        qa = pipeline("extractive-question-answering", model=out)
        context = "the cat sat on the mat ."
        answer = qa(question="who sat on the mat ?", context=context)
        assert set(answer) >= {"score", "start", "end", "answer"}
        assert answer["answer"] == context[answer["start"] : answer["end"]]
        return
    pipe = pipeline_for(out)
    if task.problem_type == "token_classification":
        entities = pipe("nadia met hiro in new york .")
        assert isinstance(entities, list)
        assert all(e["entity_group"] in {n[2:] for n in task.label_names if n != "O"} for e in entities)
        return
    inputs = {"text": sentence(0), "text_pair": sentence(1)} if len(task.text_columns) == 2 else sentence(0)
    prediction = pipe(inputs)
    prediction = prediction[0] if isinstance(prediction, list) else prediction
    if task.problem_type == "regression":
        assert math.isfinite(prediction["score"])
    else:
        assert prediction["label"] in task.label_names
        assert 0.0 <= prediction["score"] <= 1.0


def test_model_card_names_the_task_mode_and_metrics(run):
    from hf_bert_tasks.hub.push import build_card

    task, mode = run["task"], run["mode"]
    card = build_card(run["out"])
    text = str(card)
    assert task.name in text
    # the mode's own sentence, not the generic fallback ("Training mode: **<name>**.") of a mode without card text
    line = next((x for x in text.splitlines() if x.startswith("Training mode:")), None)
    assert line is not None and line.strip() != f"Training mode: **{mode}**.", line
    with open(os.path.join(run["out"], "run_info.json"), encoding="utf-8") as f:
        assert json.load(f)["training_mode"]["mode"] == mode
    results = card.data.eval_results
    assert results, "model-index holds the run's metrics"
    assert task.metric_spec(task.primary_metric).hub_id in {r.metric_type for r in results}
