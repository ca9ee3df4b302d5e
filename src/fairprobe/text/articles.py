"""Indefinite articles and sentence starts for text rewrites (HInter mutants, CAFFE swaps).

A rewrite that swaps one word for another must keep the text readable: "a tall man" -> "an ugly
man", "an elderly man" -> "a young man", and a word at the start of a sentence stays capitalised
even where the sentence begins after HTML markup ("cast.<br /><br />Black actors" -> "White
actors", as in IMDB reviews) or a line break. Both rules are shared here so every rewriter agrees.
"""

from __future__ import annotations

import re

__all__ = ["wants_an", "article_before", "agree_article", "at_sentence_start"]

# Vowel letters read with a consonant sound ("a unicorn", "a European", "a one-off") and the
# consonant letter "h" read silent ("an hour"). Prefixes, checked on the lower-cased word.
_YU_PREFIXES = (
    "uni",  # unicorn, union, unique, united, universal (but "unimpressed", "uninformed" below)
    "use",
    "usu",
    "ure",
    "uri",
    "uro",
    "ute",
    "uti",
    "uto",
    "uk",
    "euro",
    "eu",
    "ewe",
    "one",
    "once",
    "ouija",
)
_VOWEL_SOUND_UN = ("unin", "unim", "unid", "unil")  # un- + vowel-initial stem
_SILENT_H = ("hour", "honest", "honor", "honour", "heir")


def wants_an(word: str) -> bool:
    """Whether ``word`` (or a phrase, by its first word) takes "an": a vowel sound, by spelling.

    Acronyms are read by their first letter's name ("an MP", "a UN envoy"); "u"/"eu" words read
    "you" take "a" ("a unique", "a European"), "ugly", "unhappy", "umpire" take "an"; "hour",
    "honest", "heir" take "an".
    """
    first = word.split(" ")[0].strip("\"'“‘([")
    if not first:
        return False
    if len(first) > 1 and first.isupper():
        return first[0] in "AEFHILMNORSX"
    low = first.lower()
    if low[:1].isdigit():  # "an 8-year-old", "an 18-year-old", "an 11th", but "a 1st"
        return low[0] == "8" or re.match(r"1[18](?!\d\d)", low) is not None
    if low.startswith(_SILENT_H):
        return True
    if low[:1] not in ("a", "e", "i", "o", "u"):
        return False
    return low.startswith(_VOWEL_SOUND_UN) or not low.startswith(_YU_PREFIXES)


_ARTICLE = re.compile(r"(?<![\w'-])(an?)(\s+)\Z", re.IGNORECASE)


def article_before(text: str, start: int) -> re.Match[str] | None:
    """The "a"/"an" (and the whitespace after it) that ends right at ``start``, if any."""
    return _ARTICLE.search(text, max(0, start - 8), start)


def agree_article(article: str, new_word: str) -> str:
    """``article`` ("a", "An", "AN", ...) made to agree with ``new_word``, in the article's case."""
    fixed = "an" if wants_an(new_word) else "a"
    if article.lower() == fixed:
        return article
    if len(article) > 1 and article.isupper():
        return fixed.upper()
    if article[:1].isupper():
        return fixed.capitalize()
    return fixed


_OPENERS = "\"'“‘([{«*_"
# An HTML/XML tag that ends the text before a word ("<br />", "</p>", "<i>").
_TAG_BEFORE = re.compile(r"<\s*(/?)\s*([A-Za-z][\w-]*)[^<>]*>\Z")
# Tags that break the line: what follows starts a sentence, whatever precedes them.
_BREAK_TAGS = frozenset(
    "br p div li ul ol tr td th table h1 h2 h3 h4 h5 h6 hr blockquote section article header footer pre".split()
)


def at_sentence_start(text: str, start: int) -> bool:
    """Whether the word at ``start`` begins a sentence: the text start, or after ``.!?…``, a line
    break or a line-breaking tag (``<br />``, ``</p>``), skipping spaces, opening quotes/brackets
    and inline tags (``<i>``, ``<b>``) in between."""
    i = start
    while True:
        j = i
        while j > 0 and (text[j - 1].isspace() or text[j - 1] in _OPENERS):
            if text[j - 1] == "\n":
                return True
            j -= 1
        if j == 0:
            return True
        if text[j - 1] == ">":
            tag = _TAG_BEFORE.search(text, max(0, j - 200), j)
            if tag is not None:
                if tag.group(2).lower() in _BREAK_TAGS:
                    return True
                i = tag.start()
                continue
        return text[j - 1] in ".!?…"
