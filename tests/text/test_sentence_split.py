"""Sentence splitter of HInter's invariant (Algorithm 3 line 4): rules and the kept final fragment."""

from __future__ import annotations

import pytest

from fairprobe.text.sentences import sentence_spans, split_sentences


def test_final_fragment_without_terminator_is_kept() -> None:
    # The HInter artifact dropped "But the ending"; the invariant must see it.
    assert split_sentences("I liked it. But the ending") == ["I liked it.", "But the ending"]
    assert split_sentences("no punctuation at all") == ["no punctuation at all"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It rained!! Did it? Yes.", ["It rained!!", "Did it?", "Yes."]),
        ('He said "Go away." Then he left.', ['He said "Go away."', "Then he left."]),
        ("Mr. Smith met Dr. Jones. They talked.", ["Mr. Smith met Dr. Jones.", "They talked."]),
        (
            "J. R. R. Tolkien wrote it. The U.S. Army read it.",
            ["J. R. R. Tolkien wrote it.", "The U.S. Army read it."],
        ),
        (
            "It cost 3.5 dollars on amazon.com today. Fine.",
            ["It cost 3.5 dollars on amazon.com today.", "Fine."],
        ),
        ("Good... the end was fine... The credits", ["Good... the end was fine...", "The credits"]),
        (
            "Cats, dogs etc. are pets. Birds etc. Fish too.",
            ["Cats, dogs etc. are pets.", "Birds etc.", "Fish too."],
        ),
        ("One<br /><br />Two without stop<br>Three.", ["One", "Two without stop", "Three."]),
        ("Para one\n\nPara two\nstill two.", ["Para one", "Para two\nstill two."]),
        ("", []),
        ("  \n ", []),
    ],
)
def test_rules(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_spans_index_the_text() -> None:
    text = "  First one.  Second<br />third  "
    spans = sentence_spans(text)
    assert [text[s:e] for s, e in spans] == ["First one.", "Second", "third"]


def test_swapping_words_keeps_the_count() -> None:
    a = "The man smiled. His wife, Mrs. Smith, did not... She left"
    b = "The woman smiled. Her husband, Mr. Smith, did not... He left"
    assert len(split_sentences(a)) == len(split_sentences(b)) == 3
