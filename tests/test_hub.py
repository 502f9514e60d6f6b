"""Round trips against the local Hub of ``tests/hub_server.py``: push -> load by repo id -> same weights/predictions.

``huggingface_hub`` / ``transformers`` read ``HF_ENDPOINT`` and ``HF_HUB_DISABLE_XET`` at import, and this pytest
process already imported them offline (``tests/conftest.py``), so the client side runs in **one** subprocess per
module (:data:`CLIENT`) that performs every scenario and writes what it saw to a JSON file; each test then checks
one behaviour from that record. The server runs in this process, so tests can also inspect what it stored.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.conftest import REPO, SAMPLES
from tests.hub_server import LocalHub

TOKEN = "hf_localTESTtoken_0123456789"
FAST = [
    "--max_train_samples",
    "16",
    "--max_eval_samples",
    "8",
    "--max_predict_samples",
    "4",
    "--num_train_epochs",
    "1",
    "--per_device_train_batch_size",
    "16",
    "--learning_rate",
    "1e-3",
    "--save_strategy",
    "no",
    "--disable_tqdm",
    "true",
    "--report_to",
    "none",
]

#: The client: every scenario in order; results go to sys.argv[2] (JSON).
CLIENT = textwrap.dedent(r"""
    import contextlib, hashlib, io, json, os, shutil, sys
    import torch
    from huggingface_hub import HfApi, ModelCard
    from huggingface_hub.errors import RepositoryNotFoundError
    from transformers import (AutoModelForMultipleChoice, AutoModelForQuestionAnswering, AutoModelForSequenceClassification,
                              AutoModelForTokenClassification, AutoTokenizer, pipeline)
    from hf_bert_tasks import cli
    from hf_bert_tasks.hub.push import HubPushError, pipeline_for, push_output_dir

    dirs = json.load(open(sys.argv[1]))
    out = {}

    def listing(d):
        return {n: hashlib.sha256(open(os.path.join(d, n), "rb").read()).hexdigest() for n in sorted(os.listdir(d))}

    def card_results(repo_id, revision=None):
        card = ModelCard.load(repo_id) if revision is None else ModelCard(open(HfApi().hf_hub_download(
            repo_id, "README.md", revision=revision)).read())
        return [[r.dataset_split, r.metric_type, r.metric_value, r.dataset_type, r.dataset_config, r.task_type]
                for r in card.data.eval_results or []], card.data.to_dict()

    # 1. a failed upload (the server answers 500 to the first commit): error reported, output dir unchanged
    before = listing(dirs["mrpc"])
    try:
        push_output_dir(dirs["mrpc"], "org/failing")
        out["failed_push"] = "no error"
    except HubPushError as err:
        out["failed_push"] = str(err)
    out["failed_push_dir_unchanged"] = before == listing(dirs["mrpc"])
    # 1b. a wrong token: refused, token not echoed
    try:
        push_output_dir(dirs["mrpc"], "org/wrong-token", token="hf_WRONG_secret_token")
        out["wrong_token"] = "no error"
    except HubPushError as err:
        out["wrong_token"] = str(err)

    # 2. push with the CLI, load back by repo id
    cli.main(["push", dirs["mrpc"], "--repo_id", "org/tiny-mrpc", "--base_model", "google-bert/bert-base-uncased"])
    local = AutoModelForSequenceClassification.from_pretrained(dirs["mrpc"]).state_dict()
    remote = AutoModelForSequenceClassification.from_pretrained("org/tiny-mrpc").state_dict()
    out["mrpc_same_keys"] = sorted(local) == sorted(remote)
    out["mrpc_max_abs_diff"] = max(float((local[k] - remote[k]).abs().max()) for k in local)
    pair = {"text": "anna fixed a clock .", "text_pair": "a clock was fixed ."}
    out["mrpc_pipeline_task"] = pipeline(model="org/tiny-mrpc").task
    out["mrpc_pred_local"] = pipeline("text-classification", model=dirs["mrpc"])(pair)
    out["mrpc_pred_remote"] = pipeline(model="org/tiny-mrpc")(pair)
    out["mrpc_card"], out["mrpc_card_data"] = card_results("org/tiny-mrpc")
    out["mrpc_files"] = sorted(HfApi().list_repo_files("org/tiny-mrpc"))

    # 3. re-push with a changed metric: one entry per metric, the new value in place
    shutil.copytree(dirs["mrpc"], dirs["mrpc2"])
    res = json.load(open(os.path.join(dirs["mrpc2"], "all_results.json")))
    res["eval_f1"] = 0.123456
    json.dump(res, open(os.path.join(dirs["mrpc2"], "all_results.json"), "w"))
    cli.main(["push", dirs["mrpc2"], "--repo_id", "org/tiny-mrpc", "--base_model", "google-bert/bert-base-uncased"])
    out["repush_card"], _ = card_results("org/tiny-mrpc")

    # 4. regression (STS-B): the pipeline returns the raw score
    cli.main(["push", dirs["stsb"], "--repo_id", "org/tiny-stsb"])  # an older folder: card rendered from run_info.json
    sts = pipeline_for("org/tiny-stsb")({"text": "anna fixed a clock .", "text_pair": "a clock ."})
    logits = AutoModelForSequenceClassification.from_pretrained(dirs["stsb"])(
        **AutoTokenizer.from_pretrained(dirs["stsb"])("anna fixed a clock .", "a clock .", return_tensors="pt")).logits
    out["stsb_score"], out["stsb_logit"] = sts["score"], float(logits[0, 0])
    out["stsb_card"], _ = card_results("org/tiny-stsb")

    # 5. other heads: token classification (aggregated entities), question answering, multiple choice
    cli.main(["push", dirs["ner"], "--repo_id", "org/tiny-ner", "--task", "conll2003"])
    ner = pipeline(model="org/tiny-ner", aggregation_strategy="simple")
    out["ner_task"], out["ner_output_type"] = ner.task, type(ner("anna fixed a clock in york .")).__name__
    out["ner_labels"] = sorted(AutoModelForTokenClassification.from_pretrained("org/tiny-ner").config.label2id)
    out["ner_card"], _ = card_results("org/tiny-ner")
    cli.main(["push", dirs["qa"], "--repo_id", "org/tiny-qa", "--task", "squad_v1"])
    qa = AutoModelForQuestionAnswering.from_pretrained("org/tiny-qa")
    enc = AutoTokenizer.from_pretrained("org/tiny-qa")("who fixed it ?", "anna fixed a clock .", return_tensors="pt")
    out["qa_start_logits_shape"] = list(qa(**enc).start_logits.shape)
    out["qa_seq_len"] = int(enc["input_ids"].shape[1])
    try:
        pipeline_for("org/tiny-qa")
        out["qa_pipeline"] = "built"
    except ValueError as err:
        out["qa_pipeline"] = str(err)
    out["qa_card"], _ = card_results("org/tiny-qa")
    cli.main(["push", dirs["swag"], "--repo_id", "org/tiny-swag", "--task", "swag"])
    mc = AutoModelForMultipleChoice.from_pretrained("org/tiny-swag")
    ids = torch.ones(1, 4, 6, dtype=torch.long)
    out["swag_logits_shape"] = list(mc(input_ids=ids, attention_mask=torch.ones_like(ids)).logits.shape)

    # 5b. a feature-based model (frozen encoder + head, registered Auto classes) and a pretraining checkpoint
    import hf_bert_tasks.modes.feature_based.mode  # noqa: F401  (registers bert_feature_based with the Auto classes)
    cli.main(["push", dirs["fb"], "--repo_id", "org/tiny-fb", "--task", "rte"])
    fb_remote = AutoModelForSequenceClassification.from_pretrained("org/tiny-fb").eval()
    fb_local = AutoModelForSequenceClassification.from_pretrained(dirs["fb"]).eval()
    enc = AutoTokenizer.from_pretrained("org/tiny-fb")("anna fixed a clock .", "a clock .", return_tensors="pt")
    out["fb_class"] = type(fb_remote).__name__
    fb_r, fb_l = fb_remote.state_dict(), fb_local.state_dict()
    out["fb_same_weights"] = sorted(fb_r) == sorted(fb_l) and all(torch.equal(fb_r[k], fb_l[k]) for k in fb_l)
    out["fb_logits_remote"] = fb_remote(**enc).logits.tolist()
    out["fb_logits_local"] = fb_local(**enc).logits.tolist()
    out["fb_card_data"] = ModelCard.load("org/tiny-fb").data.to_dict()
    out["fb_card_text"] = ModelCard.load("org/tiny-fb").text
    cli.main(["push", dirs["pretrained"], "--repo_id", "org/tiny-pretrained"])
    fill = pipeline_for("org/tiny-pretrained")
    out["pretrained_task"], out["pretrained_top"] = fill.task, len(fill("anna fixed a [MASK] ."))
    out["pretrained_card"], _ = card_results("org/tiny-pretrained")

    # 6. private repo: created private, unreadable without the token
    cli.main(["push", dirs["stsb"], "--repo_id", "org/private-stsb", "--private", "--task", "stsb"])
    out["private_flag"] = HfApi().model_info("org/private-stsb").private
    try:  # --private onto an existing public repo is refused before any upload
        push_output_dir(dirs["stsb"], "org/tiny-stsb", private=True, card_kwargs={"task": "stsb"})
        out["private_onto_public"] = "pushed"
    except HubPushError as err:
        out["private_onto_public"] = str(err)
    try:
        AutoModelForSequenceClassification.from_pretrained("org/private-stsb", token=False)
        out["private_anonymous"] = "loaded"
    except (OSError, RepositoryNotFoundError) as err:
        out["private_anonymous"] = type(err).__name__

    # 7. a revision (branch): weights on the branch, main untouched
    cli.main(["push", dirs["mrpc"], "--repo_id", "org/rev", "--revision", "seed-1"])
    out["rev_branch_files"] = sorted(HfApi().list_repo_files("org/rev", revision="seed-1"))
    out["rev_main_files"] = sorted(HfApi().list_repo_files("org/rev"))
    m = AutoModelForSequenceClassification.from_pretrained("org/rev", revision="seed-1")
    out["rev_loaded"] = type(m).__name__
    # the card the fine-tune run wrote, rendered for the repo id (no card on the new branch; no card flag given)
    pushed = HfApi().hf_hub_download("org/rev", "README.md", revision="seed-1")
    out["rev_readme"] = open(pushed, encoding="utf-8").read()
    out["rev_local_readme"] = open(os.path.join(dirs["mrpc"], "README.md"), encoding="utf-8").read()

    # 8. the fine-tune recipe from a pushed repo id, pushing its result with an explicit --hub_token
    token = os.environ.pop("HF_TOKEN")
    buf_out, buf_err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf_out), contextlib.redirect_stderr(buf_err):
        cli.main(["finetune", "--task", "mrpc", "--data_dir", dirs["mrpc_data"], "--model_name_or_path", "org/tiny-mrpc",
                  "--output_dir", dirs["from_hub"], *dirs["fast"], "--push_to_hub", "--hub_model_id", "org/from-hub",
                  "--hub_token", token])
    out["recipe_logs"] = buf_out.getvalue() + buf_err.getvalue()
    out["from_hub_files"] = sorted(HfApi(token=token).list_repo_files("org/from-hub"))
    out["from_hub_card"], out["from_hub_card_data"] = card_results("org/from-hub")
    json.dump(out, open(sys.argv[2], "w"), indent=1)
""")


def _finetune(task, folder, model_dir, out):
    from hf_bert_tasks.finetune import recipe as finetune

    finetune.main(
        [
            "--task",
            task,
            "--data_dir",
            os.path.join(SAMPLES, folder),
            "--model_name_or_path",
            model_dir,
            "--output_dir",
            str(out),
            *FAST,
        ]
    )
    return str(out)


def _record(out, task: str, **fields):
    """A minimal run record (an older folder: no README.md; push renders its card from this)."""
    with open(os.path.join(out, "run_info.json"), "w") as f:
        json.dump({"task": task, **fields}, f)


def _random_head(head_class, tiny_bert_dir, out, task, results: dict, **config_kwargs):
    """A randomly initialised head on the tiny encoder, saved with a literal ``all_results.json`` and a minimal run
    record (card input)."""
    import transformers
    from transformers import AutoConfig, AutoTokenizer

    config = AutoConfig.from_pretrained(tiny_bert_dir, **config_kwargs)
    getattr(transformers, head_class).from_pretrained(tiny_bert_dir, config=config).save_pretrained(out)
    AutoTokenizer.from_pretrained(tiny_bert_dir).save_pretrained(out)
    with open(os.path.join(out, "all_results.json"), "w") as f:
        json.dump(results, f)
    _record(out, task)
    return str(out)


def _feature_based(tiny_bert_dir, out):
    """A frozen-encoder model with a linear head on concat_last_four features (issue 6's model class)."""
    from transformers import AutoTokenizer

    from hf_bert_tasks.modes.feature_based.mode import BertFeatureBasedModel

    model = BertFeatureBasedModel.from_encoder(
        tiny_bert_dir,
        "single_label_classification",
        "concat_last_four",
        num_labels=2,
        id2label={0: "entailment", 1: "not_entailment"},
        label2id={"entailment": 0, "not_entailment": 1},
        head_hidden_size=16,
    )
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(tiny_bert_dir).save_pretrained(out)
    with open(os.path.join(out, "all_results.json"), "w") as f:
        json.dump({"eval_accuracy": 0.55}, f)
    _record(out, "rte", training_mode={"mode": "feature_based", "strategy": "concat_last_four"})
    return str(out)


def _pretrained(tiny_bert_dir, out):
    """A BertForPreTraining checkpoint with the summary the pretraining recipe writes."""
    from transformers import AutoTokenizer, BertForPreTraining

    BertForPreTraining.from_pretrained(tiny_bert_dir).save_pretrained(out)
    AutoTokenizer.from_pretrained(tiny_bert_dir).save_pretrained(out)
    with open(os.path.join(out, "pretraining_summary.json"), "w") as f:
        json.dump(
            {
                "corpus": {"files": ["/data/corpus.txt"], "documents": 4},
                "model": {"preset": "tiny", "init": "random"},
                "steps": 10,
                "phases": [],
                "masking_recipe": {"mlm_probability": 0.15},
                "final_mlm_accuracy": 0.125,
                "final_nsp_accuracy": 0.5,
            },
            f,
        )
    return str(out)


@pytest.fixture(scope="module")
def session(tiny_bert_dir, tmp_path_factory):
    """Run :data:`CLIENT` once against a fresh local Hub; returns ``(record, hub, dirs)``."""
    from hf_bert_tasks.tasks.conll2003 import NER_LABELS

    tmp = tmp_path_factory.mktemp("hub")
    dirs = {
        "mrpc": _finetune("mrpc", "MRPC", tiny_bert_dir, tmp / "mrpc"),
        "stsb": _random_head(
            "AutoModelForSequenceClassification",
            tiny_bert_dir,
            tmp / "stsb",
            "stsb",
            {"eval_pearson": 0.25, "eval_spearmanr": 0.3, "eval_loss": 2.0},
            num_labels=1,
            problem_type="regression",
        ),
        "ner": _random_head(
            "AutoModelForTokenClassification",
            tiny_bert_dir,
            tmp / "ner",
            "conll2003",
            {
                "eval_f1": 0.5,
                "eval_precision": 0.4,
                "eval_recall": 0.6,
                "eval_accuracy": 0.9,
                "eval_f1_test": 0.45,
                "eval_precision_test": 0.35,
                "eval_recall_test": 0.55,
                "eval_accuracy_test": 0.88,
            },
            num_labels=len(NER_LABELS),
            id2label=dict(enumerate(NER_LABELS)),
            label2id={n: i for i, n in enumerate(NER_LABELS)},
        ),
        "qa": _random_head(
            "AutoModelForQuestionAnswering",
            tiny_bert_dir,
            tmp / "qa",
            "squad_v1",
            {"eval_exact_match": 12.5, "eval_f1": 20.25},
        ),
        "swag": _random_head(
            "AutoModelForMultipleChoice", tiny_bert_dir, tmp / "swag", "swag", {"eval_accuracy": 0.3}
        ),
        "fb": _feature_based(tiny_bert_dir, tmp / "fb"),
        "pretrained": _pretrained(tiny_bert_dir, tmp / "pretrained"),
        "mrpc2": str(tmp / "mrpc2"),
        "from_hub": str(tmp / "from_hub"),
        "mrpc_data": os.path.join(SAMPLES, "MRPC"),
        "fast": FAST,
    }
    (tmp / "dirs.json").write_text(json.dumps(dirs))
    (tmp / "client.py").write_text(CLIENT)
    with LocalHub(token=TOKEN) as hub:
        hub.fail_next["commit"] = (500, "local Hub: disk full")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
        env.update(hub.client_env(home=str(tmp / "hf_home")), PYTHONPATH=REPO)
        proc = subprocess.run(
            [sys.executable, str(tmp / "client.py"), str(tmp / "dirs.json"), str(tmp / "out.json")],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            cwd=REPO,
            check=False,
        )
        if proc.returncode != 0:
            pytest.fail(f"hub client failed (unhandled requests {hub.unhandled}):\n{proc.stderr[-6000:]}")
        record = json.loads((tmp / "out.json").read_text())
        record["_stdout"], record["_stderr"] = proc.stdout, proc.stderr
        yield record, hub, dirs


def test_failed_upload_reports_the_error_and_leaves_the_output_dir_intact(session):
    record, _, _ = session
    assert "failed at step 'upload'" in record["failed_push"] and "disk full" in record["failed_push"]
    assert record["failed_push_dir_unchanged"] is True


def test_wrong_token_is_refused_without_echoing_it(session):
    record, _, _ = session
    assert "401" in record["wrong_token"] and "hf_WRONG_secret_token" not in record["wrong_token"]


def test_pushed_weights_load_identical(session):
    record, _, _ = session
    # exact: both state dicts are read from the same safetensors bytes (no arithmetic on them)
    assert record["mrpc_same_keys"] is True and record["mrpc_max_abs_diff"] == 0.0


def test_pipeline_by_repo_id_infers_the_task_and_predicts_like_the_local_model(session):
    record, _, _ = session
    assert record["mrpc_pipeline_task"] == "text-classification"
    remote, local = record["mrpc_pred_remote"], record["mrpc_pred_local"]
    assert remote["label"] == local["label"]
    # two model instances (same weights, other memory addresses): equal to float32 rounding, not bit for bit
    assert remote["score"] == pytest.approx(local["score"], rel=1e-5, abs=1e-6)


def test_card_holds_every_metric_with_dataset_config_and_split(session):
    record, _, dirs = session
    with open(os.path.join(dirs["mrpc"], "all_results.json")) as f:
        results = json.load(f)
    # --max_eval_samples 8 of 400 dev pairs: the split scored is the slice validation[:8] (issue 44 item 3)
    expected = sorted(
        [
            ["validation[:8]", m, round(results[f"eval_{m}"], 6), "nyu-mll/glue", "mrpc", "text-classification"]
            for m in ("f1", "accuracy")
        ]
    )
    assert sorted(record["mrpc_card"]) == expected
    assert record["mrpc_card_data"]["base_model"] == "google-bert/bert-base-uncased"


def test_pushed_files_are_weights_tokenizer_config_card_and_results_only(session):
    record, _, _ = session
    files = set(record["mrpc_files"])
    assert {
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "README.md",
        "all_results.json",
        "MRPC.tsv",
        "run_info.json",
    } <= files
    assert "training_args.bin" not in files and not any(f.startswith("checkpoint-") for f in files)


def test_repush_updates_eval_results_in_place(session):
    record, hub, _ = session
    keys = [tuple(r[:2]) for r in record["repush_card"]]
    assert sorted(keys) == [("validation[:8]", "accuracy"), ("validation[:8]", "f1")]
    assert [r[2] for r in record["repush_card"] if r[1] == "f1"] == [0.123456]
    assert hub.commit_count("org/tiny-mrpc") == 3  # .gitattributes + 2 pushes


def test_stsb_pipeline_returns_the_raw_regression_score_and_both_correlations(session):
    record, _, _ = session
    assert record["stsb_score"] == pytest.approx(record["stsb_logit"], abs=1e-5)
    assert sorted(r[1] for r in record["stsb_card"]) == ["pearsonr", "spearmanr"]


def test_token_classification_repo_loads_into_an_aggregating_pipeline(session):
    from hf_bert_tasks.tasks.conll2003 import NER_LABELS

    record, _, _ = session
    assert record["ner_task"] == "token-classification" and record["ner_output_type"] == "list"
    assert record["ner_labels"] == sorted(NER_LABELS)
    assert sorted((r[0], r[1]) for r in record["ner_card"]) == sorted(
        (s, m) for s in ("validation", "test") for m in ("f1", "precision", "recall", "accuracy")
    )


def test_question_answering_repo_loads_with_auto_class_and_card_has_exact_match_and_f1(session):
    record, _, _ = session
    assert record["qa_start_logits_shape"] == [1, record["qa_seq_len"]]
    assert record["qa_pipeline"] == "built"  # the package's extractive-question-answering pipeline
    assert sorted((r[1], r[2]) for r in record["qa_card"]) == [("exact_match", 12.5), ("f1", 20.25)]


def test_multiple_choice_repo_loads_with_auto_class(session):
    record, _, _ = session
    assert record["swag_logits_shape"] == [1, 4]


def test_feature_based_model_loads_back_by_repo_id_with_identical_outputs(session):
    record, _, _ = session
    assert record["fb_class"] == "BertFeatureBasedModel" and record["fb_same_weights"] is True
    # same weights, two model instances: BLAS kernels may differ with memory alignment -> float32 tolerance
    np.testing.assert_allclose(record["fb_logits_remote"], record["fb_logits_local"], rtol=1.3e-6, atol=1e-5)
    assert "Feature strategy: `concat_last_four`." in record["fb_card_text"]


def test_pretraining_checkpoint_gets_its_own_card_and_a_fill_mask_pipeline(session):
    record, _, _ = session
    assert record["pretrained_task"] == "fill-mask" and record["pretrained_top"] == 5
    assert sorted((r[1], r[2]) for r in record["pretrained_card"]) == [("accuracy", 0.125), ("accuracy", 0.5)]


def test_private_repo_is_private_and_hidden_without_token(session):
    record, _, _ = session
    assert record["private_flag"] is True and record["private_anonymous"] in ("OSError", "RepositoryNotFoundError")


def test_private_push_onto_an_existing_public_repo_is_refused(session):
    record, hub, _ = session
    assert "already exists and is public" in record["private_onto_public"]
    assert hub.commit_count("org/tiny-stsb") == 2  # .gitattributes + the one public push


def test_push_to_a_revision_leaves_main_without_weights(session):
    record, _, _ = session
    assert "model.safetensors" in record["rev_branch_files"] and record["rev_main_files"] == [".gitattributes"]
    assert record["rev_loaded"] == "BertForSequenceClassification"


def test_a_push_uploads_the_card_the_run_wrote_loading_the_repo_id(session):
    record, _, dirs = session
    local, pushed = record["rev_local_readme"], record["rev_readme"]
    assert f'model="{dirs["mrpc"]}"' in local  # written by the fine-tune run, for its folder
    assert 'model="org/rev"' in pushed and dirs["mrpc"] not in pushed


def test_finetune_recipe_starts_from_a_pushed_repo_id_and_pushes_its_result(session):
    record, _, _ = session
    assert {"model.safetensors", "README.md", "run_info.json"} <= set(record["from_hub_files"])
    assert record["from_hub_card_data"]["base_model"] == "org/tiny-mrpc"
    assert {r[1] for r in record["from_hub_card"]} == {"f1", "accuracy"}


def test_token_is_never_logged_saved_or_written_into_the_card(session):
    record, hub, dirs = session
    assert f"Bearer {TOKEN}" in hub.auth_headers_seen  # the recipe did authenticate with it
    for name in os.listdir(dirs["from_hub"]):
        path = os.path.join(dirs["from_hub"], name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                assert TOKEN.encode() not in f.read(), name
    for path, data in hub.files_at("org/from-hub").items():
        assert TOKEN.encode() not in data, path
    assert TOKEN not in record["recipe_logs"] and TOKEN not in record["_stdout"] + record["_stderr"]


def test_no_request_fell_through_the_local_hub(session):
    _, hub, _ = session
    assert hub.unhandled == []


# ------------------------------------------------------------------------------- an edited README on the Hub
def _card(eval_results=None):
    from huggingface_hub import ModelCard, ModelCardData

    return ModelCard.from_template(
        ModelCardData(eval_results=eval_results, model_name="m"),
        template_str="---\n{{ card_data }}\n---\n# m\n\nbody\n",
    )


def _result(value):
    from huggingface_hub import EvalResult

    return EvalResult(
        task_type="text-classification",
        dataset_type="nyu-mll/glue",
        dataset_name="GLUE MRPC",
        dataset_split="validation",
        metric_type="f1",
        metric_value=value,
    )


def test_a_card_we_wrote_is_replaced_with_results_merged():
    from hf_bert_tasks.hub.cards import card_text, readme_edited
    from hf_bert_tasks.hub.push import card_to_upload

    ours = card_text(_card([_result(0.5)]))
    assert not readme_edited(ours)
    text = card_to_upload(ours, _card([_result(0.75)]))
    assert "0.75" in text and "0.5\n" not in text and not readme_edited(text)


def test_an_edited_readme_stops_the_push_unless_kept_or_overwritten():
    from huggingface_hub import ModelCard

    from hf_bert_tasks.hub.cards import card_text, readme_edited
    from hf_bert_tasks.hub.push import card_to_upload

    edited = card_text(_card([_result(0.5)])).replace("body", "my own notes on this model")
    assert readme_edited(edited) and readme_edited("# a card written by hand\n")
    with pytest.raises(ValueError, match="--keep_readme .* --overwrite_readme"):
        card_to_upload(edited, _card([_result(0.75)]))
    kept = card_to_upload(edited, _card([_result(0.75)]), keep_readme=True)
    assert "my own notes on this model" in kept
    assert [r.metric_value for r in ModelCard(kept).data.eval_results] == [0.75]
    replaced = card_to_upload(edited, _card([_result(0.75)]), keep_readme=False)
    assert "my own notes" not in replaced and not readme_edited(replaced)
