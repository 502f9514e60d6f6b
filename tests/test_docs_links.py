"""Issue 55 item 5: every link into ``docs/results.md#<anchor>`` (from the repository's Markdown and Python files) and
every in-page ``(#<anchor>)`` link of ``docs/results.md`` names a heading that exists. Anchors follow GitHub's rule:
the heading's text (code spans unwrapped) lowercased, punctuation dropped (letters, digits, ``_``, ``-`` and spaces
kept), each space turned into ``-``; a repeated heading gets ``-1``, ``-2``, ... Headings inside fenced code blocks
(comments of shell examples) are not headings."""

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "docs", "results.md")
_SKIP_DIRS = {".git", ".venv", "runs", "node_modules", "__pycache__", ".ruff_cache", ".pytest_cache"}
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK_INTO_RESULTS = re.compile(r"results\.md#([\w-]+)")
_IN_PAGE_LINK = re.compile(r"\]\(#([\w-]+)\)")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading's text (without the leading ``#``s): code-span backticks dropped,
    lowercase, every character other than a letter, digit, ``_``, ``-`` or space dropped, spaces to ``-``.
    Source: github/cmark-gfm's ``html`` anchor generation as described in GitHub's docs ("Section links")."""
    text = heading.replace("`", "").strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "_- ")
    return text.replace(" ", "-")


def anchors_of(markdown: str) -> set[str]:
    """Every anchor of a Markdown text's headings (outside fenced code), with GitHub's ``-N`` suffix for repeats."""
    seen: dict[str, int] = {}
    anchors: set[str] = set()
    in_fence = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        heading = None if in_fence else _HEADING.match(line)
        if heading is None:
            continue
        anchor = github_anchor(heading.group(2))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def links_into_results() -> list[tuple[str, int, str]]:
    """``(file relative to the repository, line, anchor)`` of each ``results.md#anchor`` in a ``.md`` or ``.py`` file."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]  # .venv*, .git, caches
        for name in files:
            if not name.endswith((".md", ".py")) or name == "test_docs_links.py":
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, start=1):
                    for match in _LINK_INTO_RESULTS.finditer(line):
                        found.append((os.path.relpath(path, ROOT), number, match.group(1)))
    return found


def test_github_anchor_drops_punctuation_and_joins_words_with_hyphens():
    assert github_anchor("SST-2 at <= 5 %: what the encoder holds") == "sst-2-at--5--what-the-encoder-holds"


def test_github_anchor_unwraps_code_spans_and_keeps_underscores():
    assert github_anchor("Speed against `run_glue`, at full size") == "speed-against-run_glue-at-full-size"


def test_repeated_heading_gets_a_numbered_anchor():
    assert anchors_of("## Commands\n\ntext\n\n## Commands\n") == {"commands", "commands-1"}


def test_comment_in_a_fenced_code_block_is_not_a_heading():
    assert anchors_of("## Run\n\n```bash\n# rte: --task rte\n```\n") == {"run"}


@pytest.mark.parametrize("where,line,anchor", links_into_results(), ids=lambda v: str(v))
def test_link_into_results_names_an_existing_heading(where, line, anchor):
    with open(RESULTS, encoding="utf-8") as f:
        anchors = anchors_of(f.read())
    assert anchor in anchors, f"{where}:{line}: docs/results.md has no heading with anchor #{anchor}"


def test_every_in_page_link_of_results_names_an_existing_heading():
    with open(RESULTS, encoding="utf-8") as f:
        text = f.read()
    anchors = anchors_of(text)
    missing = sorted({m.group(1) for m in _IN_PAGE_LINK.finditer(text)} - anchors)
    assert missing == [], f"docs/results.md: in-page links to missing headings: {missing}"


PARITY_DOCS = ("parity.md", "parity-squad.md")
_RELATIVE_LINK = re.compile(r"\]\((?!https?:|#)([^)#\s]+)(?:#[\w-]*)?\)")


@pytest.mark.parametrize("name", PARITY_DOCS)
def test_parity_doc_is_linked_from_results(name):
    with open(RESULTS, encoding="utf-8") as f:
        assert f"]({name}" in f.read(), f"docs/results.md has no link to docs/{name}"


@pytest.mark.parametrize("name", PARITY_DOCS)
def test_relative_links_of_parity_doc_name_existing_files(name):
    with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as f:
        targets = _RELATIVE_LINK.findall(f.read())
    missing = [t for t in targets if not os.path.exists(os.path.join(ROOT, "docs", t))]
    assert missing == [], f"docs/{name}: relative links to missing files: {missing}"
