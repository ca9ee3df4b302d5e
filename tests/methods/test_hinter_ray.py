"""HInter on a real two-node Ray cluster (head + one worker node joined over loopback), issue 8.

Every campaign here is compared with the same campaign run by the local executor, row for row
(``findings.jsonl`` byte for byte): on the two-node cluster, with a ``py:`` model that exists only in
the driver's working directory, after a worker process is SIGKILLed mid-shard, and after the driver
itself is SIGKILLed and the command is run again.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'fairprobe[ray]')")
psutil = pytest.importorskip("psutil")

BIN = Path(sys.executable).parent
CAMPAIGN = [
    "--data",
    "imdb-sample",
    "--limit",
    "12",
    "--attributes",
    "race,gender,body",
    "--max-mutants-per-text",
    "24",
    "--batch-originals",
    "2",
    "--chunk-mutants",
    "20",  # smaller than one original's mutants: pieces of an original travel in separate chunks
]

UNFAIR_MODEL = '''
import re

def predict(texts):
    """Negative whenever a text mentions women: gender mutants flip it."""
    return ["NEG" if re.search(r"\\bwom[ae]n\\b", t, re.I) else "POS" for t in texts]
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# `ray start --head` turns on token authentication (Ray >= 2.5x); every node and driver then needs the
# token. A fresh one per test session, given by environment, so ~/.ray is never read or written.
AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


def _ray(*args: str) -> None:
    env = {**os.environ, **AUTH}
    done = subprocess.run([str(BIN / "ray"), *args], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]


# The temp folder of each cluster this module started, by address: the cluster's processes are found
# by it (never `ray stop`, which stops every Ray cluster on the machine, another test run's too).
CLUSTER_DIRS: dict[str, str] = {}


def _cluster_processes(temp_dir: str) -> list[psutil.Process]:
    """The processes of the cluster started with ``--temp-dir=temp_dir``: those naming it on their
    command line (GCS, raylets, agents) and their descendants (Ray's workers rename themselves)."""
    found: dict[int, psutil.Process] = {}
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(temp_dir in part for part in proc.info.get("cmdline") or []):
                found[proc.pid] = proc
                found.update((c.pid, c) for c in proc.children(recursive=True))
        except psutil.Error:
            continue
    return list(found.values())


@pytest.fixture(scope="module")
def cluster():
    """A head node and a worker node on this machine, one CPU each, in a temp folder of their own;
    the address to join."""
    port = _free_port()
    address = f"127.0.0.1:{port}"
    # short: Ray's socket paths under it must stay within the 107 characters a Unix socket allows
    temp_dir = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    common = [
        "--num-cpus=1",
        "--node-ip-address=127.0.0.1",
        "--disable-usage-stats",
        f"--temp-dir={temp_dir}",
    ]
    CLUSTER_DIRS[address] = temp_dir
    try:
        _ray("start", "--head", f"--port={port}", "--include-dashboard=false", *common)
        _ray("start", f"--address={address}", *common)
        yield address
    finally:
        procs = _cluster_processes(temp_dir)
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                proc.terminate()
        # a throw-away cluster: what has not stopped in 3 s is killed (some of Ray's processes outlived
        # 15 s after SIGTERM, the longest teardown of the suite)
        _, alive = psutil.wait_procs(procs, timeout=3)
        for proc in alive:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        shutil.rmtree(temp_dir, ignore_errors=True)
        del CLUSTER_DIRS[address]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["FAIRPROBE_CACHE"] = "off"  # every run really calls the model
    env.update(AUTH)
    return env


def _hinter(out: Path, *extra: str, model: str = "embedded:imdb-sentiment") -> list[str]:
    # executor equivalence, not the verdict (the planted unfair model fails the default gates)
    return [
        str(BIN / "fairprobe"),
        "--no-default-gates",
        "hinter",
        "--model",
        model,
        *CAMPAIGN,
        "--out",
        str(out),
        *extra,
    ]


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The campaign on the local executor: what every Ray run must reproduce."""
    root = tmp_path_factory.mktemp("local")
    _run(_hinter(root / "run"), root, _env(root))
    return root / "run"


def _same_findings(run: Path, reference: Path) -> None:
    got = (run / "findings.jsonl").read_bytes()
    want = (reference / "findings.jsonl").read_bytes()
    assert got == want, "findings differ from the local executor's"
    assert (
        json.loads((run / "summary.json").read_text())["metrics"]
        == json.loads((reference / "summary.json").read_text())["metrics"]
    )


def test_two_node_cluster_gives_the_local_findings_row_for_row(cluster, reference, tmp_path):
    _run(_hinter(tmp_path / "run", "--executor", "ray", "--ray-address", cluster), tmp_path, _env(tmp_path))
    _same_findings(tmp_path / "run", reference)
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert summary["executor"] == {"kind": "ray", "address": cluster, "nodes": 2, "cpus": 2}
    shards = sorted(p.name for p in (tmp_path / "run/findings").glob("*.parquet"))
    assert shards == [f"shard-{i:06d}.parquet" for i in range(6)]  # 12 originals, 2 per shard
    findings = [json.loads(x) for x in (tmp_path / "run/findings.jsonl").read_text().splitlines()]
    assert any(f["biased"] for f in findings) and any(f["kind"] == "intersectional" for f in findings)


@pytest.mark.slow  # ~14 s; back in test-all: two clean-clone runs of the default suite took 581 s and 607 s
def test_a_py_model_in_the_driver_working_directory_imports_on_every_node(cluster, tmp_path):
    (tmp_path / "unfair_model.py").write_text(UNFAIR_MODEL)
    env = _env(tmp_path)
    local = _hinter(tmp_path / "local", model="py:unfair_model:predict")
    _run(local, tmp_path, env)
    remote = _hinter(
        tmp_path / "ray",
        "--executor",
        "ray",
        "--ray-address",
        cluster,
        model="py:unfair_model:predict",
    )
    _run(remote, tmp_path, env)
    _same_findings(tmp_path / "ray", tmp_path / "local")
    findings = [json.loads(x) for x in (tmp_path / "ray/findings.jsonl").read_text().splitlines()]
    flipped = [f for f in findings if f["biased"]]
    assert flipped, "gender mutants flip the planted model"
    for f in findings:  # every output is the planted rule's, computed on the worker nodes
        if f["mutant_output"] is not None:
            assert f["mutant_output"] == (["NEG"] if re.search(r"\bwom[ae]n\b", f["text"], re.I) else ["POS"])


def _shard_workers(cluster: str) -> list[psutil.Process]:
    """The shard tasks running on this module's cluster (not on another test run's)."""
    found = []
    for proc in _cluster_processes(CLUSTER_DIRS[cluster]):
        try:
            title = " ".join(proc.cmdline()) or proc.name()
        except psutil.Error:
            continue
        if title.startswith("ray::fairprobe_shard"):
            found.append(proc)
    return found


@pytest.mark.slow  # ~16 s, for the suite's budget (a clean run took 20 min 9 s with it on an idle machine)
def test_a_worker_killed_mid_shard_is_replaced_and_the_findings_equal_the_local_run(
    cluster, reference, tmp_path
):
    cmd = _hinter(tmp_path / "run", "--executor", "ray", "--ray-address", cluster)
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    killed = None
    deadline = time.monotonic() + 300
    while killed is None and proc.poll() is None and time.monotonic() < deadline:
        for worker in _shard_workers(cluster):
            worker.send_signal(signal.SIGKILL)
            killed = worker.pid
            break
        time.sleep(0.02)
    out, err = proc.communicate(timeout=600)
    assert killed is not None, "no shard task was seen running"
    assert proc.returncode == 0, err[-3000:]
    assert "lost its worker" in err and "starting it again" in err
    _same_findings(tmp_path / "run", reference)


def _marked_shards(db_path: Path) -> set[int]:
    """The shards the run's store records as done (none while the store does not exist yet)."""
    if not db_path.exists():
        return set()
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)) as db:
            keys = db.execute("SELECT key FROM state WHERE key LIKE 'shard:%'").fetchall()
    except sqlite3.DatabaseError:  # the store or its table is not created yet
        return set()
    return {int(k.split(":")[1]) for (k,) in keys}


@pytest.mark.slow  # 25-32 s, for the suite's budget; a killed local run resumes in test_kill_resume
def test_a_killed_driver_resumes_without_recomputing_finished_shards(cluster, reference, tmp_path):
    cmd = _hinter(tmp_path / "run", "--executor", "ray", "--ray-address", cluster)
    env = _env(tmp_path)
    folder = tmp_path / "run/findings"
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    # kill once a shard is recorded done, not merely written: on a loaded machine the kill could land
    # between the file and the record, and the test would find nothing to keep
    while not _marked_shards(tmp_path / "run/run.db") and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before the driver could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    marked = _marked_shards(tmp_path / "run/run.db")
    before = {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in folder.glob("shard-*.parquet")
        if int(p.stem.split("-")[1]) in marked
    }
    assert 0 < len(before) < 6
    done = _run(cmd, tmp_path, env)
    assert f"in 6 shards ({len(before)} done)" in done.stderr
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("shard-*.parquet")}
    assert all(after[name] == stamp for name, stamp in before.items()), "a finished shard was recomputed"
    assert not list(folder.glob(".shard-*")), "a half-written shard was left behind"
    _same_findings(tmp_path / "run", reference)


def test_an_address_where_no_head_listens_is_one_clear_line(tmp_path):
    cmd = _hinter(tmp_path / "run", "--executor", "ray", "--ray-address", f"127.0.0.1:{_free_port()}")
    done = subprocess.run(cmd, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert (
        len(lines) == 1 and "no Ray head answers at 127.0.0.1:" in lines[0] and "ray start --head" in lines[0]
    )


@pytest.mark.server
@pytest.mark.slow  # ~10 s plus a llama.cpp server on that worker; back in test-all for the 600 s budget
def test_an_llm_under_test_is_asked_from_the_worker_nodes(cluster, llama_server, tmp_path):
    """A chat URI goes to the workers as a model factory (Table 7 prompt, few-shot, temperature 0).

    llama.cpp's prompt cache makes repeated temperature-0 answers differ now and then, so outputs
    are checked for shape and the mutants for identity with the local generation, not answer by answer.
    """
    from fairprobe.data.datasets import load_dataset
    from fairprobe.lexicons.dictionary import load_dictionary
    from fairprobe.methods.hinter.block import HInterBlock
    from fairprobe.methods.hinter.cases import generate

    csv = tmp_path / "texts.csv"
    csv.write_text(
        "id,text,label\nt0,The white man loved this film.,POS\nt1,A Chinese actor and his brother ruin it.,NEG\n"
    )
    shots = tmp_path / "shots.csv"  # few-shot examples never come from the texts under test (issue 20)
    shots.write_text("text,label\nA joy to watch.,POS\nA waste of time.,NEG\n")
    model = f"openai+{llama_server}#smollm2"
    options = ["--data", str(csv), "--label-col", "label", "--task", "imdb", "--attributes", "race,gender"]
    options += ["--few-shot-data", str(shots)]
    cmd = [str(BIN / "fairprobe"), "--no-default-gates", "hinter", "--model", model, *options]
    cmd += ["--max-mutants-per-text", "2"]
    cmd += ["--executor", "ray", "--ray-address", cluster, "--out", str(tmp_path / "run")]
    _run(cmd, tmp_path, _env(tmp_path))
    findings = [json.loads(x) for x in (tmp_path / "run/findings.jsonl").read_text().splitlines()]
    block = HInterBlock(model=model, attributes=["race", "gender"], max_mutants_per_text=2)
    expected = []
    for record in load_dataset(str(csv), label_col="label").records:
        atomic, inter = generate(record, load_dictionary(), block, 0)
        expected += [f"{record.id}|{m.key}" for m in atomic] + [f"{record.id}|{m.key}" for m, _ in inter]
    assert [f["id"] for f in findings] == expected
    outputs = {tuple(f["mutant_output"] or ["-"]) for f in findings} | {
        tuple(f["original_output"]) for f in findings
    }
    assert outputs <= {("POS",), ("NEG",), ("INVALID",), ("-",)} and outputs - {("-",)}
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert summary["oracle"]["kind"] == "llm" and summary["executor"]["nodes"] == 2
