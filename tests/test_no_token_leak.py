"""No recipe writes a Hub token anywhere: every byte written by every recipe is searched for a sentinel token.

The reported fault: ``hf-bert-tasks pretrain ... --hub_token X`` pickled ``X`` into ``training_args.bin`` (in the run
and in every checkpoint). The fix is one function, :func:`hf_bert_tasks.flags.training.scrub_secrets`, called by every
recipe (or through :func:`hf_bert_tasks.hub.push.pop_push_settings`) before a ``Trainer`` exists.

One client subprocess (:data:`DRIVER`) runs, with ``HF_TOKEN`` and ``--hub_token`` set to :data:`SENTINEL`:
``compare`` (the fine-tune recipe in its three modes: fine-tuning, LoRA, feature-based; checkpoints on), the pretrain
recipe (checkpoints on) — all without ``--push_to_hub``, under a socket guard that records any network
connection — then ``push`` (``--dry-run``, a failing one whose server error echoes the token, a real one) and
``pretrain --push_to_hub`` against the local Hub of ``tests/hub_server.py``, whose only valid token is the sentinel.
The tests then grep every file under the session folder (outputs, caches, ``HF_HOME``, the client's captured stdout
and stderr with transformers' logs at INFO) and every file stored on the Hub. A control file written by a plain
``Trainer`` with the token left in its arguments shows the grep finds a pickled token.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO, SAMPLES
from tests.hub_server import LocalHub

SENTINEL = "hf_SENTINELxyz123"

DRIVER = textwrap.dedent(r"""
    import json, os, socket, sys
    root, token = sys.argv[1], sys.argv[2]
    dirs = json.load(open(os.path.join(root, "dirs.json")))
    record = {"connections": []}
    _connect = socket.socket.connect

    def guarded(self, address):  # records every connection attempt of the no-push phase, then refuses it
        if self.family in (socket.AF_INET, socket.AF_INET6):
            record["connections"].append(repr(address))
            raise ConnectionRefusedError(f"test guard: no network expected, tried {address!r}")
        return _connect(self, address)

    from hf_bert_tasks.pretraining import recipe as pretrain
    from hf_bert_tasks.scripts import compare
    from hf_bert_tasks import cli

    tiny = ["--max_train_samples", "16", "--max_eval_samples", "8", "--per_device_train_batch_size", "8",
            "--learning_rate", "1e-3", "--save_strategy", "steps", "--save_steps", "1", "--logging_steps", "1",
            "--report_to", "none", "--hub_token", token]
    socket.socket.connect = guarded
    compare.main(["--task", "mrpc", "--data_dir", dirs["mrpc_data"], "--model_name_or_path", dirs["model"],
                  "--output_dir", dirs["compare"], "--modes", "finetune,lora,feature_based", "--strategies", "last",
                  "--seeds", "1", "--num_train_epochs", "1", *tiny])
    pretrain.main(["--train_files", dirs["corpus"], "--model_name_or_path", dirs["model"], "--output_dir",
                   dirs["pretrain"], "--max_seq_length", "32", "--max_steps", "2", "--save_steps", "1",
                   "--eval_steps", "2", "--logging_steps", "1", "--per_device_train_batch_size", "4",
                   "--validation_split_percentage", "25", "--report_to", "none", "--hub_token", token])
    socket.socket.connect = _connect

    finetuned = os.path.join(dirs["compare"], "finetune", "seed1")
    cli.main(["push", finetuned, "--repo-id", "org/leak", "--dry-run"])
    try:
        cli.main(["push", finetuned, "--repo-id", "org/leak"])  # the server echoes the token in its error
        record["failed_push"] = "no error"
    except SystemExit as err:
        record["failed_push"] = err.code
    cli.main(["push", finetuned, "--repo-id", "org/leak"])
    pretrain.main(["--train_files", dirs["corpus"], "--model_name_or_path", dirs["model"], "--output_dir",
                   dirs["pretrain_push"], "--max_seq_length", "32", "--max_steps", "1", "--eval_strategy", "no",
                   "--per_device_train_batch_size", "4", "--report_to", "none", "--push_to_hub", "True",
                   "--hub_model_id", "org/leak-pretrained", "--hub_token", token])

    # control: a plain Trainer with the token left in its arguments pickles it into training_args.bin
    import torch
    from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments
    args = TrainingArguments(output_dir=dirs["control"], hub_token=token, report_to="none")
    Trainer(model=AutoModelForSequenceClassification.from_pretrained(dirs["model"]), args=args).save_model()
    json.dump(record, open(os.path.join(root, "record.json"), "w"))
""")

CORPUS = (
    "\n\n".join(
        "\n".join(f"{n} took the {w} to the {p} ." for w in ("cat", "dog", "mat", "rug"))
        for n in ("anna", "oskar", "rosa")
        for p in ("mill", "barn")
    )
    + "\n"
)


def files_containing(root: str, needle: bytes) -> list[str]:
    """Paths of the files under ``root`` (recursively, any content, binary included) whose bytes contain ``needle``."""
    hits = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    if needle in f.read():
                        hits.append(os.path.relpath(path, root))
    return sorted(hits)


def _read(root: str, name: str) -> str:
    with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
        return f.read()


@pytest.fixture(scope="module")
def session(tiny_bert_dir, tmp_path_factory):
    """Run :data:`DRIVER` once against a local Hub that accepts only the sentinel; returns ``(root, record, hub)``."""
    root = tmp_path_factory.mktemp("leak")
    (root / "corpus.txt").write_text(CORPUS, encoding="utf-8")
    dirs = {name: str(root / name) for name in ("compare", "pretrain", "pretrain_push", "control")}
    dirs.update(model=tiny_bert_dir, mrpc_data=os.path.join(SAMPLES, "MRPC"), corpus=str(root / "corpus.txt"))
    (root / "dirs.json").write_text(json.dumps(dirs))
    (root / "driver.py").write_text(DRIVER)
    with LocalHub(token=SENTINEL) as hub:
        hub.fail_next["commit"] = (500, f"internal error while checking 'Bearer {SENTINEL}'")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
        env.update(
            hub.client_env(home=str(root / "hf_home"), with_token=False),
            HF_TOKEN=SENTINEL,
            PYTHONPATH=REPO,
            TRANSFORMERS_VERBOSITY="info",
            HF_DATASETS_CACHE=str(root / "datasets_cache"),
        )
        with open(root / "stdout.txt", "wb") as out, open(root / "stderr.txt", "wb") as err:
            proc = subprocess.run(
                [sys.executable, str(root / "driver.py"), str(root), SENTINEL],
                env=env,
                stdout=out,
                stderr=err,
                timeout=900,
                cwd=REPO,
                check=False,
            )
        if proc.returncode != 0:
            pytest.fail(f"driver failed (rc {proc.returncode}):\n{(root / 'stderr.txt').read_text()[-6000:]}")
        record = json.loads((root / "record.json").read_text())
        yield str(root), record, hub


def test_the_grep_finds_a_token_pickled_by_a_plain_trainer(session):
    root, _, _ = session
    assert files_containing(os.path.join(root, "control"), SENTINEL.encode()) == ["training_args.bin"]


def test_every_recipe_wrote_its_checkpoints(session):
    """The grep below searched real checkpoints: each recipe saved at least one ``training_args.bin`` in one."""
    root, _, _ = session
    for run in ("compare/finetune/seed1", "compare/lora/seed1", "compare/feature_based-last/seed1", "pretrain"):
        folder = os.path.join(root, run)
        checkpoints = [n for n in os.listdir(folder) if n.startswith("checkpoint-")] if os.path.isdir(folder) else []
        if run == "compare/feature_based-last/seed1":  # the cached head trains outside Trainer: no checkpoints
            assert os.path.isfile(os.path.join(folder, "training_args.bin")), run
            continue
        assert checkpoints and os.path.isfile(os.path.join(folder, checkpoints[0], "training_args.bin")), run


def test_no_written_byte_holds_the_token(session):
    root, _, _ = session
    hits = [p for p in files_containing(root, SENTINEL.encode()) if not p.startswith("control" + os.sep)]
    assert hits == []


def test_logs_and_printed_output_do_not_hold_the_token(session):
    root, _, _ = session
    for name in ("stdout.txt", "stderr.txt"):
        assert SENTINEL not in _read(root, name), name
    assert "***** Running training *****" in _read(root, "stderr.txt")  # Trainer INFO logs were searched too
    assert "hf-bert-tasks push: push of" in _read(root, "stderr.txt")


def test_hub_token_without_push_to_hub_makes_no_network_call(session):
    _, record, _ = session
    assert record["connections"] == []


def test_a_failed_push_reports_the_server_error_without_the_token(session):
    _, record, _ = session
    assert record["failed_push"] == 1
    assert "internal error while checking 'Bearer ***'" in _read(session[0], "stderr.txt")


def test_nothing_pushed_holds_the_token(session):
    _, _, hub = session
    assert sorted(hub.repos) == ["org/leak", "org/leak-pretrained"]
    for repo_id in hub.repos:
        files = hub.files_at(repo_id)
        assert "README.md" in files and "model.safetensors" in files
        assert [p for p, data in files.items() if SENTINEL.encode() in data] == [], repo_id


def test_the_pretrain_recipe_pushes_with_the_given_token(session):
    """``pretrain --push_to_hub --hub_token``: the token reaches the Hub (accepted) but no file."""
    _, _, hub = session
    files = hub.files_at("org/leak-pretrained")
    assert {"pretraining_summary.json", "tokenizer.json", "config.json"} <= set(files)
    assert "training_args.bin" not in files


@pytest.mark.slow
def test_quickstart_writes_no_token(tmp_path):
    """The quickstart takes no token; with ``HF_TOKEN`` set nothing it writes or prints holds it (~5 min, 2 cores)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_TOKEN=SENTINEL,
        PYTHONPATH=REPO,
        TRANSFORMERS_VERBOSITY="info",
        HF_HOME=str(tmp_path / "hf_home"),
    )
    out = tmp_path / "quickstart"
    with open(tmp_path / "log.txt", "wb") as log:
        proc = subprocess.run(
            [sys.executable, "-m", "hf_bert_tasks.cli", "quickstart", "--output_dir", str(out)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=1800,
            cwd=REPO,
            check=False,
        )
    assert proc.returncode == 0, (tmp_path / "log.txt").read_text()[-4000:]
    assert files_containing(str(tmp_path), SENTINEL.encode()) == []
