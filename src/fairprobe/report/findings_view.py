"""The report's findings view: every finding as "what changed" — two texts side by side, the changed
words highlighted, both answers and the verdict — paged so a run of 100,000 findings stays usable.

A technique describes one finding with :class:`FindingView` (``Analysis.finding_view``): a left text,
the edits that turn it into the right text (``(start, end, new)`` in left-text offsets), the two
answers, the verdict and the facets the report filters on. The writer stores texts once per chunk and
only the edits per finding, so the right text is rebuilt in the browser.

Layout in the run folder (paged mode, above :data:`INLINE_MAX` findings):
``report-findings/index.js`` (verdicts, facets and one code per finding, for filtering without
loading texts) and ``report-findings/chunk-NNNNNN.js`` (:data:`CHUNK` findings each, loaded when a
page needs them). They are JavaScript files loaded by ``<script>`` elements because browsers refuse
``fetch()`` of local files (``file://``). Small runs are written inline in report.html, so the
report stays one file. All data is JSON; the page assigns text with ``textContent`` only.

Chunk files hold their JSON gzip-compressed and base64-encoded (``FP.chunkz(k, "...")``), which the
browser inflates with ``DecompressionStream``: a million-finding run's view is a quarter of the
plain JSON's size (46 MB → about 12 MB), so the whole run folder stays near 100 MB. The index
stays plain JSON (the page filters on it before any chunk is needed). :func:`read_page` decodes
either form.
"""

from __future__ import annotations

import base64
import difflib
import gzip
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairprobe.report.writers import atomic_write

VIEW_DIR = "report-findings"
"""Sibling folder of report.html that holds the paged findings (claimed in the run's manifest)."""

CHUNK = 500
"""Findings per data file: a page of the view loads only the files its findings are in."""

INLINE_MAX = 2000
"""Up to this many findings the data is written into report.html itself (one self-contained file)."""

Edit = tuple[int, int, str]


@dataclass
class FindingView:
    """One finding as the report shows it.

    ``edits`` turn ``left`` into the right-hand text; an empty list with ``right_label`` empty shows a
    single text (e.g. a certified sentence). ``changes`` are readable labels ("gender: him → her");
    ``pairs`` the word pairs a user filters on ("him → her"); ``notes`` extra (name, value) lines
    shown when a finding is expanded."""

    id: str
    verdict: str
    failed: bool
    left: str
    edits: list[Edit] = field(default_factory=list)
    left_label: str = "original"
    right_label: str = "changed"
    left_answer: str = ""
    right_answer: str = ""
    changes: list[str] = field(default_factory=list)
    attribute: str = ""
    pairs: list[str] = field(default_factory=list)
    group: str = ""
    notes: list[tuple[str, str]] = field(default_factory=list)


ViewFn = Callable[[dict[str, Any]], FindingView]

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def word_edits(left: str, right: str) -> list[Edit]:
    """Word-level edits that turn ``left`` into ``right`` (for techniques whose findings carry two texts
    but no spans: Meta-Fair's source and follow-up, CAFFE's two prompts; an original beside its
    mutant). The common head and tail are cut first, so two long texts that differ in a few words
    cost little."""
    head = 0
    limit = min(len(left), len(right))
    while head < limit and left[head] == right[head]:
        head += 1
    tail = 0
    while tail < limit - head and left[-1 - tail] == right[-1 - tail]:
        tail += 1
    # widen to word boundaries so a changed word is one edit, not its differing letters
    m = re.search(r"\w*$", left[:head])
    head -= len(m.group(0)) if m else 0
    m = re.match(r"\w*", left[len(left) - tail :])
    tail -= len(m.group(0)) if m else 0
    a = _TOKEN.findall(left[head : len(left) - tail])
    b = _TOKEN.findall(right[head : len(right) - tail])
    a_at = [head]
    for t in a:
        a_at.append(a_at[-1] + len(t))
    edits: list[Edit] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        start, end, new = a_at[i1], a_at[i2], "".join(b[j1:j2])
        gap = left[edits[-1][1] : start] if edits else ""
        if edits and not gap.strip():  # "Muslim person" -> "Christian woman" is one change
            edits[-1] = (edits[-1][0], end, edits[-1][2] + gap + new)
        else:
            edits.append((start, end, new))
    return edits


def apply_edits(left: str, edits: list[Edit]) -> str:
    """The right-hand text: ``left`` with each ``(start, end, new)`` edit applied."""
    parts, cursor = [], 0
    for start, end, new in sorted(edits):
        parts.append(left[cursor:start])
        parts.append(new)
        cursor = end
    parts.append(left[cursor:])
    return "".join(parts)


def default_view(failure_field: str | None, columns: list[str]) -> ViewFn:
    """A finding without a technique view: its ``text`` (if any) and its table columns as notes."""

    def view(f: dict[str, Any]) -> FindingView:
        failed = bool(f.get(failure_field)) if failure_field else False
        notes = [(c, _plain(f.get(c))) for c in columns if c not in {"id", "text"} and f.get(c) is not None]
        text = str(f.get("text") or "")
        return FindingView(
            id=str(f.get("id", "")),
            verdict=("fail" if failed else "pass") if failure_field else "",
            failed=failed,
            left=text or " · ".join(f"{k}: {v}" for k, v in notes),
            left_label="text" if text else "details",
            right_label="",
            notes=notes,
        )

    return view


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


class _Codes:
    """Facet values as small integers, in order of first appearance."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._at: dict[str, int] = {}

    def __call__(self, value: str) -> int:
        code = self._at.get(value)
        if code is None:
            code = self._at[value] = len(self.values)
            self.values.append(value)
        return code


def js_data(call: str, data: Any) -> str:
    """``FP.<call>(<json>);`` with the JSON safe inside an inline ``<script>`` too."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"FP.{call}({text});\n"


def js_packed(call: str, key: int, data: Any) -> str:
    """``FP.<call>(key, "<base64 of gzip-compressed JSON>");``: a quarter of :func:`js_data`'s size
    for findings pages. ``mtime=0`` keeps the bytes (and so the page digests) reproducible."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    packed = base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")
    return f'FP.{call}({key},"{packed}");\n'


_PACKED = re.compile(r'FP\.(\w+)\((\d+),"([A-Za-z0-9+/=]*)"\);\s*$')
_PLAIN = re.compile(r"FP\.(\w+)\((.*)\);\s*$", re.DOTALL)


def read_page(path: Path) -> Any:
    """The data of one ``report-findings`` page as the browser sees it: ``index.js``'s dict, or a
    chunk's ``[k, data]`` (compressed or plain). Raises ValueError for a file that is neither."""
    text = path.read_text(encoding="utf-8")
    packed = _PACKED.match(text)
    if packed:
        return [int(packed.group(2)), json.loads(gzip.decompress(base64.b64decode(packed.group(3))))]
    plain = _PLAIN.match(text)
    if plain is None:
        raise ValueError(f"{path} is not a findings page")
    return json.loads(plain.group(2))


def _chunks(views: Iterable[FindingView]) -> Iterator[tuple[list[FindingView], dict[str, Any]]]:
    """Findings in groups of :data:`CHUNK`, each with its data: texts once, the short strings (labels,
    answers, changes, replacement words) once, then rows that refer to them by index — a third
    smaller than rows that spell them out, which matters at 200,000 findings."""
    batch: list[FindingView] = []

    def pack() -> dict[str, Any]:
        texts, strings = _Codes(), _Codes()
        rows = []
        for v in batch:
            rows.append(
                [
                    v.id,
                    texts(v.left),
                    [[a, b, strings(new)] for a, b, new in v.edits],
                    strings(v.left_label),
                    strings(v.right_label),
                    strings(v.left_answer),
                    strings(v.right_answer),
                    [strings(c) for c in v.changes],
                    [list(n) for n in v.notes],
                ]
            )
        return {"texts": texts.values, "strings": strings.values, "rows": rows}

    for v in views:
        batch.append(v)
        if len(batch) == CHUNK:
            yield batch, pack()
            batch = []
    if batch:
        yield batch, pack()


@dataclass
class ViewData:
    """What report.html embeds: inline scripts (small runs) or the sibling files' names (paged)."""

    inline: list[str]
    files: list[str]
    total: int


MANIFEST = "manifest.json"
"""File in ``report-findings/`` that records what the pages were made from (``source``) and a digest
of every page, so a re-render whose findings did not change reuses them (:func:`write_view`)."""

PAGES_FORMAT = 3
"""Version of the page layout; part of every page source digest (bump it when the layout changes;
3: chunks gzip-compressed)."""


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def source_digest(files: Iterable[Path], params: dict[str, Any]) -> str:
    """A digest of the content of ``files`` (the findings' Parquet files, in order) and of ``params``
    (whatever else the pages depend on: the spec, the fairprobe version, the view limits)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps({"format": PAGES_FORMAT, **params}, sort_keys=True, default=str).encode())
    for path in files:
        h.update(path.name.encode() + b"\0")
        with open(path, "rb") as fh:
            h.update(hashlib.file_digest(fh, "blake2b").digest())
    return h.hexdigest()


def _reusable(out_dir: Path, source: str) -> ViewData | None:
    """The pages in ``out_dir`` when its manifest says they were made from ``source`` and every page
    is there, unchanged; else None (a missing, edited or stale page: write them all again)."""
    try:
        manifest = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("source") != source:
            return None
        for name, digest in manifest["pages"].items():
            if _digest((out_dir / name).read_bytes()) != digest:
                return None
        return ViewData(inline=[], files=list(manifest["shown"]), total=int(manifest["total"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_view(
    views: Iterable[FindingView],
    total: int,
    folder: Path | None,
    claim: Callable[[str], Path] | None,
    source: str | None = None,
) -> ViewData:
    """Pack ``views`` (already in display order) as inline scripts, or, when there are more than
    :data:`INLINE_MAX` and ``claim`` names a run-folder file (so ``--overwrite`` removes it), as files
    in ``<folder>/report-findings/``. Only the index and the first chunk are referenced from the HTML;
    the page loads the others on demand.

    ``source`` (:func:`source_digest` of the findings the views come from) lets a re-render reuse the
    pages: when ``report-findings/manifest.json`` records the same source and every page matches its
    recorded digest, ``views`` is not consumed at all (building 200,000 views is most of the cost of
    re-rendering a million-finding report). The manifest is written last, so pages left by a killed
    render are never reused."""
    paged = claim is not None and folder is not None and total > INLINE_MAX
    facets = {name: _Codes() for name in ("verdict", "attribute", "pair", "group")}
    keys: dict[str, list[Any]] = {name: [] for name in facets}
    failed: list[int] = []
    chunk_scripts: list[str] = []
    out_dir: Path | None = None
    pages: dict[str, str] = {}
    if paged:
        out_dir = claim(VIEW_DIR)
        if source is not None and out_dir.is_dir() and not out_dir.is_symlink():
            reused = _reusable(out_dir, source)
            if reused is not None:
                return reused
        if out_dir.is_dir() and not out_dir.is_symlink():
            from fairprobe.report.writers import remove_own_files

            remove_own_files(out_dir)  # an earlier render's pages; a file of yours in it stays
        out_dir.mkdir(parents=True, exist_ok=True)

    def write_page(name: str, script: str) -> None:
        data = script.encode("utf-8")
        (out_dir / name).write_bytes(data)
        pages[name] = _digest(data)

    n_chunks = 0
    for index, (batch, data) in enumerate(_chunks(views)):
        for v in batch:
            keys["verdict"].append(facets["verdict"](v.verdict))
            keys["attribute"].append(facets["attribute"](v.attribute))
            codes = [facets["pair"](p) for p in v.pairs]
            keys["pair"].append(codes[0] if len(codes) == 1 else codes)
            keys["group"].append(facets["group"](v.group))
            failed.append(1 if v.failed else 0)
        if out_dir is not None:
            write_page(f"chunk-{index:06d}.js", js_packed("chunkz", index, data))
        else:
            chunk_scripts.append(js_data("chunk", [index, data]))
        n_chunks += 1
    index_data = {
        "total": len(failed),
        "chunk": CHUNK,
        "chunks": n_chunks,
        "base": f"{VIEW_DIR}/" if paged else "",
        "facets": {k: c.values for k, c in facets.items()},
        "keys": keys,
        "failed": failed,
    }
    index_script = js_data("index", index_data)
    if out_dir is not None:
        write_page("index.js", index_script)
        files = [f"{VIEW_DIR}/index.js"] + ([f"{VIEW_DIR}/chunk-000000.js"] if n_chunks else [])
        manifest = {"source": source, "total": len(failed), "shown": files, "pages": pages}
        atomic_write(out_dir / MANIFEST, json.dumps(manifest, indent=0))
        return ViewData(inline=[], files=files, total=len(failed))
    return ViewData(inline=[index_script, *chunk_scripts], files=[], total=len(failed))
