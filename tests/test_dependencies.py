"""``pyproject.toml`` declares what the package imports and nothing it does not (one test each way).

Imports are read from the package's source with ``ast`` (module-level and inside functions); import names map to
distributions through ``importlib.metadata.packages_distributions()`` of the installed environment.
"""

import ast
import glob
import os
import re
import sys
from importlib.metadata import packages_distributions

import pytest

from tests.conftest import REPO

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

#: declared but never imported by the package, with the reason it is needed at run time
RUNTIME_ONLY = {"accelerate": "transformers' Trainer requires it (not imported by hf_bert_tasks itself)"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    return {_norm(re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0]) for d in deps}


def _imported_distributions() -> dict[str, str]:
    """distribution -> first file importing it, for every third-party import in hf_bert_tasks/."""
    mapping = packages_distributions()
    found = {}
    for path in sorted(glob.glob(os.path.join(REPO, "hf_bert_tasks", "**", "*.py"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "hf_bert_tasks":
                    continue
                for dist in mapping.get(top, [top]):
                    found.setdefault(_norm(dist), os.path.relpath(path, REPO))
    return found


def test_every_imported_distribution_is_declared():
    missing = {d: where for d, where in _imported_distributions().items() if d not in _declared()}
    assert not missing, f"imported but not in [project] dependencies: {missing}"


def test_every_declared_distribution_is_imported_or_needed_at_run_time():
    unused = _declared() - set(_imported_distributions()) - set(RUNTIME_ONLY)
    assert not unused, f"declared in [project] dependencies but never imported by hf_bert_tasks: {sorted(unused)}"
