"""Bad bytes and broken files: one red line naming the file and exit 2, never a traceback."""

from __future__ import annotations

import io
import sqlite3

import pytest
from childenv import pythonpath

from fairprobe.data.readers import read_columns
from fairprobe.errors import DataError, FairprobeError, ModelError, ModelOutputError, RunStateError
from fairprobe.models import load_classifier
from fairprobe.run.progress import ProgressReporter
from fairprobe.run.store import Store
from fairprobe.technique.spec import load_spec, parse_spec
from reliability.helpers import assert_one_red_line

LATIN1 = "text,label\ncaf\xe9 au lait,POS\n".encode("latin-1")  # é as the single byte 0xe9


def _spec(tmp_path, block: str) -> str:
    return block.replace("TMP", str(tmp_path))


@pytest.mark.parametrize(
    ("name", "block", "bad_file"),
    [
        ("data CSV", "accuracy:\n  model: py:kw:classify\n  data: TMP/bad.csv\n", "bad.csv"),
        (
            "dictionary",
            "hinter:\n  model: py:kw:classify\n  data: TMP/data.csv\n  dictionary: TMP/bad.yaml\n",
            "bad.yaml",
        ),
        ("case", "caffe:\n  case: TMP/bad.yaml\n", "bad.yaml"),
        ("tests", "metafair:\n  model: embedded:smollm2\n  tests: TMP/bad.jsonl\n", "bad.jsonl"),
        ("KB", "caffe:\n  case: TMP/data.csv\n  kb: [TMP/bad.csv]\n", "bad.csv"),
    ],
)
def test_non_utf8_input_file_is_one_data_error_naming_it(work, name, block, bad_file):
    (work / bad_file).write_bytes(LATIN1)
    spec = parse_spec(_spec(work, block), "spec.yaml")[0]
    with pytest.raises(DataError) as err:
        spec.resolved_hash()
    assert str(work / bad_file) in str(err.value) and "0xe9 at line 2" in str(err.value)
    assert "UTF-8" in str(err.value)


def test_non_utf8_spec_and_data_through_the_cli(cli, work):
    (work / "spec.yaml").write_bytes(b"accuracy:\n  model: py:kw:classify\n  data: caf\xe9.csv\n")
    assert_one_red_line(cli("run", "spec.yaml"), "spec.yaml", "not UTF-8", "0xe9 at line 3")
    (work / "bad.csv").write_bytes(LATIN1)
    (work / "ok.yaml").write_text("accuracy:\n  model: py:kw:classify\n  data: bad.csv\n")
    assert_one_red_line(cli("run", "ok.yaml", "--out", "runs"), "bad.csv", "not UTF-8")
    assert not (work / "runs").exists()  # refused before a run folder was made


def test_non_utf8_spec_in_process(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"seed: 1\n# caf\xe9\n")
    with pytest.raises(DataError, match=r"s\.yaml is not UTF-8 text \(byte 0xe9 at line 2\)"):
        load_spec(path)


def test_csv_with_byte_order_mark_reads_its_first_column(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("id,text,label\nr1,ok,POS\n".encode("utf-8-sig"))
    columns = read_columns(path)
    assert list(columns) == ["id", "text", "label"] and columns["id"] == ["r1"]
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_bytes('{"text": "ok"}\n'.encode("utf-8-sig"))
    assert read_columns(jsonl) == {"text": ["ok"]}


RAISES = """
def classify(texts):
    raise ValueError("weights not found [red]")
"""
SHORT = """
def classify(texts):
    return ["POS"]
"""


def test_py_model_that_raises_or_miscounts_is_a_model_error(work, monkeypatch):
    monkeypatch.chdir(work)
    (work / "raises.py").write_text(RAISES)
    (work / "short.py").write_text(SHORT)
    with pytest.raises(
        ModelError, match=r"py:raises:classify raised ValueError: weights not found \[red\] at .*raises\.py:3"
    ):
        load_classifier("py:raises:classify").predict(["a", "b"])
    with pytest.raises(ModelOutputError, match="returned 1 predictions for 2 inputs"):
        load_classifier("py:short:classify").predict(["a", "b"])


def test_py_model_that_raises_exits_2_through_the_cli(cli, work):
    (work / "raises.py").write_text(RAISES)
    (work / "spec.yaml").write_text("accuracy:\n  model: py:raises:classify\n  data: data.csv\n")
    assert_one_red_line(
        cli("run", "spec.yaml", "--out", "runs"), "py:raises:classify raised ValueError", "[red]"
    )


def test_corrupt_run_db_and_cache_db_name_the_file_and_the_fix(cli, work):
    (work / "spec.yaml").write_text("accuracy:\n  model: py:kw:classify\n  data: data.csv\n")
    (work / "runs/accuracy").mkdir(parents=True)
    (work / "runs/accuracy/run.db").write_bytes(b"this is not a database" * 100)
    assert_one_red_line(cli("run", "spec.yaml", "--out", "runs"), "run.db", "not a fairprobe store", "delete")
    (work / "runs/accuracy/run.db").unlink()
    (work / "cache.db").write_bytes(b"garbage" * 1000)  # the cli fixture's FAIRPROBE_CACHE
    assert_one_red_line(cli("run", "spec.yaml", "--out", "runs"), "cache.db", "FAIRPROBE_CACHE=off")
    (work / "cache.db").unlink()
    again = cli("run", "spec.yaml", "--out", "runs")  # the half-created run does not block the fix
    assert again.returncode in (0, 1), again.stderr


def test_truncated_store_is_a_run_state_error(tmp_path):
    good = tmp_path / "run.db"
    with Store(good) as store:
        store.set_meta(spec_hash="x")
    header = good.read_bytes()[:100]
    (tmp_path / "bad.db").write_bytes(header + b"\x00" * 10)  # a SQLite header and nothing else
    with pytest.raises(RunStateError, match="bad.db"):
        with Store(tmp_path / "bad.db") as store:
            store.get_meta("spec_hash")
    assert isinstance(RunStateError("x"), FairprobeError)
    sqlite3.connect(good).close()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:  # a terminal: the rich progress bar is drawn
        return True


def test_progress_bar_prints_run_names_with_brackets_verbatim():
    stream = _Terminal()
    with ProgressReporter("[/x] [red]run: classifying", 2, stream=stream) as bar:
        bar.advance(2)
    assert "[/x] [red]run" in stream.getvalue()


def test_brackets_in_paths_are_printed_verbatim(cli, work):
    (work / "spec.yaml").write_text(
        "accuracy:\n  model: py:kw:classify\n  data: 'in[/x]put/[red]missing.csv'\n"
    )
    assert_one_red_line(cli("run", "spec.yaml", "--out", "runs"), "in[/x]put/[red]missing.csv")


def test_text_over_the_size_limit_is_refused_with_bounded_memory(tmp_path):
    """A 6 MB single-line text: refused by the loader (documented limit), and the process stays far
    below the GBs that parsing it took."""
    import subprocess
    import sys

    big = tmp_path / "big.csv"
    big.write_text("text,label\n" + "word " * 1_200_000 + ",POS\nshort text,NEG\n")
    (tmp_path / "kw.py").write_text("def classify(texts):\n    return ['POS' for t in texts]\n")
    (tmp_path / "spec.yaml").write_text("hinter:\n  model: py:kw:classify\n  data: big.csv\n")
    code = (
        # VmHWM is this process's own peak; ru_maxrss would carry over the (large) peak of the
        # pytest process that forked it, since Linux keeps the high-water mark across exec.
        "import atexit, sys\n"
        "hwm = lambda: next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
        "atexit.register(lambda: print('MAXRSS', hwm(), file=sys.stderr))\n"
        "from fairprobe.cli import main\n"
        "sys.argv = ['fairprobe', 'run', 'spec.yaml', '--out', 'runs']\n"
        "main()\n"
    )
    env = {
        "FAIRPROBE_CACHE": "off",
        "PYTHONPATH": pythonpath(tmp_path),
        "PATH": "/usr/bin:/bin",
        "OMP_NUM_THREADS": "1",
    }
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert_one_red_line(r, "row 0", "6,000,000 characters", "over the limit of 1,000,000")
    peak_mb = int(r.stderr.split("MAXRSS")[1].split()[0]) / 1024
    assert peak_mb < 800, f"peak RSS {peak_mb:.0f} MB"


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("labels.jsonl", ["metafair", "judge-eval", "--labels", "labels.jsonl", "--judge", "py-chat:nope:x"]),
        ("crows.csv", ["caffe", "kb", "build", "--crows", "crows.csv", "--out", "kb.jsonl"]),
    ],
)
def test_non_utf8_files_read_by_stage_commands_are_one_line_exit_2(cli, tmp_path, name, args):
    """Files read outside a run (judge labels, a CrowS-Pairs file) go through the same reader."""
    (tmp_path / name).write_bytes(b'{"text": "caf\xe9"}\nsent_more,sent_less\n')
    r = cli(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "UTF-8" in r.stderr and name in r.stderr
