"""Issue 16 for BAFA, through the real CLI: a black box whose answers cannot be read is
inconclusive (exit 1), never a pass, and a pool without one of the two groups is refused."""

import json
from pathlib import Path

# A chat black box that never gives a 0-100 confidence: every answer is unusable.
GIBBERISH = """
def chat(conversations):
    return ["I would rather talk about the weather." for _ in conversations]
"""

SMALL = ["--pool-size", "60", "--budget", "12", "--cerm-steps", "5", "--refits", "1", "--seeds", "1"]


def test_an_unreadable_black_box_is_inconclusive(cli, tmp_path: Path) -> None:
    (tmp_path / "gib.py").write_text(GIBBERISH)
    r = cli(
        "audit", "--model", "py-chat:gib:chat", "--data", "adult", "--group-col", "sex", *SMALL,
        "--out", "run", "--fail-on", "upper>0.5",
    )  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr
    assert "INCONCLUSIVE" in r.stdout and "INVALID" in r.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    m = summary["metrics"]
    assert summary["verdict"] == "inconclusive"
    assert m["tested"] > 0 and m["invalid"] == m["tested"] and m["invalid_rate"] == 1.0


def test_a_pool_with_one_group_never_passes(cli, tmp_path: Path) -> None:
    rows = "".join(f"{'good' if i % 2 else 'bad'} applicant {i},Male,{i % 2}\n" for i in range(40))
    (tmp_path / "one.csv").write_text("text,sex,label\n" + rows)
    (tmp_path / "clf.py").write_text(
        "def classify(texts):\n    return ['1' if 'good' in t else '0' for t in texts]\n"
    )
    r = cli(
        "audit", "--model", "py:clf:classify", "--data", "one.csv", "--group-col", "sex",
        "--label-col", "label", "--positive-label", "1", *SMALL, "--out", "run",
    )  # fmt: skip
    assert r.returncode in (1, 2), r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    if r.returncode == 2:
        assert "group" in r.stderr
    else:
        assert "INCONCLUSIVE" in r.stdout or "no data" in r.stdout
