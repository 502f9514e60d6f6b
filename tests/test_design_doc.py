"""docs/design.md cites only what exists, and every ``docs/design.md, "Heading"`` reference names one of its headings.

Checked in docs/design.md: every ``hf_bert_tasks/...py`` path is a file; every dotted ``hf_bert_tasks.x.y[.Name]``
imports (the longest importable prefix), each trailing part an attribute of what precedes it; every backticked
``folder/file.py`` is a file of the package or of the repository; every path in a heading (``finetune/trainer.py:``,
``tasks/squad/:``) exists in the package; every entry of the tree under "The tree" exists, and every module of the
package root and of its shared folders has a line there. Checked in the package's ``.py`` files, README.md, docs/*.md,
tests, tools and benchmarks: every quoted reference ``docs/design.md, "Heading"`` (or with single quotes, wrapped over
lines) is the start of a heading, its text after a ``topic: `` prefix, or a run of whole words inside it."""

import glob
import importlib
import os
import re

import pytest

import hf_bert_tasks

PACKAGE_DIR = os.path.dirname(os.path.abspath(hf_bert_tasks.__file__))
ROOT = os.path.dirname(PACKAGE_DIR)
DESIGN = os.path.join(ROOT, "docs", "design.md")

PATH = re.compile(r"hf_bert_tasks/[\w/]+\.py")
DOTTED = re.compile(r"\bhf_bert_tasks(?:\.[A-Za-z_]\w*)+")
BACKTICKED_MODULE = re.compile(r"`([\w.-]+(?:/[\w.-]+)+\.py)`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)
HEADING_PATH = re.compile(r"(?<![\w.])([a-z_][\w]*(?:/[\w.]+)*(?:\.py|/))(?=[\s:,]|$)")
#: ``docs/design.md, "X"`` or ``docs/design.md, 'X'``, X possibly wrapped over lines (a docstring's or comment's
#: continuation); the closing quote is the first one not followed by a letter (``'a feature's tokens'``).
REFERENCE = re.compile(r"docs/design\.md,\s+([\"'])((?:(?!\1[^A-Za-z]).){1,160}?)\1(?![A-Za-z])", re.DOTALL)
#: the shared folders whose every module must have a line in the tree (the recipe rooms and plug-ins have theirs too)
TREE_FOLDERS = ("", "finetune", "pretraining", "flags", "hub", "utils", "tasks", "modes")


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def headings(text: str) -> list[str]:
    """The text of every Markdown heading outside code blocks."""
    outside = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return [" ".join(h.split()) for h in HEADING.findall(outside)]


def references(text: str) -> list[tuple[int, str]]:
    """``(line, section name)`` of each quoted design.md reference in ``text``; a wrapped name is joined with one
    space (a continuation line's indentation and ``#`` comment marker dropped)."""
    found = []
    for match in REFERENCE.finditer(text):
        name = re.sub(r"\s*\n\s*(?:#\s*)?", " ", match.group(2))
        found.append((text.count("\n", 0, match.start()) + 1, " ".join(name.split())))
    return found


def names_heading(name: str, heading_texts: list[str]) -> bool:
    """``name`` occurs in a heading as a run of whole words (case-insensitive): "Fine-tuning defaults" names
    "finetune/config.py: Fine-tuning defaults"; "Fine-tuning def" does not."""
    pattern = re.compile(r"(?<!\w)" + re.escape(name.lower()) + r"(?!\w)")
    return any(pattern.search(h.lower()) for h in heading_texts)


def resolves(dotted: str) -> bool:
    """The longest importable prefix of ``dotted`` is a module, each further part an attribute of the one before."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def tree_entries(text: str) -> list[str]:
    """Paths (relative to the repository) of the first word of each line of the code block under "## The tree":
    a name ending in ``/`` opens a folder for the more indented lines below it."""
    block = text.split("## The tree", 1)[1].split("```", 2)[1]
    stack: list[tuple[int, str]] = []
    paths = []
    for line in block.splitlines():
        match = re.match(r"^(\s*)(\S+)", line)
        if not match or not re.fullmatch(r"[\w.-]+(/|\.py)", match.group(2)):
            continue
        indent, name = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "".join(n for _, n in stack) + name
        paths.append(path)
        if name.endswith("/"):
            stack.append((indent, name))
    return paths


DESIGN_TEXT = read(DESIGN)
HEADINGS = headings(DESIGN_TEXT)
SOURCES = sorted(
    {
        *glob.glob(os.path.join(PACKAGE_DIR, "**", "*.py"), recursive=True),
        *glob.glob(os.path.join(ROOT, "docs", "*.md")),
        os.path.join(ROOT, "README.md"),
        *glob.glob(os.path.join(ROOT, "tests", "*.py")),
        *glob.glob(os.path.join(ROOT, "tools", "*.py")),
        *glob.glob(os.path.join(ROOT, "benchmarks", "*.py")),
    }
)
REFERENCES = [
    (os.path.relpath(path, ROOT), line, name)
    for path in SOURCES
    if os.path.abspath(path) != os.path.abspath(__file__)
    for line, name in references(read(path))
]


def test_a_wrapped_reference_is_joined_and_an_apostrophe_does_not_end_it():
    text = "why: docs/design.md, 'logits past a feature's\n    # own tokens') and docs/design.md, \"Flags\"."
    assert references(text) == [(1, "logits past a feature's own tokens"), (2, "Flags")]


def test_a_reference_names_a_heading_by_whole_words_only():
    found = ["finetune/config.py: Fine-tuning defaults"]
    assert names_heading("Fine-tuning defaults", found)
    assert not names_heading("Fine-tuning def", found)


def test_a_dotted_name_with_a_missing_attribute_does_not_resolve():
    assert resolves("hf_bert_tasks.tasks.base.Task")
    assert not resolves("hf_bert_tasks.tasks.base.NoSuchName")


def test_the_tree_block_nests_entries_by_indentation():
    text = "## The tree\n```\npkg/\n  a.py    role\n  sub/    role\n    b.py  role\nother/  role\n```\n"
    assert tree_entries(text) == ["pkg/", "pkg/a.py", "pkg/sub/", "pkg/sub/b.py", "other/"]


def test_the_package_references_many_sections():
    assert len(REFERENCES) >= 50
    assert len(HEADINGS) >= 40


@pytest.mark.parametrize("source, line, name", REFERENCES, ids=[f"{p}:{n}" for p, n, _ in REFERENCES])
def test_a_design_reference_names_an_existing_heading(source, line, name):
    assert names_heading(name, HEADINGS), f"{source}:{line}: docs/design.md has no heading {name!r}"


def test_cited_package_file_paths_exist():
    missing = sorted({p for p in PATH.findall(DESIGN_TEXT) if not os.path.isfile(os.path.join(ROOT, p))})
    assert missing == []


def test_cited_dotted_names_resolve():
    names = sorted(set(DOTTED.findall(DESIGN_TEXT)))
    assert len(names) >= 10
    assert [n for n in names if not resolves(n)] == []


def test_backticked_module_paths_exist():
    paths = sorted(set(BACKTICKED_MODULE.findall(DESIGN_TEXT)))
    assert len(paths) >= 30
    missing = [p for p in paths if not any(os.path.isfile(os.path.join(base, p)) for base in (PACKAGE_DIR, ROOT))]
    assert missing == []


def test_paths_in_headings_exist_in_the_package():
    paths = sorted({p for h in HEADINGS for p in HEADING_PATH.findall(h) if "/" in p})
    assert len(paths) >= 10
    assert [p for p in paths if not os.path.exists(os.path.join(PACKAGE_DIR, p))] == []


def test_every_tree_entry_exists():
    entries = tree_entries(DESIGN_TEXT)
    assert "hf_bert_tasks/finetune/recipe.py" in entries
    assert [p for p in entries if not os.path.exists(os.path.join(ROOT, p))] == []


def test_every_module_of_the_shared_folders_has_a_tree_line():
    entries = set(tree_entries(DESIGN_TEXT))
    modules = [
        os.path.relpath(path, ROOT)
        for folder in TREE_FOLDERS
        for path in glob.glob(os.path.join(PACKAGE_DIR, folder, "*.py"))
        if folder in ("", "tasks", "modes") or os.path.basename(path) != "__init__.py"  # a room's __init__: no line
    ]
    assert [m for m in sorted(modules) if m.replace(os.sep, "/") not in entries] == []
