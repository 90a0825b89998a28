"""report_to: [trackio] on the MLX host: the run's records reach trackio's local database (slow: a real run)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import GRPO_HOST
from train_helpers import QUICK, ROOT

pytest.importorskip("mlx_lm_lora", reason="the mlx extra is not installed")
pytest.importorskip("trackio", reason="trackio is not installed (pip install -e '.[trackio]')")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_mlx_host_reports_to_trackio(env, tmp_path):
    out, db = tmp_path / "tracked", tmp_path / "trackio"
    proc = subprocess.run([GRPO_HOST, "train", str(ROOT / "examples" / "letters.yaml"), *QUICK, "--backend", "mlx",
                           "--set", "max_steps=2", "--set", "report_to=[trackio]", "--set", f"output_dir={out}"],
                          capture_output=True, text=True, env={**env, "TRACKIO_DIR": str(db)}, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code = ("import json, sys; from trackio import SQLiteStorage as S; "
            "print(json.dumps(S.get_logs('grpo-host', sys.argv[1]), default=str))")
    logs = subprocess.run([str(Path(GRPO_HOST).parent / "python"), "-c", code, out.name], capture_output=True,
                          text=True, env={**env, "TRACKIO_DIR": str(db)}, timeout=120)
    assert logs.returncode == 0, logs.stderr
    records = json.loads(logs.stdout)
    assert [r["step"] for r in records if "reward" in r] == [1, 2]  # the same steps and names as metrics.jsonl
    assert all("rewards/letter_share/mean" in r for r in records if "reward" in r)
