"""Every ``:func:`` / ``:mod:`` / ``:class:`` / ``:data:`` / ``:meth:`` / ``:attr:`` / ``:exc:`` reference to a full
``hf_bert_tasks.`` name in the package's source resolves to a module, an attribute or a dataclass field today (issue 55,
docs for today's reader: a moved or deleted name must not stay cited in a docstring). One case per package file."""

import dataclasses
import pathlib
import pydoc
import re

import pytest

from tests.test_design_doc import resolves as resolves_attribute

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "hf_bert_tasks"
REFERENCE = re.compile(r":(?:func|mod|class|data|meth|attr|exc):`~?(hf_bert_tasks(?:\.\w+)+)`")


def resolves(dotted: str) -> bool:
    """:func:`tests.test_design_doc.resolves` (a module, or attributes from the longest importable prefix), or a
    dataclass field without a class attribute (``Task.paper_results``, a ``default_factory`` field)."""
    if resolves_attribute(dotted):
        return True
    owner, _, name = dotted.rpartition(".")
    cls = pydoc.locate(owner) if resolves_attribute(owner) else None
    return dataclasses.is_dataclass(cls) and name in {f.name for f in dataclasses.fields(cls)}


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
