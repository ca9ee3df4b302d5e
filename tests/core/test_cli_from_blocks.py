"""One declaration per option: every technique's command-line options, ``fairprobe init``'s spec, the
option tables of the documentation (``docs/options.md``) and the Python API are generated from the
technique's spec block."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
import typer
import yaml
from pydantic import Field
from pydantic_core import PydanticUndefined
from typer.testing import CliRunner

from fairprobe.cli.build import default_text, default_value, option_name, own_fields, technique_command
from fairprobe.cli.docs import BEGIN, END, example_values, spec_template
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.technique.registry import Technique, techniques

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "fairprobe"

COMMANDS = {
    "hinter": ["hinter"],
    "metafair": ["metafair"],
    "caffe": ["caffe"],
    "certify": ["certify", "verify"],
    "audit": ["audit"],
}
"""The command generated from each technique's whole block."""


@pytest.fixture
def wide_cli(request, monkeypatch):
    """The real executable, with help rendered wide enough that no option row wraps its default."""
    monkeypatch.setenv("TERMINAL_WIDTH", "1000")
    monkeypatch.setenv("COLUMNS", "1000")
    return request.getfixturevalue("cli")


def help_rows(text: str) -> dict[str, str]:
    """``--option`` -> its row's text (continuation lines joined) from a rich ``--help`` table."""
    rows: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        cells = line.strip("│ \n")
        match = re.match(r"(\*\s+)?(--[a-z0-9-]+)", cells)
        if match:
            current = match.group(2)
            rows[current] = cells
        elif current and line.startswith("│"):
            rows[current] += " " + cells
    return rows


def readme_rows(name: str) -> dict[str, list[str]]:
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    table = text[text.index(BEGIN) : text.index(END)]
    section = table.split(f"### {name}\n", 1)[1].split("###", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 4 and cells[1].startswith("`"):
            rows[cells[1].strip("`")] = cells
    return rows


def init_values(text: str, name: str) -> dict[str, object]:
    """The block ``name`` of an ``init`` spec, every commented-out line read back as YAML."""
    block = text.split(f"# --- {name}:", 1)[1].split("\n# --- ", 1)[0]
    values = {}
    for line in block.splitlines()[1:]:
        line = re.sub(r"^# ", "", line)  # inactive blocks
        match = re.match(r"^  (?:# )?([a-z_0-9]+):(.*?)(?:\s+# .*)?$", line)
        if match and match.group(1) != "thresholds":
            values[match.group(1)] = (
                yaml.safe_load(match.group(2)) if match.group(2).strip() else PydanticUndefined
            )
    return values


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_block_field_is_in_help_init_and_readme_with_one_default(wide_cli, tmp_path, name):
    tech = techniques()[name]
    r = wide_cli(*COMMANDS[name], "--help")
    assert r.returncode == 0, r.stderr
    rows = help_rows(r.stdout)
    assert wide_cli("init", "spec.yaml").returncode == 0
    spec = init_values((tmp_path / "spec.yaml").read_text(encoding="utf-8"), name)
    readme = readme_rows(name)
    example = example_values(tech)
    for field, info in own_fields(tech.block).items():
        option = option_name(tech.block, field)
        shown = default_text(info)
        assert option in rows, f"{name}: {option} missing from --help"
        if info.is_required():
            assert "[required]" in rows[option], rows[option]
        elif shown is not None:
            assert f"[default: {shown}]" in rows[option], rows[option]
        assert field in spec, f"{name}: {field} missing from init"
        if field not in example:
            expected = default_value(info)
            assert spec[field] == (list(expected) if isinstance(expected, tuple) else expected), field
        cells = readme[field]
        assert cells[0] == f"`{option}`"
        assert cells[2] == ("required" if info.is_required() else f"`{shown}`" if shown is not None else "")


def test_readme_option_table_is_current():
    """``scripts/options_table.py --check``: the option tables in ``docs/options.md`` are what the blocks
    say now."""
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "options_table.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr


class ProbeBlock(HInterBlock):
    """HInter with one more field: nothing else is edited for it to reach every surface."""

    probe_depth: int = Field(default=7, ge=1, description="how deep the probe goes")


@pytest.fixture
def probe_technique(monkeypatch):
    base = techniques()["hinter"]
    tech = Technique(
        name="probe",
        summary="a test technique",
        block=ProbeBlock,
        execute=base.execute,
        analyse=base.analyse,
        model_uri=base.model_uri,
        example="model: embedded:imdb-sentiment\n",
        cli=lambda app: technique_command(app, "probe", ProbeBlock),
    )
    monkeypatch.setitem(techniques(), "probe", tech)
    return tech


def test_a_new_block_field_reaches_cli_init_api_and_spec(probe_technique, tmp_path):
    from fairprobe.api import technique_function
    from fairprobe.errors import SpecError, UsageError
    from fairprobe.technique.spec import parse_spec

    app = typer.Typer()
    app.command("noop")(lambda: None)
    probe_technique.cli(app)
    runner = CliRunner()
    shown = runner.invoke(app, ["probe", "--help"], env={"TERMINAL_WIDTH": "1000"})
    row = help_rows(shown.output)["--probe-depth"]
    assert "how deep the probe goes" in row and "[default: 7]" in row and "x>=1" in row
    bad = runner.invoke(
        app, ["probe", "--model", "py:m:f", "--probe-depth", "0", "--out", str(tmp_path / "r")]
    )
    assert isinstance(bad.exception, UsageError) and str(bad.exception).startswith("--probe-depth:")
    assert not (tmp_path / "r").exists()

    assert init_values(spec_template("s.yaml", techniques()), "probe")["probe_depth"] == 7
    assert inspect.signature(technique_function("probe")).parameters["probe_depth"].default == 7
    (block,) = parse_spec("probe:\n  model: py:m:f\n  probe_depth: 3\n", "s.yaml")
    assert block.block.probe_depth == 3
    with pytest.raises(SpecError, match="probe_depth"):
        parse_spec("probe:\n  model: py:m:f\n  probe_depth: 0\n", "s.yaml")


def order_error(cli, *attributes: str) -> str:
    """The one-line error of an HInter order that needs more attributes than given: it says how many
    attributes the command line produced (no model is loaded)."""
    r = cli("hinter", "--model", "embedded:imdb-sentiment", "--order", "4", *attributes, "--out", "run")
    assert r.returncode == 2, r.stderr
    return r.stderr.strip().splitlines()[-1]


def test_list_options_take_repeated_flags_and_comma_lists_alike(cli):
    comma = order_error(cli, "--attributes", "race,gender,body")
    repeated = order_error(cli, "--attributes", "race", "--attributes", "gender", "--attributes", "body")
    mixed = order_error(cli, "--attributes", "race,gender", "--attributes", "body")
    assert comma == repeated == mixed and "got 3" in comma
    for judges in (
        ["--judges", "py-chat:a:b,py-chat:c:d"],
        ["--judges", "py-chat:a:b", "--judges", "py-chat:c:d"],
    ):
        r = cli("metafair", "run", "--model", "py-chat:x:y", *judges, "--out", "run")
        assert r.returncode == 2 and "odd number of judges" in r.stderr and "got 2" in r.stderr, r.stderr


def test_booleans_are_x_and_no_x_without_a_bool_metavar(wide_cli):
    rows = help_rows(wide_cli("hinter", "--help").stdout)
    for field in ("invariant", "person_adjectives", "score_discarded"):
        option = option_name(HInterBlock, field)
        assert f"--no-{option[2:]}" in rows[option] and "<bool>" not in rows[option]
    rows = help_rows(wide_cli("certify", "verify", "--help").stdout)
    assert "--no-baseline" in rows["--baseline"]
    text = wide_cli("hinter", "--help").stdout
    assert "fairprobe[ray]" in text  # help text is not read as console markup
    # no flag anywhere shows a value type: --help, --version, --allow-empty, --no-default-gates
    for args in (["--help"], ["hinter", "--help"], ["metafair", "generate", "--help"]):
        assert "<bool>" not in wide_cli(*args).stdout, args


def test_no_invariant_and_no_person_adjectives_reach_the_run(cli, tmp_path):
    r = cli("hinter", "--model", "embedded:imdb-sentiment", "--limit", "1", "--order", "1",
            "--attributes", "gender", "--no-invariant", "--no-person-adjectives", "--out", "run")  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    spec = yaml.safe_load((tmp_path / "run" / "spec.yaml").read_text())
    block = spec.get("hinter", spec)
    assert block["invariant"] is False and block["person_adjectives"] is False


@pytest.mark.parametrize(
    ("args", "deprecated", "needle"),
    [
        (["caffe", "generate", "--case", "c.yaml", "--cap", "0"], "--cap is deprecated; use --max-pairs-per-triple", "--cap: "),
        (["certify", "verify", "--model", "py:m:f", "--cap", "1", "--out", "r"], "--cap is deprecated; use --max-zonotope-generators", "--cap: "),
        (["certify", "verify", "--model", "py:m:f", "--limit", "0", "--out", "r"], "--limit is deprecated; use --n", "--limit: "),
        (["metafair", "run", "--model", "py:m:f", "--judge", "py-chat:a:b,py-chat:c:d", "--out", "r"], "--judge is deprecated; use --judges", "odd number"),
        (["metafair", "generate", "--generator", "g", "--retries", "-1"], "--retries is deprecated; use --generator-retries", "--retries: "),
        (["metafair", "generate", "--generator", "g", "--out", "adir"], "--out is deprecated; use --output", "--out adir is a directory"),
        (["lexicon", "extract", "x.csv", "--out", "adir"], "--out is deprecated; use --output", "--out adir is a directory"),
        (["caffe", "kb", "build", "--out", "adir"], "--out is deprecated; use --output", "--out adir is a directory"),
        (["certify", "train", "--task", "toxicity", "--out", "afile"], "--out is deprecated; use --model-out", "--out afile"),
    ],
)  # fmt: skip
def test_old_option_names_still_work_with_one_deprecation_line(cli, tmp_path, args, deprecated, needle):
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    r = cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.count("deprecated") == 1 and deprecated in r.stderr, r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and needle in errors[0], r.stderr


def test_all_adjectives_is_an_alias_of_no_person_adjectives(cli, tmp_path):
    r = cli("hinter", "--model", "embedded:imdb-sentiment", "--limit", "1", "--order", "1",
            "--attributes", "gender", "--all-adjectives", "--out", "run")  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    assert "--all-adjectives is deprecated; use --no-person-adjectives" in r.stderr
    spec = yaml.safe_load((tmp_path / "run" / "spec.yaml").read_text())
    assert spec.get("hinter", spec)["person_adjectives"] is False


def test_fail_on_help_shows_the_techniques_own_metric(wide_cli):
    for name, command in COMMANDS.items():
        example = techniques()[name].block.example_metric
        row = help_rows(wide_cli(*command, "--help").stdout)["--fail-on"]
        assert example in row, (name, row)


def _typer_options(tree: ast.AST) -> list[tuple[str, list[str]]]:
    """(parameter name, option strings) of every parameter annotated with ``typer.Option(...)``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in [*node.args.args, *node.args.kwonlyargs]:
                for call in ast.walk(arg.annotation) if arg.annotation else []:
                    if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "Option":
                        names = [
                            a.value
                            for a in call.args
                            if isinstance(a, ast.Constant) and isinstance(a.value, str)
                        ]
                        found.append((arg.arg, names))
    return found


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_technique_cli_module_restates_a_block_field(name):
    block = techniques()[name].block
    fields = own_fields(block)
    options = {option_name(block, f) for f in fields} | {"--" + f.replace("_", "-") for f in fields}
    source = (SRC / "methods" / name / "cli.py").read_text(encoding="utf-8")
    for param, names in _typer_options(ast.parse(source)):
        assert param not in fields, f"methods/{name}/cli.py declares an option for block field {param!r}"
        flags = {n for decl in names for n in decl.split("/")}
        assert not flags & options, f"methods/{name}/cli.py restates {flags & options}"


def test_each_init_example_is_a_runnable_block_of_its_technique(tmp_path):
    """``Technique.example`` holds only the values a block needs to run; it parses on its own, and the
    whole ``init`` spec (first block active) parses too."""
    from fairprobe.technique.spec import parse_spec

    for name, tech in techniques().items():
        (block,) = parse_spec(tech.example, f"{name} example", {name: tech.block})
        assert block.name == name
    blocks = parse_spec(spec_template("s.yaml", techniques()), "s.yaml")
    assert [b.name for b in blocks] == [next(iter(techniques()))]


@pytest.mark.parametrize("name", [n for n, t in techniques().items() if t.default_gates])
def test_init_writes_each_techniques_default_gates_and_nothing_that_switches_them_off(name):
    """Uncommenting a block of ``init``'s spec gives a run judged by the technique's default gates:
    the spec has no top-level ``thresholds`` (any list there, even ``[]``, replaces every block's
    gates) and the block lists exactly the default gates."""
    from fairprobe.technique.spec import parse_spec

    text = spec_template("s.yaml", techniques())
    top = yaml.safe_load(text)
    assert "thresholds" not in top
    lines = text.splitlines()
    start = lines.index(f"# {name}:")
    block = []
    for line in lines[start:]:
        if not line.strip():
            break
        block.append(line[2:])
    (spec,) = parse_spec("\n".join(block), "s.yaml")
    from fairprobe.judge.thresholds import parse_thresholds

    assert spec.thresholds == parse_thresholds(list(techniques()[name].default_gates), "gates")
    assert spec.default_gates is False  # the block's list is the gates themselves
