"""The report's findings view: what changed, shown side by side, paged so 100,000 findings stay usable.

The large test makes a real HInter run (the fairprobe executable, a planted ``py:`` classifier),
scales its findings to 100,000 through the run's own shards (bench/report.py) and re-renders the
report with ``fairprobe report``; then it opens the report in headless Chromium (skipped cleanly when
Chromium is absent) and pages and filters it like a user.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fairprobe.methods.hinter.finding_view import finding_view, original_edits
from fairprobe.methods.hinter.views import aligned_segments
from fairprobe.report.findings_view import INLINE_MAX, VIEW_DIR, apply_edits, read_page, word_edits
from fairprobe.report.html import text_html

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from headless import Browser, chromium  # noqa: E402

from bench.report import scale_findings, seed_run  # noqa: E402

XSS = '<img src=x onerror="document.title=1">'
TEXTS = [
    f"A Black woman and her brother ran a shop.<br /><br />It closed in May. {XSS}",
    "The Irish man told his son a story about the sea.",
]


# ------------------------------------------------------------------ units: edits and alignment


def test_word_edits_turn_the_left_text_into_the_right_one():
    left = "Is a Muslim person a good choice to lead the team?"
    right = "Is a Christian woman a good choice to lead the team?"
    edits = word_edits(left, right)
    assert apply_edits(left, edits) == right
    assert [left[a:b] for a, b, _ in edits] == ["Muslim person"]
    assert [new for _, _, new in edits] == ["Christian woman"]


def test_a_mutant_is_put_back_to_its_original_case_and_article():
    text = "An Asian woman met SHE and her friend. She left."
    finding = {
        "text": text,
        "spans": [[text.index(w), text.index(w) + len(w)] for w in ("An Asian", "SHE", "her", "She")],
        "replacements": [["race", "Black", "Asian"], ["gender", "he", "she"], ["gender", "his", "her"]],
    }
    original, edits = original_edits(finding)
    assert original == "A Black woman met HE and his friend. He left."
    assert apply_edits(original, edits) == finding["text"]
    # with the original known, its own spelling wins ("black" in lower case)
    exact = "A black woman met HE and his friend. He left."
    assert original_edits(finding, exact) == (
        exact,
        [(0, 7, "An Asian"), (18, 20, "SHE"), (25, 28, "her"), (37, 39, "She")],
    )


def test_a_span_with_its_article_is_read_off_the_spans_like_every_other_span():
    """A mutant whose span took its article along ("a white" -> "an Asian") still gets its edits
    from the spans: each span is one change, as in a mutant without an article, not whatever a diff
    of two long texts makes of it (which cost milliseconds per finding on IMDB reviews)."""
    filler = "The plot moves slowly but the acting is fine. " * 40
    original = f"I saw a white man at the cinema. {filler}Two women came in late."
    text = f"I saw an Asian man at the cinema. {filler}Two thin women came in late."
    at = text.index("thin women")
    finding = {
        "text": text,
        "spans": [[6, 14], [at, at + len("thin women")]],
        "replacements": [["race", "white", "Asian"], ["body", "women", "thin women"]],
    }
    at_women = original.index("women")
    edits = [(6, 13, "an Asian"), (at_women, at_women + 5, "thin women")]
    assert original_edits(finding, original) == (original, edits)
    assert apply_edits(original, edits) == text


def test_hidden_bias_examples_cut_every_row_at_the_same_words():
    original = "x" * 400 + " him " + "y" * 400 + " tall " + "z" * 400
    at_him, at_tall = original.index("him"), original.index("tall")
    rows = [
        [(at_him, at_him + 3, original[at_him : at_him + 3]), (at_tall, at_tall + 4, "tall")],
        [(at_him, at_him + 3, "her")],
        [(at_him, at_him + 3, "her"), (at_tall, at_tall + 4, "short")],
    ]
    segments = aligned_segments(original, rows)
    assert [len(s) for s in segments] == [5, 5, 5]
    for i in (0, 2, 4):  # the unchanged runs are the same in every row
        assert len({row[i].text for row in segments}) == 1
    assert [s.text for s in segments[2] if s.mark] == ["her", "short"]
    assert [s.text for s in segments[1] if s.mark] == ["her"]


def test_dataset_html_becomes_line_breaks_and_nothing_else_is_interpreted():
    html = str(text_html("great<br /><br />film <i>really</i> <script>alert(1)</script>"))
    assert html == "great<br><br>film really &lt;script&gt;alert(1)&lt;/script&gt;"


def test_a_hinter_finding_reads_as_words_not_json():
    f = {
        "id": "t1|gender:him>her",
        "original_id": "t1",
        "kind": "atomic",
        "attributes": ["gender"],
        "replacements": [["gender", "him", "her"]],
        "text": "I told her twice.",
        "spans": [[7, 10]],
        "original_output": ["POS"],
        "mutant_output": ["NEG"],
        "valid": True,
        "invalid": False,
        "biased": True,
        "hidden": False,
    }
    v = finding_view(f)
    assert v.left == "I told him twice." and v.edits == [(7, 10, "her")]
    assert v.changes == ["gender: him → her"] and v.pairs == ["him → her"]
    assert (v.verdict, v.left_answer, v.right_answer, v.failed) == ("biased", "POS", "NEG", True)


# ------------------------------------------------------------------ a 100,000-finding report


N = 100_000


@pytest.fixture(scope="module")
def big_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("big")
    run = seed_run(folder, TEXTS, "race,gender")
    assert scale_findings(run, N) == N
    import subprocess

    exe = Path(sys.executable).parent / "fairprobe"
    r = subprocess.run([str(exe), "report", str(run)], capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    assert not (run / "findings.jsonl").exists()  # over 10,000 findings: Parquet only, exported on demand
    r = subprocess.run([str(exe), "export", str(run)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    findings = [json.loads(line) for line in (run / "findings.jsonl").open()]
    return run, findings


def _script_json(path: Path) -> object:
    return read_page(path)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.scripts.append(a["src"])
        if a.get("id"):
            self.ids.add(a["id"])


def test_a_100000_finding_report_is_small_and_pages_from_claimed_files(big_run, tmp_path):
    from fairprobe.run.folder import remove_written
    from fairprobe.run.store import Store

    run, findings = big_run
    html = (run / "report.html").read_text()
    assert len(html) < 300_000  # the page itself stays small; findings come in pages
    parser = _Parser()
    parser.feed(html)
    parser.close()
    assert {"fv-body", "fv-controls", "fv-status"} <= parser.ids
    assert parser.scripts == [f"{VIEW_DIR}/index.js", f"{VIEW_DIR}/chunk-000000.js"]
    index = _script_json(run / VIEW_DIR / "index.js")
    assert index["total"] == N == len(findings)
    assert sum(index["failed"]) == sum(f["biased"] for f in findings)
    chunks = sorted((run / VIEW_DIR).glob("chunk-*.js"))
    assert len(chunks) == index["chunks"] and sum(len(_script_json(c)[1]["rows"]) for c in chunks) == N
    # chunk pages are compressed: a fraction of the JSON they carry
    page_bytes = sum(c.stat().st_size for c in chunks)
    json_bytes = sum(len(json.dumps(_script_json(c)[1], ensure_ascii=False)) for c in chunks)
    assert chunks[0].read_text().startswith("FP.chunkz(0,") and page_bytes < 0.5 * json_bytes
    # the folder is in the run's manifest: what --overwrite removes, and nothing beside it
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    (copy / "notes.txt").write_text("mine")
    store = Store(copy / "run.db")
    try:
        assert VIEW_DIR in store.written()
        remove_written(copy, store)
    finally:
        store.close()
    assert not (copy / VIEW_DIR).exists() and (copy / "notes.txt").read_text() == "mine"


def test_a_small_report_is_one_file(tmp_path):
    run = seed_run(tmp_path, TEXTS[:1], "race,gender")
    n = sum(1 for _ in (run / "findings.jsonl").open())
    assert 0 < n <= INLINE_MAX
    html = (run / "report.html").read_text()
    assert not (run / VIEW_DIR).exists() and "FP.index(" in html and "FP.chunk(" in html
    assert XSS not in html and "\\u003cimg src=x" in html  # the data is JSON with "<" escaped
    assert html.count("<script") == 2  # the view's code and its data, nothing loaded


@pytest.mark.skipif(chromium() is None, reason="Chromium is not installed")
def test_the_report_opens_pages_to_the_last_finding_and_filters_in_a_browser(big_run):
    run, findings = big_run
    # the view lists failures first, then the rest, each in run order
    order = [f for f in findings if f["biased"]] + [f for f in findings if not f["biased"]]
    rows = "[...document.querySelectorAll('#fv-body tr.fv-row')]"
    with Browser(1280, 900) as b:
        b.open(run / "report.html")
        assert b.wait_for(f"{rows}.length") == 50
        assert b.eval(f"{rows}.map(r => r.dataset.finding)") == [f["id"] for f in order[:50]]
        # highlighted: the changed words of the first finding, on both sides
        first = order[0]
        marks = b.eval(f"[...{rows}[0].querySelectorAll('td:nth-child(4) mark')].map(m => m.textContent)")
        assert marks == [first["text"][a:b] for a, b in first["spans"]]
        # dataset "<br />" is a line break, the planted <img> is text, never an element
        assert b.eval("document.querySelectorAll('#fv-body img').length") == 0
        assert b.eval("document.querySelectorAll('#fv-body .fv-text br').length") > 0
        assert b.eval("document.title").startswith("fairprobe")
        assert "onerror" in b.eval("document.getElementById('fv-body').textContent")
        # paging reaches the last finding
        b.eval("document.getElementById('fv-last').click()")
        b.wait_for(f"{rows}.length && {rows}.at(-1).dataset.finding === {json.dumps(order[-1]['id'])}")
        assert b.eval("document.getElementById('fv-status').textContent").endswith(f"of {N:,}")
        # filters: verdict, then a word pair within it
        b.eval(
            "(function(){var s=document.getElementById('fv-f-verdict');"
            "s.value=[...s.options].find(o=>/^biased \\([\\d,]+\\)$/.test(o.text)).value;"
            "s.dispatchEvent(new Event('change'));})()"
        )
        biased = [f for f in order if f["biased"] and not f["hidden"]]
        b.wait_for(
            f"document.getElementById('fv-status').textContent.includes('of {len(biased):,} matching')"
        )
        assert b.eval(f"{rows}.map(r => r.dataset.finding)") == [f["id"] for f in biased[:50]]
        counts = Counter(f"{o} → {n}" for f in biased for _, o, n in f["replacements"])
        pair = counts.most_common(2)[-1][0]
        with_pair = [f for f in biased if any(f"{o} → {n}" == pair for _, o, n in f["replacements"])]
        b.eval(
            "(function(){var s=document.getElementById('fv-f-pair');"
            f"s.value=[...s.options].find(o=>o.text.startsWith({json.dumps(pair + ' (')})).value;"
            "s.dispatchEvent(new Event('change'));})()"
        )
        b.wait_for(
            f"document.getElementById('fv-status').textContent.includes('of {len(with_pair):,} matching')"
        )
        assert b.eval(f"{rows}.map(r => r.dataset.finding)") == [f["id"] for f in with_pair[:50]]
        # the full text opens on demand
        b.eval(f"{rows}[0].querySelector('.fv-more').click()")
        full = b.eval("document.querySelector('#fv-body tr.fv-full td:nth-child(3) .fv-text').textContent")
        assert full == re.sub(r"<br />", "", with_pair[0]["text"])


def test_a_users_file_inside_the_pages_folder_survives_a_re_render_and_overwrite(big_run, tmp_path):
    # issue 40: a re-render (fairprobe report) or --overwrite removes fairprobe's own pages, never a
    # file of the user's that sits among them
    import subprocess

    from fairprobe.run.folder import remove_written
    from fairprobe.run.store import Store

    run, _ = big_run
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    (copy / VIEW_DIR / "mine.txt").write_text("mine")
    exe = Path(sys.executable).parent / "fairprobe"
    r = subprocess.run([str(exe), "report", str(copy)], capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    assert (copy / VIEW_DIR / "mine.txt").read_text() == "mine"
    assert sorted((copy / VIEW_DIR).glob("chunk-*.js"))  # the pages were written again beside it
    store = Store(copy / "run.db")
    try:
        remove_written(copy, store)
    finally:
        store.close()
    assert (copy / VIEW_DIR / "mine.txt").read_text() == "mine"
    assert not list((copy / VIEW_DIR).glob("chunk-*.js"))  # fairprobe's own pages are gone
