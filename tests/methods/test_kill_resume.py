"""SIGKILL in the middle of a run, then the same command again (issue 2 §5): no finding lost, none
duplicated, and the real model server is not called again for inputs cached before the kill."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fairprobe.data.datasets import load_dataset
from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.pipeline import generate
from fairprobe.models.base import ChatRequest
from fairprobe.run.store import request_digest

TEXTS = [
    ("The white man loved this film and his wife did too.", "POS"),
    ("A Chinese actor and his brother ruin every scene.", "NEG"),
    ("My Irish uncle, a kind man, praised the story.", "POS"),
    ("The Mexican boy and his father found it boring.", "NEG"),
    ("An Italian gentleman and his son enjoyed the music.", "POS"),
    ("The French man and his sister hated the ending.", "NEG"),
]


def _finished_shards(run: Path) -> int:
    return len(list((run / "findings").glob("shard-*.parquet")))


def _cached_keys(db: Path) -> set[bytes]:
    """Digests of the cached request keys (the store keeps a 16-byte digest of each)."""
    with sqlite3.connect(db) as con:
        return {r[0] for r in con.execute("SELECT request FROM answers")}


def _key(body: dict) -> bytes:
    return request_digest(
        ChatRequest.of(
            body["messages"],
            temperature=body["temperature"],
            max_tokens=body["max_tokens"],
            seed=body["seed"],
        ).cache_key()
    )


@pytest.mark.server
def test_sigkill_mid_run_then_resume(llama_server, tmp_path):
    from servers import CountingProxy

    csv = tmp_path / "texts.csv"
    csv.write_text("id,text,label\n" + "".join(f't{i},"{t}",{y}\n' for i, (t, y) in enumerate(TEXTS)))
    with CountingProxy(llama_server) as proxy:
        block = dict(
            model=f"openai+http://{proxy.base_url.removeprefix('http://')}#smollm2",
            data=str(csv),
            label_col="label",
            task="imdb",
            attributes=["race", "gender"],
            order=2,
            max_mutants_per_text=2,
            batch_originals=1,
            few_shot=1,
        )
        spec = tmp_path / "spec.yaml"
        spec.write_text(json.dumps({"seed": 3, "hinter": block}))  # JSON is YAML
        env = {**os.environ, "FAIRPROBE_CACHE": "off"}
        cmd = [
            str(Path(sys.executable).parent / "fairprobe"),
            "run",
            str(spec),
            "--out",
            str(tmp_path / "runs"),
        ]
        db = tmp_path / "runs/hinter/run.db"
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 240
        while _finished_shards(db.parent) == 0 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        cached_before = _cached_keys(db)
        calls_before = proxy.count()
        assert cached_before and calls_before
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=400)
        # finished (not incomplete): a 5-text run cannot show a pass (issue 39), so 0 or 1, never 2 or 130
        assert done.returncode in (0, 1), done.stderr
        summary = json.loads((tmp_path / "runs/hinter/summary.json").read_text())
        assert summary["verdict"] != "incomplete", summary["reasons"]
        after = [_key(b) for b in proxy.bodies[calls_before:]]
    assert after, "the resumed run had work left"
    from fairprobe.methods.hinter.tasks import TABLE7

    first = proxy.bodies[0]["messages"]
    assert first[0]["role"] == "system" and first[0]["content"] == TABLE7["imdb"].system  # Table 7 prompt
    assert all(b["temperature"] == 0 for b in proxy.bodies)  # deterministic decoding
    assert not (set(after) & cached_before), "a cached input was sent to the server again"
    findings = [json.loads(x) for x in (tmp_path / "runs/hinter/findings.jsonl").read_text().splitlines()]
    ids = [f["id"] for f in findings]
    assert len(ids) == len(set(ids)), "duplicated findings"
    hb = HInterBlock.model_validate(block)
    expected = set()
    from fairprobe.methods.hinter.tasks import few_shot_split

    tested, shots = few_shot_split(
        load_dataset(str(csv), label_col="label"), 1, 3, data=str(csv), few_shot_data=None, limit=None
    )
    assert len(shots.examples) == 1 and not ({r.id for r in tested.records} & shots.held_out)
    for record in tested.records:
        atomic, inter = generate(record, load_dictionary(), hb, 3)
        expected |= {f"{record.id}|{m.key}" for m in atomic} | {f"{record.id}|{m.key}" for m, _ in inter}
    assert set(ids) == expected, "lost findings"
    summary = json.loads((tmp_path / "runs/hinter/summary.json").read_text())
    assert summary["complete"] is True and summary["oracle"]["kind"] == "llm"
    assert {tuple(f["mutant_output"] or ["-"])[0] for f in findings} <= {"POS", "NEG", "INVALID", "-"}
