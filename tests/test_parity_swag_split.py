"""benchmarks/parity/swag_arms.py's split of the SWAG rows into train.csv / val.csv (no run is started)."""

import csv
import importlib.util
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("swag_arms", os.path.join(REPO, "benchmarks", "parity", "swag_arms.py"))
swag_arms = importlib.util.module_from_spec(spec)
spec.loader.exec_module(swag_arms)

HEADER = ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label\n"
ROWS = [
    '0,v0,1,"A man sits, then",A man sits,then,gold,"stands up, slowly",runs,eats,sleeps,0\n',
    "1,v1,2,She walks,She walks,she,gen,away,home,in,out,3\n",
    "2,v2,3,He reads,He reads,he,gold,a book,a map,a sign,a note,1\n",
]


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def test_last_rows_are_dev_and_quoted_commas_survive(tmp_path):
    source = tmp_path / "head.csv"
    source.write_text("\ufeff" + HEADER + "".join(ROWS), encoding="utf-8")
    assert swag_arms.split(str(source), str(tmp_path / "data"), 1) == (2, 1)
    train, val = read(tmp_path / "data" / "train.csv"), read(tmp_path / "data" / "val.csv")
    assert train[0] == val[0] == HEADER.strip().split(",")
    assert [r[1] for r in train[1:]] == ["v0", "v1"] and [r[1] for r in val[1:]] == ["v2"]
    assert train[1][7] == "stands up, slowly"


def test_dev_rows_leaving_no_training_row_is_refused(tmp_path):
    source = tmp_path / "head.csv"
    source.write_text(HEADER + "".join(ROWS), encoding="utf-8")
    with pytest.raises(ValueError, match=r"--dev_rows 3: expected 1\.\.2"):
        swag_arms.split(str(source), str(tmp_path / "data"), 3)
