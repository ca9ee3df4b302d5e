"""The "From Python" examples run: the API example and the pytest-plugin example, as kept here, as the
README's own ``python`` blocks under "## From Python" (skipped while the README has no such section),
and as the first two ``python`` blocks of the documentation's page ``docs/python.md``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "python.md"

API_EXAMPLE = """\
import fairprobe

run = fairprobe.hinter(
    model="embedded:imdb-sentiment",  # the bundled sentiment classifier
    attributes=["gender", "race"],
    order=1,  # atomic mutants only
    limit=3,  # the first 3 reviews of the bundled IMDB sample
    out="runs/hinter-python",
    fail_on=["error_rate.atomic>0.5"],
)
print(run.verdict, run.reasons, run.report)
print(run.metrics["error_rate"]["atomic"], run.metrics["error_rate"]["atomic_ci"])
table = run.findings_table()  # a pandas DataFrame, one row per mutant
print(table.groupby("kind")["biased"].mean())
assert run.passed, run.reasons
"""

PLUGIN_EXAMPLE = """\
# test_fairness.py: `pip install fairprobe` registers the plugin with pytest
import pytest


def test_sentiment_model_is_fair(fairprobe_run):
    run = fairprobe_run(
        technique="hinter",
        model="embedded:imdb-sentiment",
        attributes=["gender"],
        order=1,
        limit=3,
        fail_on=["error_rate.atomic>0.5"],
    )  # fails the test with the run's reasons unless it passes
    assert run.metrics["error_rate"]["atomic_n"] > 0


@pytest.mark.fairprobe(spec="fairprobe.yaml")  # every block of the spec must pass
def test_spec_passes():
    pass
"""

SPEC = """\
hinter:
  model: embedded:imdb-sentiment
  attributes: [gender]
  order: 1
  limit: 3
  thresholds: ["error_rate.atomic>0.5"]
"""


def readme_blocks() -> list[str]:
    """The ``python`` code blocks of the README's "## From Python" section."""
    if not README.is_file():
        pytest.skip("no README.md beside tests/")
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## From Python\s*$(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    if section is None:
        pytest.skip('README.md has no "## From Python" section yet')
    blocks = re.findall(r"^```python\n(.*?)^```", section.group(1), flags=re.M | re.S)
    assert len(blocks) >= 2, 'the "From Python" section shows the API and the pytest plugin'
    return blocks


def docs_blocks() -> list[str]:
    """The ``python`` code blocks of ``docs/python.md``: the API example first, then the plugin's."""
    text = DOCS_PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)
    assert len(blocks) >= 2, "docs/python.md shows the API and the pytest plugin"
    return blocks


def run_api_example(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAIRPROBE_CACHE", str(tmp_path / "cache.db"))
    exec(compile(code, "README: From Python", "exec"), {"__name__": "__readme__"})
    assert (tmp_path / "runs/hinter-python/report.html").is_file()


def run_plugin_example(code: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRPROBE_CACHE", str(pytester.path / "cache.db"))
    pytester.makepyfile(test_fairness=code)
    (pytester.path / "fairprobe.yaml").write_text(SPEC, encoding="utf-8")
    result = pytester.runpytest("-p", "fairprobe.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_api_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_api_example(API_EXAMPLE, tmp_path, monkeypatch)


def test_plugin_example(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    run_plugin_example(PLUGIN_EXAMPLE, pytester, monkeypatch)


def test_readme_api_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_api_example(readme_blocks()[0], tmp_path, monkeypatch)


def test_readme_plugin_example(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    run_plugin_example(readme_blocks()[1], pytester, monkeypatch)


def test_docs_api_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_api_example(docs_blocks()[0], tmp_path, monkeypatch)


def test_docs_plugin_example(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    run_plugin_example(docs_blocks()[1], pytester, monkeypatch)
