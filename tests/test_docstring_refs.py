"""Every ``:func:`` / ``:mod:`` / ``:class:`` / ``:data:`` / ``:meth:`` / ``:attr:`` / ``:exc:`` reference to a full
``hf_bert_tasks.`` name in the package's source resolves to a module, an attribute or a dataclass field today (issue 55,
docs for today's reader: a moved or deleted name must not stay cited in a docstring). One case per package file."""

import dataclasses
import importlib
import pathlib
import re

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "hf_bert_tasks"
REFERENCE = re.compile(r":(?:func|mod|class|data|meth|attr|exc):`~?(hf_bert_tasks(?:\.\w+)+)`")


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` names an importable module, or an attribute (or dataclass field) reached from the longest
    importable module prefix."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for name in parts[k:]:
            fields = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
            if not hasattr(obj, name):
                return name in fields and name == parts[-1]
            obj = getattr(obj, name)
        return True
    return False


def test_resolves_reads_modules_attributes_and_fields():
    assert resolves("hf_bert_tasks.finetune.args")
    assert resolves("hf_bert_tasks.finetune.args.parse_finetune_argv")
    assert resolves("hf_bert_tasks.tasks.base.Task.paper_results")  # a dataclass field with a default_factory
    assert not resolves("hf_bert_tasks.run.args_parser")
    assert not resolves("hf_bert_tasks.finetune.args.no_such_name")


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_cited_names_exist(path):
    stale = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {name}"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for name in REFERENCE.findall(line)
        if not resolves(name)
    ]
    assert not stale, "cited names that do not exist:\n" + "\n".join(stale)
