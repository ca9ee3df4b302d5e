"""`fairprobe compare` in words (issue 43): a fair keyword loan scorer against one that denies any
application that mentions "she", through the real executable. summary.md and the screen name the word
pair that got worse, rates read as percentages, p-values never as 0, the paired counts match the
tables (discarded mutants counted apart), and a large comparison's report is paged like a run's."""

from __future__ import annotations

import json
import re

import pytest
from words_check import metric_words_problems, visible_text

from fairprobe.compare.words import p_value, points, tarone_factor

# Planted classifiers (the pattern of tests/planted_classifiers.py): a keyword loan scorer that denies
# late payers, and the same scorer that also denies every application mentioning "she".
FAIR_LOAN = 'def classify(texts):\n    return ["deny" if "late" in t.lower() else "approve" for t in texts]\n'
SHE_LOAN = (
    "def classify(texts):\n"
    "    out = []\n"
    "    for t in texts:\n"
    '        words = set(t.lower().replace(".", " ").replace(",", " ").split())\n'
    '        out.append("deny" if "late" in t.lower() or "she" in words else "approve")\n'
    "    return out\n"
)
JOBS = ["nurse", "teacher", "pilot", "farmer", "baker", "lawyer", "driver", "chef", "clerk", "painter",
        "plumber", "dentist", "surgeon", "writer", "tailor", "banker", "miner", "singer", "porter", "guard",
        "cook", "judge", "vet", "coach", "actor", "waiter", "barber", "cashier", "mechanic", "librarian"]  # fmt: skip


def _loan_csv(n: int) -> str:
    rows = ["text,label"]
    for i, job in enumerate(JOBS[:n]):
        rows.append(
            f'"He works as a {job} and earns ${40 + i},000 a year. He asks for ${5 + i},000 to buy a car.",approve'
        )
    return "\n".join(rows) + "\n"


def _runs(cli, folder, n: int, *extra: str) -> None:
    (folder / "loan.csv").write_text(_loan_csv(n))
    (folder / "fair.py").write_text(FAIR_LOAN)
    (folder / "she.py").write_text(SHE_LOAN)
    for name in ("fair", "she"):
        r = cli("hinter", "--model", f"py:{name}:classify", "--data", "loan.csv", "--attributes", "gender",
                "--order", "1", *extra, "--out", f"runs/{name}", cwd=folder)  # fmt: skip
        assert r.returncode in (0, 1), r.stdout + r.stderr


def test_the_number_formats_read_as_people_read_them():
    assert p_value(0.0) == "< 0.001" and p_value(0.00049) == "< 0.001"
    assert p_value(0.0042) == "0.004" and p_value(0.5) == "0.50" and p_value(1.0) == "1"
    assert points(0.0312) == "+3.1 points" and points(-0.5) == "-50.0 points" and points(0.0) == "±0 points"
    # Tarone: tests that cannot reach alpha/K do not count; twelve discordant cases can reach 0.05/1.
    assert tarone_factor([2 * 0.5**12, 1.0, 1.0, 1.0]) == 1
    assert tarone_factor([2 * 0.5**12, 2 * 0.5**12, 0.5, 1.0]) == 2
    assert tarone_factor([]) == 1


def test_compare_names_the_word_pair_that_got_worse(cli, tmp_path):
    _runs(cli, tmp_path, 12)
    r = cli("compare", "runs/fair", "runs/she", "--out", "cmp")
    assert r.returncode == 1, r.stdout + r.stderr
    md = (tmp_path / "cmp/summary.md").read_text()
    screen = r.stdout
    # what got worse, by name, with counts and an adjusted p-value that is never "0"
    assert "he→she now changes 12 of 12 answers, was 0 of 12 (adjusted p < 0.001)" in md, md
    assert "he→she now changes 12 of 12 answers" in screen, screen
    assert "1. he→she" in md  # the worst first
    # no metric paths and no fail-condition syntax, on the screen or in the comment
    for text in (md, screen):
        assert "regressed>0" not in text.replace(" ", "") and "delta." not in text and "slices." not in text
        assert not re.search(r"adjusted p 0(?![.\d])", text)
    summary = json.loads((tmp_path / "cmp/summary.json").read_text())
    gender = summary["metrics"]["slices"]["error_rate"]["gender"]
    assert gender["verdict"] == "regressed"
    assert any("got worse on" in reason and "gender" in reason for reason in summary["reasons"])
    # rates as percentages in the table: the gender row reads "0%" → "NN.N%" with a change in points
    row = next(line for line in md.splitlines() if line.startswith("| gender |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "0%" and cells[3] == f"{100 * gender['new']:.1f}".rstrip("0").rstrip(".") + "%"
    assert cells[4].startswith(f"+{100 * gender['delta']:.1f} points")
    rows = [
        line.strip("|").split("|") for line in md.splitlines() if line.startswith("| ") and "---" not in line
    ]
    assert all(c[2].strip().endswith("%") and c[3].strip().endswith("%") for c in rows[1:])  # no fractions
    # paired counts match the tables: the headline's judged count is the "all" slice's n, and the
    # discarded mutants are counted apart, summing to the paired cases
    all_n = summary["metrics"]["slices"]["error_rate"]["all"]["n"]
    m = re.search(
        r"on ([\d,]+) paired test cases judged(?: \(([\d,]+) mutants the dependency invariant)?", md
    )
    assert m, md
    judged, dropped = (int((x or "0").replace(",", "")) for x in m.groups())
    assert judged == all_n and judged + dropped == summary["metrics"]["paired"]
    assert f"| all | {all_n:,} |" in md
    # the report fills "What the run found" and names the pair in its own table
    html = (tmp_path / "cmp/report.html").read_text()
    found = html.split('id="headline"', 1)[1].split("</section>", 1)[0]
    assert "he→she now changes 12 of 12 answers" in found and "what matters" in found
    assert 'id="changed-words"' in html
    # every sentence of the report in words (issue 43): the fail-condition table too, no metric path
    text = visible_text(html)
    assert not metric_words_problems(text), metric_words_problems(text)
    assert "a slice got worse beyond chance (adjusted p < 0.05)" in text and "he→she" in text
    assert "the share of paired cases with an INVALID answer" in text or "INVALID answer from either" in text
    # the counts at the top and "what matters" are the judged cases, discarded ones apart (as the tables)
    assert f"{judged:,} paired test cases judged" in text
    found_rows = dict(re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">([^<]*)</td>", found))
    assert found_rows["paired test cases judged"] == f"{all_n:,}"
    assert found_rows["error rate, new model (all judged cases)"].endswith("%")
    lines = [json.loads(x) for x in (tmp_path / "cmp/findings.jsonl").read_text().splitlines()]
    assert {x["detail"] for x in lines if x["status"] == "became worse"} == {"he→she"}

    # a limit on a change, in words on every output (its figure, its limit, where it came from)
    limit = cli(
        "compare", "runs/fair", "runs/she", "--out", "limit", "--fail-on", "delta.error_rate.* > 0.01"
    )
    assert limit.returncode == 1, limit.stdout + limit.stderr
    html = (tmp_path / "limit/report.html").read_text()
    for text in (visible_text(html), (tmp_path / "limit/summary.md").read_text(), limit.stdout):
        assert not metric_words_problems(text), metric_words_problems(text)
    text = visible_text(html)
    assert "the change of the error rate on any slice is above +1.0 points" in text, text
    assert "--fail-on" in text and "points (the change of the error rate on" in text
    assert "a slice got worse beyond chance (adjusted p < 0.05)" in text and "default" in text
    # any other figure as a condition fails in words too, on the screen and in summary.md
    other = cli("compare", "runs/fair", "runs/she", "--out", "other", "--fail-on", "paired_share > 0.5",
                "--fail-on", "slices.error_rate.gender.new >= 0.5")  # fmt: skip
    assert other.returncode == 1, other.stdout + other.stderr
    assert "the share of test cases found in both runs is above 50% (it is 100%)" in other.stdout
    assert "the new model's error rate on gender is at least 50% (it is 100%)" in other.stdout
    assert not metric_words_problems((tmp_path / "other/summary.md").read_text())

    # a model against itself: nothing got worse, and nothing is named as if it had
    same = cli("compare", "runs/fair", "runs/fair", "--out", "same")
    assert same.returncode == 0, same.stdout + same.stderr
    md = (tmp_path / "same/summary.md").read_text()
    assert "No slice got worse beyond chance" in md and "What got worse" not in md and "Worst" not in md


@pytest.mark.slow
def test_a_large_comparison_pages_its_findings_like_a_run(cli, tmp_path):
    """Over 2,000 paired cases (gender, race, body and age mutants of the 200 bundled IMDB reviews) the findings view is
    paged into report-findings/ as a run's report is, so report.html stays small; a smaller comparison
    into the same folder removes the pages."""
    from fairprobe.report.findings_view import INLINE_MAX, read_page

    (tmp_path / "fair.py").write_text(FAIR_LOAN.replace('"late"', '"bad"'))
    (tmp_path / "she.py").write_text(SHE_LOAN.replace('"late"', '"bad"'))
    for name in ("fair", "she"):
        r = cli("hinter", "--model", f"py:{name}:classify", "--data", "imdb-sample", "--attributes",
                "gender,race,body,age", "--order", "1", "--no-invariant", "--out", f"big/{name}")  # fmt: skip
        assert r.returncode in (0, 1), r.stdout + r.stderr
    r = cli("compare", "big/fair", "big/she", "--out", "cmp")
    assert r.returncode == 1, r.stdout + r.stderr
    summary = json.loads((tmp_path / "cmp/summary.json").read_text())
    assert summary["metrics"]["paired"] > INLINE_MAX
    html = tmp_path / "cmp/report.html"
    pages = tmp_path / "cmp/report-findings"
    index = read_page(pages / "index.js")
    assert index["total"] == summary["metrics"]["paired"]
    assert sum(index["failed"]) == summary["metrics"]["slices"]["error_rate"]["all"]["worse"]
    assert "he→she" in index["facets"]["pair"]
    assert html.stat().st_size < 400_000, html.stat().st_size  # the cases are in the pages, not inline
    assert "report-findings/index.js" in html.read_text()
    assert "he→she now changes" in (tmp_path / "cmp/summary.md").read_text()

    (tmp_path / "small").mkdir()
    _runs(cli, tmp_path / "small", 3, "--no-invariant")
    r = cli("compare", "small/runs/fair", "small/runs/she", "--out", "cmp")
    assert r.returncode == 0, r.stdout + r.stderr  # three texts: he→she 3 of 3 could be chance
    assert not pages.exists()
