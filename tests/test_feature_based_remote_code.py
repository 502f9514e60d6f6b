"""A saved frozen-feature model loads without hf_bert_tasks (issue 44 item 3): ``save_pretrained`` writes the package's
own ``modeling.py`` / ``heads.py`` / ``strategies.py`` beside ``config.json`` with an ``auto_map``, and transformers'
remote-code mechanism (``trust_remote_code=True``) serves it in a fresh interpreter where importing hf_bert_tasks
fails. What that interpreter computes must equal what the package's own (registered) classes compute on the same
folder: float32 on the same CPU, the same operations, so ``atol=1e-5`` (none expected; the margin only allows for
thread-order differences in summation).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.test_contract_task_mode import tiny_model_dir  # noqa: F401 - the shared tiny BERT fixture

ATOL = 1e-5
REPO_DIR = Path(__file__).resolve().parent.parent
PACKAGE_DIR = REPO_DIR / "hf_bert_tasks" / "modes" / "feature_based"
TEXT, PAIR = "the cat sat on the mat .", "a dog ran to the river ."
#: problem type -> (feature strategy, head, extra config): one folder per Auto class a feature-based model serves
FOLDERS = {
    "single_label_classification": (
        "sum_last_four",
        "mlp",
        {"num_labels": 3, "id2label": {0: "neg", 1: "neu", 2: "pos"}, "label2id": {"neg": 0, "neu": 1, "pos": 2}},
    ),
    "token_classification": (
        "concat_last_four",
        "bilstm",
        {"num_labels": 3, "id2label": {0: "O", 1: "B-PER", 2: "I-PER"}, "label2id": {"O": 0, "B-PER": 1, "I-PER": 2}},
    ),
    "question_answering": ("last", "linear", {}),
    "multiple_choice": ("scalar_mix", "linear", {}),
}

#: run in a fresh interpreter, hf_bert_tasks made unimportable first; prints one JSON object
FRESH = r"""
import json, sys
sys.modules["hf_bert_tasks"] = None  # "import hf_bert_tasks..." now raises ImportError
import torch
from transformers import AutoConfig, AutoModelForMultipleChoice, AutoModelForQuestionAnswering, AutoTokenizer, pipeline
folders, text, pair = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
out = {}
clf = pipeline("text-classification", model=folders["single_label_classification"], trust_remote_code=True,
               function_to_apply="none", top_k=None)
out["classes"] = {"module": type(clf.model).__module__,
                  "scores": {d["label"]: float(d["score"]) for d in clf({"text": text, "text_pair": pair})}}
ner = pipeline("token-classification", model=folders["token_classification"], trust_remote_code=True,
               aggregation_strategy="none", ignore_labels=[])
out["tokens"] = {"module": type(ner.model).__module__,
                 "entities": [[int(e["index"]), e["entity"], float(e["score"])] for e in ner(text)]}
for key, auto in (("question_answering", AutoModelForQuestionAnswering), ("multiple_choice", AutoModelForMultipleChoice)):
    model = auto.from_pretrained(folders[key], trust_remote_code=True).eval()
    tok = AutoTokenizer.from_pretrained(folders[key], trust_remote_code=True)  # it reads config.json too
    if key == "question_answering":
        enc = tok(text, pair, return_tensors="pt")
        with torch.no_grad():
            res = model(**enc)
        logits = [res.start_logits[0].tolist(), res.end_logits[0].tolist()]
    else:
        enc = tok([text, text], [pair, "she walked to a park ."], padding=True, return_tensors="pt")
        with torch.no_grad():
            logits = model(**{k: v.unsqueeze(0) for k, v in enc.items()}).logits[0].tolist()
    out[key] = {"module": type(model).__module__, "logits": logits}
out["package_imported"] = sorted(m for m in sys.modules if m.startswith("hf_bert_tasks.") and sys.modules[m])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory, tiny_model_dir):  # noqa: F811
    """``{problem type: folder}``: one tiny feature-based model per head family, saved by the package with the
    tokenizer (as the recipe saves its output dir)."""
    from transformers import AutoTokenizer

    from hf_bert_tasks.modes.feature_based.mode import BertFeatureBasedModel

    root, tokenizer = tmp_path_factory.mktemp("feature-remote"), AutoTokenizer.from_pretrained(tiny_model_dir)
    folders = {}
    for problem_type, (strategy, head, extra) in FOLDERS.items():
        torch.manual_seed(0)
        model = BertFeatureBasedModel.from_encoder(
            tiny_model_dir, problem_type, strategy, head=head, head_hidden_size=8, **extra
        )
        with torch.no_grad():  # a learned-looking mix, not the uniform start, so the remote code must apply it
            for p in model.combiner.parameters():
                p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape))
        folders[problem_type] = str(root / problem_type)
        model.save_pretrained(folders[problem_type])
        tokenizer.save_pretrained(folders[problem_type])
    return folders


@pytest.fixture(scope="module")
def fresh(saved, tmp_path_factory):
    """The JSON printed by :data:`FRESH`, run once with the package off ``sys.path`` and a private modules cache."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HF_MODULES_CACHE"] = str(tmp_path_factory.mktemp("hf-modules"))
    proc = subprocess.run(
        [sys.executable, "-c", FRESH, json.dumps(saved), TEXT, PAIR],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path_factory.mktemp("elsewhere")),
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )  # no answer to a "run the custom code?" prompt
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _package_model(folder: str, auto_name: str):
    import transformers

    import hf_bert_tasks.modes.feature_based.mode  # noqa: F401 - registers the package's classes

    model = getattr(transformers, auto_name).from_pretrained(folder).eval()
    assert (
        type(model).__module__ == "hf_bert_tasks.modes.feature_based.modeling"
    )  # the package's class, not remote code
    return model, transformers.AutoTokenizer.from_pretrained(folder)


def test_the_saved_folder_holds_the_packages_own_modules_as_they_are(saved):
    folder = Path(saved["token_classification"])
    for name in ("modeling.py", "heads.py", "strategies.py"):
        assert (folder / name).read_bytes() == (PACKAGE_DIR / name).read_bytes(), name


@pytest.mark.parametrize(
    ("problem_type", "auto"),
    [
        ("single_label_classification", "AutoModelForSequenceClassification"),
        ("token_classification", "AutoModelForTokenClassification"),
        ("question_answering", "AutoModelForQuestionAnswering"),
        ("multiple_choice", "AutoModelForMultipleChoice"),
    ],
)
def test_config_json_maps_the_auto_classes_to_the_saved_code(saved, problem_type, auto):
    with open(os.path.join(saved[problem_type], "config.json"), encoding="utf-8") as f:
        auto_map = json.load(f)["auto_map"]
    assert auto_map == {
        "AutoConfig": "modeling.BertFeatureBasedConfig",
        "AutoModel": "modeling.BertFeatureBasedModel",
        auto: "modeling.BertFeatureBasedModel",
    }


def test_the_fresh_interpreter_ran_remote_code_without_the_package(fresh):
    assert fresh["package_imported"] == []
    for key in ("classes", "tokens", "question_answering", "multiple_choice"):
        assert fresh[key]["module"].startswith("transformers_modules."), key


def test_text_classification_pipeline_scores_are_the_packages_logits(saved, fresh):
    model, tok = _package_model(saved["single_label_classification"], "AutoModelForSequenceClassification")
    with torch.no_grad():
        logits = model(**tok(TEXT, PAIR, return_tensors="pt")).logits[0]
    expected = {model.config.id2label[i]: float(v) for i, v in enumerate(logits)}
    assert sorted(fresh["classes"]["scores"]) == ["neg", "neu", "pos"]
    np.testing.assert_allclose([fresh["classes"]["scores"][k] for k in expected], list(expected.values()), atol=ATOL)


def test_token_classification_pipeline_tags_and_scores_are_the_packages(saved, fresh):
    model, tok = _package_model(saved["token_classification"], "AutoModelForTokenClassification")
    enc = tok(TEXT, return_tensors="pt")
    with torch.no_grad():
        probs = model(**enc).logits[0].softmax(-1)
    words = len(enc["input_ids"][0]) - 2  # the pipeline leaves out [CLS] and [SEP]
    expected = [[i, model.config.id2label[int(probs[i].argmax())], float(probs[i].max())] for i in range(1, words + 1)]
    got = fresh["tokens"]["entities"]
    assert [g[:2] for g in got] == [e[:2] for e in expected]
    np.testing.assert_allclose([g[2] for g in got], [e[2] for e in expected], atol=ATOL)


def test_question_answering_logits_are_the_packages(saved, fresh):
    model, tok = _package_model(saved["question_answering"], "AutoModelForQuestionAnswering")
    with torch.no_grad():
        res = model(**tok(TEXT, PAIR, return_tensors="pt"))
    np.testing.assert_allclose(
        fresh["question_answering"]["logits"], [res.start_logits[0].tolist(), res.end_logits[0].tolist()], atol=ATOL
    )


def test_multiple_choice_logits_are_the_packages(saved, fresh):
    model, tok = _package_model(saved["multiple_choice"], "AutoModelForMultipleChoice")
    enc = tok([TEXT, TEXT], [PAIR, "she walked to a park ."], padding=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**{k: v.unsqueeze(0) for k, v in enc.items()}).logits[0]
    np.testing.assert_allclose(fresh["multiple_choice"]["logits"], logits.tolist(), atol=ATOL)


def test_a_push_uploads_the_remote_code_files(saved):
    from hf_bert_tasks.hub.push import files_to_push

    folder = saved["single_label_classification"]
    code = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    assert code == ["heads.py", "modeling.py", "strategies.py"]
    assert set(code) <= set(files_to_push(folder))


@pytest.mark.parametrize(
    ("problem_type", "task", "results"),
    [
        ("single_label_classification", "sst2", {"eval_accuracy": 0.5}),
        ("token_classification", "conll2003", {"eval_f1": 0.5}),
        ("multiple_choice", "swag", {"eval_accuracy": 0.25}),
    ],
)
def test_the_cards_how_to_use_runs_without_the_package(saved, problem_type, task, results, tmp_path):
    """The card's "How to use" of a frozen-feature model (trust_remote_code, no hf_bert_tasks import) runs as written
    in an interpreter where importing hf_bert_tasks fails."""
    import re
    import shutil

    from hf_bert_tasks.finetune.card import build_finetune_card

    folder = tmp_path / "model"
    shutil.copytree(saved[problem_type], folder)
    (folder / "all_results.json").write_text(json.dumps(results), encoding="utf-8")
    text = str(build_finetune_card(str(folder), task=task))
    code = re.search(r"## How to use\n.*?```python\n(.*?)```", text, flags=re.DOTALL).group(1)
    assert "trust_remote_code=True" in code and "hf_bert_tasks" not in code
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HF_MODULES_CACHE"] = str(tmp_path / "hf-modules")
    proc = subprocess.run(
        [sys.executable, "-c", 'import sys; sys.modules["hf_bert_tasks"] = None\n' + code],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"{code}\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), code


def test_the_card_describes_the_code_files(saved, tmp_path):
    import shutil

    from hf_bert_tasks.finetune.card import build_finetune_card

    folder = tmp_path / "model"
    shutil.copytree(saved["single_label_classification"], folder)
    (folder / "all_results.json").write_text(json.dumps({"eval_accuracy": 0.5}), encoding="utf-8")
    text = str(build_finetune_card(str(folder), task="sst2"))
    for name in ("modeling.py", "heads.py", "strategies.py"):
        assert f"`{name}`: frozen-feature model code (`trust_remote_code`)" in text, text[text.index("### Files") :]


def test_the_qa_cards_how_to_use_runs_with_remote_code(saved, tmp_path):
    """SQuAD's card keeps the package's QA pipeline (transformers 5 has none) and loads the model's remote code."""
    import re
    import shutil

    from hf_bert_tasks.finetune.card import build_finetune_card

    folder = tmp_path / "model"
    shutil.copytree(saved["question_answering"], folder)
    (folder / "all_results.json").write_text(json.dumps({"eval_exact_match": 0.0, "eval_f1": 1.0}), encoding="utf-8")
    code = re.search(
        r"## How to use\n.*?```python\n(.*?)```",
        str(build_finetune_card(str(folder), task="squad_v1")),
        flags=re.DOTALL,
    ).group(1)
    assert "trust_remote_code=True" in code and "no other package" not in code
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_DIR),
        "HF_MODULES_CACHE": str(tmp_path / "hf-modules"),
    }
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"{code}\n{proc.stderr[-3000:]}"
    assert "'answer':" in proc.stdout, proc.stdout
