"""Issue 8 §5: the driver of a HInter campaign of more than a million mutants stays under 2 GB RSS,
and its run folder under 100 MB.

IMDB sample × the full dictionary at order 3 is 1,206,519 mutants. The model is a keyword rule and
the dependency invariant is off, so the run (about 5 minutes on 2 cores) measures the pipeline's own
memory: lazy mutant generation, bounded chunks, Parquet shards, and column-wise summaries.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from childenv import pythonpath

psutil = pytest.importorskip("psutil")

KEYWORD_MODEL = """
import re
_NEG = re.compile(r"\\b(women|woman|black|old|poor)\\b", re.I)

def predict(texts):
    return ["NEG" if _NEG.search(t) else "POS" for t in texts]
"""


@pytest.mark.slow
def test_a_million_mutant_campaign_keeps_the_driver_under_2_gb(tmp_path):
    (tmp_path / "keywords.py").write_text(KEYWORD_MODEL)
    campaign = "hinter --model py:keywords:predict --attributes race,gender,body --order 3 --no-invariant --all-adjectives"
    cmd = [str(Path(sys.executable).parent / "fairprobe"), *campaign.split(), "--out", str(tmp_path / "run")]
    env = {**os.environ, "FAIRPROBE_CACHE": "off", "PYTHONPATH": pythonpath(tmp_path)}
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    driver, peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        try:
            peak = max(peak, driver.memory_info().rss)
        except psutil.Error:
            pass
        time.sleep(0.05)
    assert proc.returncode in (0, 1), proc.stderr.read().decode()[-2000:]
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    mutants = sum(v["generated"] for v in summary["metrics"]["mutants"].values())
    assert mutants >= 1_000_000
    assert peak < 2 * 2**30, f"driver peak RSS {peak / 2**20:.0f} MiB"
    assert (tmp_path / "run/report.html").stat().st_size < 5 * 2**20  # the report stays small
    assert summary["findings"] == mutants
    # Findings stay in Parquet (no findings.jsonl above 10,000 findings; `fairprobe export` writes it)
    # and run.db holds compact answers only: the folder stays under 100 MB.
    assert not (tmp_path / "run/findings.jsonl").exists()
    written = sum(p.stat().st_size for p in (tmp_path / "run").rglob("*") if p.is_file())
    assert written < 100 * 10**6, f"run folder {written / 1e6:.0f} MB"
