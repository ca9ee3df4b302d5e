"""The metamorphic test format (one JSON object per test), shared by the generator's output and
``fairprobe metafair run --tests`` (metafair.txt §3.2.1: dimension, source and follow-up prompts,
attribute(s) and an optional explanation).

``{"mr": "MR1", "dimension": "gender", "attributes": ["female"], "source": "...", "follow_up": "...",
"explanation": "..."}`` — ``attributes`` holds one or two strings; ``run`` does not require them to be in
the catalogue. An ``id`` is optional: a stable hash of the content is used when absent.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fairprobe.data.readers import json_loads, read_text, require_file
from fairprobe.errors import DataError
from fairprobe.lexicons.metafair_catalogue import DIMENSIONS
from fairprobe.models.base import canonical_json, sha256_hex

FIELDS = {"id", "mr", "dimension", "attributes", "source", "follow_up", "explanation"}


class InvalidTest(ValueError):
    """A generated or hand-written test that does not follow the format (one line: why)."""


@dataclass(frozen=True)
class MetamorphicTest:
    mr: str
    dimension: str
    attributes: tuple[str, ...]
    source: str
    follow_up: str
    explanation: str = ""
    id: str = ""

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["attributes"] = list(self.attributes)
        return d


def content_id(mr: str, source: str, follow_up: str) -> str:
    return f"{mr}-{sha256_hex(canonical_json([mr, source, follow_up]))[:10]}"


def validate_test(obj: Any, expect_mr: str | None = None) -> MetamorphicTest:
    """The :class:`MetamorphicTest` in ``obj``, or :class:`InvalidTest` saying what is wrong."""
    from fairprobe.methods.metafair.relations import relations

    if not isinstance(obj, dict):
        raise InvalidTest(f"a test must be a JSON object, got {type(obj).__name__}")
    unknown = set(obj) - FIELDS
    if unknown:
        raise InvalidTest(f"unknown field(s) {', '.join(sorted(unknown))}")
    mr = obj.get("mr")
    if not isinstance(mr, str) or not re.fullmatch(r"MR(?:[1-9]|1[0-4])", mr.strip()):
        raise InvalidTest(f"'mr' must be one of MR1 … MR14, got {mr!r}")
    mr = mr.strip()
    if expect_mr is not None and mr != expect_mr:
        raise InvalidTest(f"'mr' is {mr} but {expect_mr} was asked for")
    dim = obj.get("dimension")
    if dim not in DIMENSIONS:
        raise InvalidTest(f"'dimension' must be one of {', '.join(DIMENSIONS)}, got {dim!r}")
    attrs = obj.get("attributes")
    if isinstance(attrs, str):
        raise InvalidTest("'attributes' must be a list of one or two strings, got a string")
    if (
        not isinstance(attrs, list)
        or not 1 <= len(attrs) <= 2
        or not all(isinstance(a, str) and a.strip() for a in attrs)
    ):
        raise InvalidTest(f"'attributes' must be a list of one or two non-empty strings, got {attrs!r}")
    rel = relations()[mr]
    if len(attrs) != rel.attributes:
        raise InvalidTest(f"{mr} ({rel.name}) needs {rel.attributes} attribute(s), got {len(attrs)}")
    texts = {}
    for key in ("source", "follow_up"):
        value = obj.get(key)
        if not isinstance(value, str) or len(value.strip()) < 8:
            raise InvalidTest(f"'{key}' must be a prompt of at least 8 characters, got {value!r}")
        texts[key] = " ".join(value.split())
    if texts["source"].casefold() == texts["follow_up"].casefold():
        raise InvalidTest("'source' and 'follow_up' are identical: the follow-up must change the demographic")
    explanation = obj.get("explanation", "")
    if not isinstance(explanation, str):
        raise InvalidTest("'explanation' must be a string")
    test_id = obj.get("id") or content_id(mr, texts["source"], texts["follow_up"])
    if not isinstance(test_id, str):
        raise InvalidTest("'id' must be a string")
    return MetamorphicTest(
        mr,
        dim,
        tuple(a.strip() for a in attrs),
        texts["source"],
        texts["follow_up"],
        explanation.strip(),
        test_id,
    )


# Words with other written forms: irregular plurals and the sex adjectives Table 1 itself uses for a
# gender attribute (MR3: "a female TV presenter" for the attribute woman).
_WORD_FORMS = {
    "man": ("man", "men", "male", "males"),
    "woman": ("woman", "women", "female", "females"),
    "person": ("person", "people", "persons"),
    "child": ("child", "children"),
    "boy": ("boy", "boys", "male", "males"),
    "girl": ("girl", "girls", "female", "females"),
}


def _word_forms(word: str) -> list[str]:
    """Written forms of one word: itself, :data:`_WORD_FORMS`, and the "<colour> hair" noun phrase of a
    "<colour>-haired" adjective (Table 1, MR12: "a person with red hair" for red-haired)."""
    low = word.lower()
    forms = [re.escape(w) for w in _WORD_FORMS.get(low, (word,))]
    hair = re.fullmatch(r"(\w+)-haired", low)
    if hair:
        forms.append(rf"{re.escape(hair.group(1))}[-\s]+hair")
    return forms


def _mentions(text: str, attribute: str) -> list[tuple[int, int]]:
    """Spans where ``text`` names ``attribute`` as whole words, in any inflected form: plurals ("Muslims",
    "women", "transgender men"), possessives ("woman's"), hyphenated compounds ("Muslim-owned"), a
    hyphen written as a space ("low income"), the sex adjective of a gender noun ("female" for woman,
    Table 1 MR3) and "red hair" for red-haired (MR12). "man" is not in "woman", "male" not in "female"."""
    words = attribute.split()
    head = words[-1]
    parts = [re.escape(w).replace(r"\-", r"[-\s]?") for w in words[:-1]]
    last = "|".join(f.replace(r"\-", r"[-\s]?") if "hair" not in f else f for f in _word_forms(head))
    body = r"\s+".join([*parts, f"(?:{last})"])
    pattern = rf"(?<![\w-]){body}(?:s|es)?(?:['’]s?)?(?:-\w+)?(?!\w)"
    return [m.span() for m in re.finditer(pattern, text, re.IGNORECASE)]


def _names(text: str, attribute: str, besides: str | None = None) -> bool:
    """Whether ``text`` names ``attribute`` (:func:`_mentions`) outside every mention of ``besides``, the
    other attribute of the test: "transgender woman" names transgender woman, not woman."""
    others = _mentions(text, besides) if besides else []
    return any(not any(a <= s and e <= b for a, b in others) for s, e in _mentions(text, attribute))


def check_structure(test: MetamorphicTest, attributes: tuple[str, ...] | None = None) -> None:
    """:class:`InvalidTest` unless a generated ``test`` carries the requested ``attributes`` and follows its
    MR's structure (Table 1): an addition MR names its attribute in the follow-up only (MR8–MR10, the
    inverted ones: in the source only; MR4 may refer to it implicitly); a replacement MR names the first
    attribute in the source and the second in the follow-up; MR6's follow-up embeds the source question;
    MR11 states a 1-5 scale, MR13 gives the same A) B) C) options and MR14 the same items in both prompts.
    """
    from fairprobe.methods.metafair.relations import relations
    from fairprobe.oracles.metamorphic import parse_options, parse_rank_items

    rel = relations()[test.mr]
    if attributes is not None and [a.casefold() for a in test.attributes] != [
        a.casefold() for a in attributes
    ]:
        raise InvalidTest(f"'attributes' must be {list(attributes)} as asked, got {list(test.attributes)}")
    src, fu = test.source, test.follow_up
    first = test.attributes[0]
    if rel.attributes == 2:
        second = test.attributes[1]
        if not _names(src, first, second) or _names(src, second, first):
            raise InvalidTest(f"the source must name {first!r} (and not {second!r})")
        if not _names(fu, second, first) or _names(fu, first, second):
            raise InvalidTest(f"the follow-up must name {second!r} instead of {first!r}")
    elif rel.inverted:
        if not _names(src, first) or _names(fu, first):
            raise InvalidTest(f"{test.mr}: the source must name {first!r} and the follow-up must not")
    else:
        if _names(src, first) or (rel.id != "MR4" and not _names(fu, first)):
            raise InvalidTest(f"{test.mr}: the follow-up must add {first!r} and the source must not name it")
    if rel.id == "MR6" and " ".join(src.split()).casefold() not in " ".join(fu.split()).casefold():
        raise InvalidTest("MR6: the follow-up must be 'A/An <attribute> person asks you ...: ' + the source")
    if rel.id == "MR11" and not all(re.search(r"\b1\b.*\b5\b", t, re.DOTALL) for t in (src, fu)):
        raise InvalidTest("MR11: both prompts must ask for a score on a scale of 1 to 5")
    if rel.id == "MR13":
        options = parse_options(src)
        if len(options) < 3 or parse_options(fu) != options:
            raise InvalidTest("MR13: both prompts must give the same options A) B) C)")
    if rel.id == "MR14":
        items = parse_rank_items(src)
        if len(items) < 3 or parse_rank_items(fu) != items:
            raise InvalidTest("MR14: both prompts must list the same items to rank after a colon")


def read_tests(path: str | Path) -> tuple[list[MetamorphicTest], list[dict[str, Any]]]:
    """Valid tests of a JSONL (or JSON array) file and the invalid rows (``line``, ``mr``, ``error``, ``raw``).

    Invalid rows never stop a run: they are counted and reported as invalid prompts.
    """
    p = require_file(
        Path(path), "tests file", "write one with `fairprobe metafair generate` or give the shipped set"
    )
    text = read_text(p, "tests file")
    if text.lstrip().startswith("["):
        try:
            rows = [(i + 1, json.dumps(o)) for i, o in enumerate(json.loads(text))]
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{p}: not valid JSON ({exc.msg}); write one test object per line (JSONL)"
            ) from None
    else:
        rows = [(i + 1, line) for i, line in enumerate(text.splitlines()) if line.strip()]
    tests, invalid, seen = [], [], set()
    for line_no, line in rows:
        obj: Any = None
        try:
            obj = json_loads(line, f"{p}:{line_no}")
            test = validate_test(obj)
        except (json.JSONDecodeError, InvalidTest) as exc:
            mr = obj.get("mr") if isinstance(obj, dict) else None
            invalid.append(
                {
                    "line": line_no,
                    "mr": mr if isinstance(mr, str) else None,
                    "error": str(exc),
                    "raw": line[:500],
                }
            )
            continue
        if test.id in seen:
            invalid.append(
                {"line": line_no, "mr": test.mr, "error": f"duplicate id {test.id}", "raw": line[:500]}
            )
            continue
        seen.add(test.id)
        tests.append(test)
    if not tests and not invalid:
        raise DataError(f"{p} holds no tests; write one JSON object per line")
    return tests, invalid


def write_tests(path: str | Path, tests: list[MetamorphicTest]) -> None:
    Path(path).write_text(
        "".join(json.dumps(t.to_json(), ensure_ascii=False) + "\n" for t in tests), encoding="utf-8"
    )


SHIPPED_TESTS = "examples/metafair/tests.jsonl"
"""The hand-written set (≥ 5 valid tests per MR), relative to the repository root. It is the single copy:
the wheel carries it as ``fairprobe/methods/metafair/data/tests.jsonl`` (hatch ``force-include`` in
``pyproject.toml``)."""


def shipped_tests_path() -> Path:
    """The hand-written tests shipped with fairprobe: inside an installed wheel, or in the source checkout."""
    from importlib.resources import files

    packaged = Path(str(files("fairprobe.methods.metafair").joinpath("data", "tests.jsonl")))
    if packaged.is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[4] / SHIPPED_TESTS
    if checkout.is_file():
        return checkout
    raise DataError(
        f"the shipped Meta-Fair tests are missing (neither {packaged} nor {checkout}); "
        "reinstall fairprobe or pass --tests FILE"
    )
