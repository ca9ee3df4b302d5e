"""Bad inputs, round two: misread CSV rows, output paths, option bounds, YAML duplicates and depth,
lone surrogates, folders given as files. Every case: one red line, exit 2, before any work starts.

Every test runs the real `fairprobe` executable. Where the old behaviour was a long run (a model
loaded, minutes of training), the command is built so that the old code stops fast on a later,
unrelated error (a model module that does not exist), which lacks the words the test asks for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliability.helpers import assert_one_red_line

NO_MODEL = "py-chat:fairprobe_no_such_module:chat"
"""A chat URI whose module does not exist: loading it fails at once (exit 2), so a check that
must come before any model is loaded is told apart from the model error."""

CASE = Path(__file__).resolve().parents[2] / "examples" / "caffe" / "clarification.yaml"
FAST_TRAIN = ["--task", "adult-gender", "--no-pretrain", "--train-limit", "20", "--epochs", "1"]
"""certify train options that keep a run of the old code (which trained before checking) short."""


def _spec(work: Path, data: str, extra: str = "") -> str:
    (work / "spec.yaml").write_text(f"accuracy:\n  model: py:kw:classify\n  data: {data}\n{extra}")
    return "spec.yaml"


# ------------------------------------------------------------------------------------------ CSV


def test_unquoted_comma_in_the_first_data_row_names_the_line(cli, work):
    """pandas read a first row with an extra field as an implicit index: every other row lost its
    text and the first text became ' was good.' — a silently wrong dataset."""
    (work / "comma.csv").write_text(
        "text,label\nThe film, I think, was good.,POS\na bad film,NEG\na good film,POS\n", encoding="utf-8"
    )
    r = cli("run", _spec(work, "comma.csv"), "--out", "runs")
    assert_one_red_line(r, "comma.csv:2", "4 fields", "header has 2", "double quotes")


def test_extra_field_in_a_later_row_and_a_trailing_comma_name_their_line(cli, work):
    (work / "later.csv").write_text("text,label\nfine,POS\nbad, really,NEG\n", encoding="utf-8")
    assert_one_red_line(cli("run", _spec(work, "later.csv"), "--out", "runs"), "later.csv:3", "3 fields")
    (work / "trail.csv").write_text("text,label\nfine,POS,\nbad,NEG,\n", encoding="utf-8")
    assert_one_red_line(
        cli("run", _spec(work, "trail.csv"), "--out", "runs"), "trail.csv:2", "at the end of the row"
    )


# --------------------------------------------------------------------------------- output paths


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["init", "adir", "--force"], ["adir is a directory, expected a file"]),
        (["init", "afile/spec.yaml"], ["afile is a file, not a folder"]),
        (["init", ""], ["give a file path"]),
        (["metafair", "generate", "--generator", NO_MODEL, "--out", "adir"], ["--out adir is a directory"]),
        (
            ["metafair", "generate", "--generator", NO_MODEL, "--out", "afile/tests.jsonl"],
            ["afile is a file, not a folder"],
        ),
        (["caffe", "kb", "build", "--limit", "2", "--out", "adir"], ["--out adir is a directory"]),
        (["caffe", "kb", "build", "--limit", "2", "--out", "afile/kb.jsonl"], ["afile is a file"]),
        (["caffe", "generate", "--case", str(CASE), "--generator", NO_MODEL, "--out", "adir"], ["adir is a"]),
        (["lexicon", "extract", "data.csv", "--out", "adir"], ["--out adir is a directory"]),
        (["certify", "train", *FAST_TRAIN, "--out", "afile"], ["--out afile is an existing file"]),
        (["certify", "train", *FAST_TRAIN, "--out", "afile/model"], ["afile is a file, not a folder"]),
        (["audit", "evaluate", "data.csv", "--out", "afile"], ["--out afile is an existing file"]),
    ],
)
def test_bad_output_path_is_refused_before_any_work(cli, work, args, needles):
    (work / "adir").mkdir()
    (work / "afile").write_text("keep me\n")
    r = cli(*args)
    assert_one_red_line(r, *needles)
    assert (work / "afile").read_text() == "keep me\n"
    assert not list((work / "adir").iterdir())


def test_output_in_an_unwritable_folder_is_refused(cli, work):
    """/proc and /sys refuse new files even to root (where a chmod'ed folder would not)."""
    for base in ("/proc", "/sys"):
        r = cli("init", f"{base}/fairprobe-test/spec.yaml")
        assert_one_red_line(r, "cannot write in folder", base)


# ----------------------------------------------------------------------------- option bounds


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [
        ("--batch", "0", "greater than or equal to 1"),
        ("--lr", "-1", "greater than 0"),
        ("--lr", "nan", "finite number"),
        ("--epochs", "0", "greater than or equal to 1"),
        ("--train-limit", "0", "greater than or equal to 1"),
        ("--threads", "-2", "greater than or equal to 1"),
    ],
)
def test_certify_train_option_out_of_bounds_is_refused_before_training(cli, work, option, value, allowed):
    r = cli("certify", "train", *FAST_TRAIN, option, value, "--out", "model")
    assert_one_red_line(r, option, allowed)
    assert not (work / "model").exists()


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (
            ["caffe", "generate", "--case", str(CASE), "--generator", NO_MODEL, "--pair-mode", "nope"],
            ["--pair-mode", "'pairs' or 'swap'"],
        ),
        (
            ["caffe", "generate", "--case", str(CASE), "--generator", NO_MODEL, "--cap", "0"],
            ["--cap", "greater than or equal to 1"],
        ),
        (
            ["caffe", "kb", "build", "--limit", "-1", "--out", "kb.jsonl"],
            ["--limit", "greater than or equal to 1"],
        ),
        (
            ["metafair", "generate", "--generator", NO_MODEL, "--retries", "-1"],
            ["--retries", "greater than or equal to 0"],
        ),
        (
            ["metafair", "generate", "--generator", NO_MODEL, "--temperature", "nan"],
            ["--temperature", "finite number"],
        ),
        (
            ["metafair", "judge-eval", "--labels", "labels.jsonl", "--judge", NO_MODEL, "--repeat", "0"],
            ["--repeat", "greater than or equal to 1"],
        ),
        (["metafair", "generate", "--generator", NO_MODEL, "--mrs", ""], ["--mrs", "at least 1 item"]),
        (
            ["metafair", "run", "--model", NO_MODEL, "--dimensions", ",", "--out", "runs"],
            ["--dimensions", "at least 1"],
        ),
    ],
)
def test_stage_option_out_of_bounds_is_one_line(cli, work, args, needles):
    (work / "labels.jsonl").write_text("")
    assert_one_red_line(cli(*args), *needles)
    assert not (work / "kb.jsonl").exists()


def test_nan_in_a_spec_field_is_refused(cli, work):
    """A NaN threshold compares false with everything: a NaN bound silently never fires."""
    (work / "spec.yaml").write_text(f"metafair:\n  model: {NO_MODEL}\n  score_threshold: .nan\n")
    assert_one_red_line(cli("run", "spec.yaml", "--out", "runs"), "score_threshold", "finite number")


@pytest.mark.parametrize("value", ["-5", "0", "lots"])
def test_bad_max_text_chars_names_the_variable_and_the_allowed_values(cli, work, value):
    import os
    import subprocess
    import sys

    from childenv import pythonpath

    env = {**os.environ, "FAIRPROBE_MAX_TEXT_CHARS": value, "PYTHONPATH": pythonpath(work)}
    env["FAIRPROBE_CACHE"] = str(work / "cache.db")
    exe = Path(sys.executable).parent / "fairprobe"
    r = subprocess.run(
        [str(exe), "run", _spec(work, "data.csv"), "--out", "runs"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert_one_red_line(r, "FAIRPROBE_MAX_TEXT_CHARS", "at least 1")


# ------------------------------------------------------------------------------ model folder


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ("{", "config.json is not as `fairprobe certify train` writes it"),
        ('{"vocab_size": 10, "dim": "x"}', "dim must be a whole number"),
        ('["not", "an", "object"]', "not a JSON object"),
    ],
)
def test_broken_certify_config_json_is_one_line(cli, work, config, needle):
    model = work / "model"
    model.mkdir()
    (model / "model.pt").write_bytes(b"not a checkpoint")
    (model / "config.json").write_text(config)
    (model / "vocab.json").write_text("[]")
    r = cli("certify", "verify", "--model", str(model), "--data", "data.csv", "--n", "2", "--out", "runs")
    assert_one_red_line(r, needle, "certify train --out")


def test_broken_certify_checkpoint_is_one_line(cli, work):
    model = work / "model"
    model.mkdir()
    (model / "model.pt").write_bytes(b"not a checkpoint")
    (model / "config.json").write_text('{"vocab_size": 10}')
    (model / "vocab.json").write_text("[]")
    r = cli("certify", "verify", "--model", str(model), "--data", "data.csv", "--n", "2", "--out", "runs")
    assert_one_red_line(r, "model.pt", "cannot load the weights")


# ------------------------------------------------------------------------------------- YAML


def test_spec_nested_5000_deep_is_one_line(cli, work):
    (work / "deep.yaml").write_text(
        "accuracy:\n  model: py:kw:classify\n  data: data.csv\n  x: " + "[" * 5000 + "]" * 5000 + "\n"
    )
    assert_one_red_line(cli("run", "deep.yaml", "--out", "runs"), "deep.yaml:4", "nested more than")


def test_duplicate_key_in_a_spec_names_both_lines(cli, work):
    (work / "dup.yaml").write_text(
        "seed: 1\naccuracy:\n  model: py:kw:classify\n  data: data.csv\n  data: other.csv\n"
    )
    assert_one_red_line(cli("run", "dup.yaml", "--out", "runs"), "dup.yaml", "'data'", "lines 4 and 5")
    assert not (work / "runs").exists()


def test_duplicate_key_in_a_case_file_names_both_lines(cli, work):
    text = CASE.read_text(encoding="utf-8")
    (work / "case.yaml").write_text(text + "intent: recommendation\n", encoding="utf-8")
    intent_line = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith("intent:"))
    r = cli("caffe", "generate", "--case", "case.yaml", "--generator", NO_MODEL, "--out", "p.jsonl")
    last = len(text.splitlines()) + 1
    assert_one_red_line(r, "case.yaml", "'intent'", f"lines {intent_line} and {last}")


def test_duplicate_key_in_a_dictionary_names_both_lines(cli, work):
    (work / "dict.yaml").write_text(
        "gender:\n  - map: {he: she}\ngender:\n  - map: {man: woman}\n", encoding="utf-8"
    )
    r = cli(
        "hinter",
        "--model",
        "py:kw:classify",
        "--data",
        "data.csv",
        "--dictionary",
        "dict.yaml",
        "--out",
        "runs",
    )
    assert_one_red_line(r, "dict.yaml", "'gender'", "lines 1 and 3")


def test_duplicate_key_in_a_catalogue_names_both_lines(cli, work):
    (work / "cat.yaml").write_text("dimensions:\n  gender: [male]\ndimensions:\n  age: [old]\n")
    r = cli("metafair", "generate", "--generator", NO_MODEL, "--catalogue", "cat.yaml")
    assert_one_red_line(r, "cat.yaml", "'dimensions'", "lines 1 and 3")


# ---------------------------------------------------------------------------- lone surrogate


def test_lone_surrogate_in_jsonl_data_is_one_line(cli, work):
    (work / "sur.jsonl").write_text(
        json.dumps({"text": "a good film \ud800", "label": "POS"})
        + "\n"
        + json.dumps({"text": "a bad film \ud83d\ude00", "label": "NEG"})
        + "\n",
        encoding="utf-8",
    )
    assert "\\ud800" in (work / "sur.jsonl").read_text()
    r = cli("run", _spec(work, "sur.jsonl"), "--out", "runs")
    assert_one_red_line(r, "sur.jsonl:1", "lone surrogate \\ud800")


def test_paired_surrogates_are_text(cli, work):
    """An emoji written as two escapes is valid JSON text: it must keep working."""
    (work / "emoji.jsonl").write_text(
        "".join(
            json.dumps({"text": f"a {w} film \ud83d\ude00", "label": lab}) + "\n"
            for w, lab in (("good", "POS"), ("bad", "NEG"))
        ),
        encoding="utf-8",
    )
    r = cli("run", _spec(work, "emoji.jsonl"), "--out", "runs")
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------------- a folder, not a file


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["run", "adir"], "spec file"),
        (["hinter", "--model", "py:kw:classify", "--data", "adir", "--out", "runs"], "dataset"),
        (
            [
                "hinter",
                "--model",
                "py:kw:classify",
                "--data",
                "data.csv",
                "--dictionary",
                "adir",
                "--out",
                "runs",
            ],
            "bias dictionary",
        ),
        (["caffe", "generate", "--case", "adir", "--generator", NO_MODEL], "case file"),
        (
            ["caffe", "run", "--case", str(CASE), "--prompts", "adir", "--model", NO_MODEL, "--out", "runs"],
            "prompts",
        ),
        (["caffe", "kb", "build", "--crows", "adir", "--out", "kb.jsonl"], "CrowS-Pairs file"),
        (["metafair", "run", "--model", NO_MODEL, "--tests", "adir", "--out", "runs"], "tests file"),
        (["metafair", "judge-eval", "--labels", "adir", "--judge", NO_MODEL], "labels file"),
        (["metafair", "generate", "--generator", NO_MODEL, "--catalogue", "adir"], "attribute catalogue"),
        (
            ["audit", "--scores", "adir", "--data", "pool.csv", "--group-col", "group"]
            + ["--positive-label", "POS", "--out", "runs"],
            "scores file",
        ),
        (["lexicon", "extract", "adir"], "SBIC file"),
    ],
)
def test_a_folder_given_as_an_input_file_says_so(cli, work, args, what):
    (work / "adir").mkdir()
    (work / "pool.csv").write_text(
        "id,text,label,group\n"
        + "".join(
            f"p{i},text {i},{'POS' if i % 2 else 'NEG'},{'a' if i % 4 < 2 else 'b'}\n" for i in range(16)
        )
    )
    assert_one_red_line(cli(*args), what, "adir is a directory, expected a file")


# ------------------------------------------------------------- more of the same families


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (
            ["hinter", "--model", "py:kw:classify", "--data", "", "--out", "runs"],
            ["--data", "at least 1 character"],
        ),
        (["metafair", "run", "--model", NO_MODEL, "--tests", "", "--out", "runs"], ["--tests", "at least 1"]),
        (["certify", "verify", "--model", "", "--out", "runs"], ["--model", "at least 1 character"]),
        # --case is a list option (repeated or comma list): an empty value is no case at all
        (["caffe", "generate", "--case", "", "--generator", NO_MODEL], ["needs --case"]),
        (["lexicon", "extract", ""], ["SBIC file: give a file path"]),
        (["caffe", "kb", "build", "--out", ""], ["--out is empty"]),
    ],
)
def test_an_empty_path_is_refused(cli, work, args, needles):
    """An empty string became Path('.') (the current folder) or, for the Meta-Fair tests file,
    silently the shipped set."""
    assert_one_red_line(cli(*args), *needles)


def test_json_nested_too_deeply_is_one_line(cli, work):
    (work / "deep.jsonl").write_text('{"text": ' + "[" * 100_000 + "]" * 100_000 + ', "label": "POS"}\n')
    assert_one_red_line(
        cli("run", _spec(work, "deep.jsonl"), "--out", "runs"), "deep.jsonl:1", "nested too deeply"
    )


def test_a_column_named_twice_in_a_csv_header_is_refused(cli, work):
    """pandas renamed the second 'text' to 'text.1' and the first one was used, silently."""
    (work / "twice.csv").write_text("text,text,label\na good film,x,POS\na bad film,y,NEG\n")
    assert_one_red_line(
        cli("run", _spec(work, "twice.csv"), "--out", "runs"), "twice.csv:1", "'text' appears twice"
    )


def test_yaml_alias_bomb_is_refused_at_once(cli, work):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    lines += ["thresholds: [*i]", "accuracy:", "  model: py:kw:classify", "  data: data.csv"]
    (work / "bomb.yaml").write_text("\n".join(lines) + "\n")
    r = cli("run", "bomb.yaml", "--out", "runs", timeout=60)
    assert_one_red_line(r, "bomb.yaml", "expand to more than")


def test_boolean_seed_is_not_an_integer(cli, work):
    (work / "s.yaml").write_text("seed: true\naccuracy:\n  model: py:kw:classify\n  data: data.csv\n")
    assert_one_red_line(cli("run", "s.yaml", "--out", "runs"), "s.yaml:1", "seed must be an integer")


def test_certify_eval_data_with_a_broken_line_is_one_line(cli, work):
    """certify's own JSONL reading let a JSONDecodeError through (exit 3)."""
    pytest.importorskip("torch")
    from fairprobe.methods.certify.model import ModelConfig, build_model, save_model

    cfg = ModelConfig(vocab_size=4, blocks=1)
    model = work / "model"
    save_model(model, build_model(cfg), cfg, ["<pad>", "<unk>", "he", "kind"], {"task": "adult-gender"})
    (work / "eval.jsonl").write_text('{"text": "he is kind", "label": 1}\n{broken\n')
    r = cli("certify", "verify", "--model", str(model), "--data", "eval.jsonl", "--n", "2", "--out", "runs")
    assert_one_red_line(r, "eval.jsonl:2", "not valid JSON")


POOL = "id,text,label,group\n" + "".join(
    f"p{i},text {i},{'POS' if i % 2 else 'NEG'},{'a' if i % 4 < 2 else 'b'}\n" for i in range(16)
)


@pytest.mark.parametrize(
    ("scores", "needles"),
    [
        ("id,score\np0,nan\np1,inf\n", ["scores.csv", "no score is a finite number"]),
        ("id,score\np0,0.1\np1\n", ["scores.csv:3", "has no score cell"]),
        ("id,score\np0,0.1\np1,0,5\n", ["scores.csv:3", "more fields than the header"]),
    ],
)
def test_bad_row_in_a_scores_file_names_its_line(cli, work, scores, needles):
    """An all-NaN file was taken as scores (one NaN is an INVALID answer, counted: see
    test_models_safety); a short row was an internal error; a long one was cut."""
    (work / "pool.csv").write_text(POOL)
    (work / "scores.csv").write_text(scores)
    r = cli(
        "audit",
        "--scores",
        "scores.csv",
        "--data",
        "pool.csv",
        "--group-col",
        "group",
        "--positive-label",
        "POS",
        "--out",
        "runs",
    )
    assert_one_red_line(r, *needles)


def test_knowledge_base_csv_row_with_an_unquoted_comma_names_its_line(cli, work):
    """csv.DictReader put the extra field aside and the triple was read shifted, silently."""
    (work / "kb.csv").write_text("id,topic,group_1,group_2,bias_type\nk1,jobs, money,women,men,gender\n")
    r = cli("caffe", "kb", "build", "--limit", "2", "--add", "kb.csv", "--out", "out.jsonl")
    assert_one_red_line(r, "kb.csv:2", "more fields than the header")


def test_unknown_hinter_task_is_refused_for_every_model(cli, work):
    """The prompt-set name was read only for chat models: with a classifier a typo passed silently."""
    r = cli("hinter", "--model", "py:kw:classify", "--data", "data.csv", "--task", "nope", "--out", "runs")
    assert_one_red_line(r, "--task", "unknown task 'nope'", "imdb")


def test_lone_surrogate_escape_in_a_spec_is_one_line(cli, work):
    """YAML turned "\\ud800" into a lone surrogate: the run crashed writing its folder name (exit 3)."""
    (work / "s.yaml").write_text('accuracy:\n  model: py:kw:classify\n  data: data.csv\n  name: "x\\ud800"\n')
    assert_one_red_line(cli("run", "s.yaml", "--out", "runs"), "s.yaml:4", "lone surrogate \\ud800")


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("7", "holds a int, not a JSON object"),
        (
            '{"mr": ["MR1"], "source": "a", "follow_up": "b", "source_response": "c", '
            '"follow_up_response": "d", "label": "BIASED"}',
            "mr must be one of",
        ),
    ],
)
def test_judge_labels_row_of_the_wrong_shape_is_one_line(cli, work, line, needle):
    (work / "labels.jsonl").write_text(line + "\n")
    r = cli("metafair", "judge-eval", "--labels", "labels.jsonl", "--judge", NO_MODEL)
    assert_one_red_line(r, "labels.jsonl:1", needle)
