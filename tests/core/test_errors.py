"""Bad input: one line saying what is wrong and what to do, exit 2, no traceback."""

import pytest


def _one_line_error(r):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], r.stderr  # progress lines may precede it
    return errors[0]


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("nosuch:thing", "unknown model URI scheme"),
        ("spacy:/no/such/model", "/no/such/model"),
        ("gguf:/no/such/file.gguf", "/no/such/file.gguf"),
        ("openai+http://127.0.0.1:9/v1#m", "127.0.0.1:9"),
    ],
)
def test_models_check_errors(cli, uri, expected):
    assert expected in _one_line_error(cli("models", "check", uri))


def test_malformed_spec_names_file_and_line(cli, tmp_path):
    (tmp_path / "bad.yaml").write_text("accuracy:\n  model: py:x:y\n  data: d.csv\n  limt: 3\n")
    line = _one_line_error(cli("run", "bad.yaml"))
    assert "bad.yaml:4" in line and "limt" in line


def test_missing_spec_and_bad_fail_on(cli, tmp_path):
    assert "fairprobe init" in _one_line_error(cli("run", "nope.yaml"))
    (tmp_path / "s.yaml").write_text("accuracy:\n  model: py:x:y\n  data: d.csv\n")
    assert "--fail-on" in _one_line_error(cli("run", "s.yaml", "--fail-on", "accuracy is low"))


def test_unknown_model_in_a_run_is_a_clear_error(cli, tmp_path):
    (tmp_path / "d.csv").write_text("text,label\na,POS\n")
    (tmp_path / "s.yaml").write_text("accuracy:\n  model: nosuch:thing\n  data: d.csv\n")
    assert "unknown model URI scheme" in _one_line_error(cli("run", "s.yaml"))
