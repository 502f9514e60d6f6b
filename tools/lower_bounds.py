"""Print the lowest versions pyproject.toml allows, as pip pins (issue 42: every supported version tested).

    python tools/lower_bounds.py transformers datasets      # -> transformers==5.0 datasets==4.0
    python tools/lower_bounds.py --check transformers ...   # exit 1 unless the installed versions are those pins

Each named package must have a ``>=X`` bound in ``[project].dependencies``; its pin is ``name==X``. ``--check`` reads
the installed versions with importlib.metadata (the versions the lowest-versions suite really ran on) and prints one
line per package. Errors: a name without a ``>=`` bound -> exit 2 with the name. Used by ``make test-lowest``.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lower_bounds(pyproject: Path = PYPROJECT) -> dict[str, str]:
    """Map each dependency's normalised name to the version of its ``>=`` bound (those without one are left out)."""
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    out = {}
    for dep in deps:
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?\s*([^;]*)", dep)
        low = re.search(r">=\s*([0-9][^,\s]*)", m.group(2))
        if low:
            out[_norm(m.group(1))] = low.group(1)
    return out


def main(argv: list[str]) -> int:
    check = "--check" in argv
    names = [a for a in argv if a != "--check"]
    bounds = lower_bounds()
    missing = [n for n in names if _norm(n) not in bounds]
    if missing:
        print(f"{PYPROJECT}: no '>=' lower bound for {', '.join(missing)} in [project].dependencies", file=sys.stderr)
        return 2
    if not check:
        print(" ".join(f"{n}=={bounds[_norm(n)]}" for n in names))
        return 0
    bad = 0
    for n in names:
        have = metadata.version(n)
        ok = [int(x) for x in re.findall(r"\d+", have)[:3]] == _pad([int(x) for x in bounds[_norm(n)].split(".")])
        print(f"{n}: installed {have}, lower bound {bounds[_norm(n)]}{'' if ok else '  <- NOT the lower bound'}")
        bad += not ok
    return 1 if bad else 0


def _pad(parts: list[int]) -> list[int]:
    return (parts + [0, 0, 0])[:3]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
