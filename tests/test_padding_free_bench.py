"""gpu.sh's ``padding_free`` group (benchmarks/padding_free.py) rehearsed on CPU: every workload (real pretraining
batches at both lengths, SST-2, CoNLL-2003) leaves its rows, both sides ran, the padding-free side's first-batch
loss equals the padded side's, and the report renders them."""

import json
import math
import sys

from tests.test_gpu_script import needs_shared, run_gpu_sh

WORKLOADS = ("pretrain@128", "pretrain@512", "sst2", "conll2003")


def test_padding_free_group_dry_run_measures_every_workload(tmp_path):
    needs_shared()
    proc = run_gpu_sh(tmp_path, sys.executable, "--dry-run", "--group", "padding_free")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads((tmp_path / "out" / "gpu_results.json").read_text())
    values = {r["metric"]: r["value"] for r in rows if r["step"] == "padding_free"}
    for w in WORKLOADS:
        assert values[f"{w}: real tokens/s, padded"] > 0 and values[f"{w}: real tokens/s, padding-free"] > 0
        assert math.isclose(
            values[f"{w}: padding-free vs padded"],
            values[f"{w}: real tokens/s, padding-free"] / values[f"{w}: real tokens/s, padded"],
            rel_tol=1e-6,
        )
        assert 0 < values[f"{w}: padding share"] < 100  # real batches hold padding
        # float32 on CPU: the fallback kernel, the same loss as the padded batch
        assert values[f"{w}: |loss padded - padding-free|, first batch (sdpa_repadded)"] < 1e-5
    assert {r["metric"] for r in rows if r["step"] == "wall_time"} == {"padding_free"}
    assert "padding_free" in (tmp_path / "out" / "gpu_report.md").read_text()
