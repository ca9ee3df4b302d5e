"""Word-pair mutation (HInter Algorithms 1-2): the pitfalls of c.replace(p[0], p[1]), one test each."""

from __future__ import annotations

import pytest

from fairprobe.errors import DataError, UsageError
from fairprobe.lexicons.dictionary import BiasDictionary, load_dictionary
from fairprobe.text.mutate import Mutant, Replacement, atomic_mutants, find_terms, intersectional_mutants


@pytest.fixture(scope="module")
def packaged() -> BiasDictionary:
    return load_dictionary()


def gender(*pairs: tuple[str, str]) -> BiasDictionary:
    return BiasDictionary({"gender": list(pairs)})


def texts(mutants: list[Mutant]) -> list[str]:
    return [m.text for m in mutants]


def test_whole_words_only_never_inside_a_longer_word() -> None:
    d = gender(("man", "woman"))
    assert atomic_mutants("The manager of Manhattan met a woman and a German.", d, "gender") == []
    assert texts(atomic_mutants("The manager met the man.", d, "gender")) == ["The manager met the woman."]


def test_hyphenated_words_are_never_split(packaged: BiasDictionary) -> None:
    race = BiasDictionary({"race": [("white", "Asian")]})
    assert atomic_mutants("A non-white actor in a man-made white-washed film.", race, "race") == []
    assert atomic_mutants("A man-made lake.", gender(("man", "woman")), "gender") == []
    # The packaged dictionary lists "non-white" itself: it is replaced whole, never as non-<race>.
    for m in atomic_mutants("A non-white actor.", packaged, "race"):
        assert m.replacements[0].word == "non-white"
        assert m.text == "A white actor."


def test_possessives_keep_their_ending() -> None:
    d = gender(("man", "woman"), ("men", "women"))
    assert texts(atomic_mutants("The man's hat and the men's room.", d, "gender")) == [
        "The woman's hat and the men's room.",
        "The man's hat and the women's room.",
    ]


def test_plurals_are_their_own_entries(packaged: BiasDictionary) -> None:
    by_key = {m.key: m.text for m in atomic_mutants("The actors thanked the actor.", packaged, "gender")}
    assert by_key == {
        "gender:actor>actress": "The actors thanked the actress.",
        "gender:actors>actresses": "The actresses thanked the actor.",
    }


def test_all_occurrences_of_the_chosen_word_are_replaced() -> None:
    [m] = atomic_mutants("He said he would come, and he did.", gender(("he", "she")), "gender")
    assert m.text == "She said she would come, and she did."
    assert len(m.spans) == 3


def test_longest_listed_term_is_matched_first() -> None:
    d = BiasDictionary({"body": [("old men", "young men"), ("men", "women")]})
    by_key = {m.key: m.text for m in atomic_mutants("The old men and the men.", d, "body")}
    assert by_key == {
        "body:old men>young men": "The young men and the men.",
        "body:men>women": "The old men and the women.",  # "men" inside "old men" is not an occurrence
    }
    assert find_terms("The old men and the men.", d, "body") == {"old men": [(4, 11)], "men": [(20, 23)]}


def test_multi_word_terms_match_across_any_whitespace() -> None:
    d = gender(("trans women", "people"))
    [m] = atomic_mutants("Some trans\n women came.", d, "gender")
    assert m.text == "Some people came."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the man", "the woman"),
        ("the Man", "the Woman"),
        ("the MAN", "the WOMAN"),
        ("Man of steel", "Woman of steel"),
    ],
)
def test_case_pattern_is_preserved(text: str, expected: str) -> None:
    [m] = atomic_mutants(text, gender(("man", "woman")), "gender")
    assert m.text == expected


def test_case_of_multi_word_and_proper_terms() -> None:
    d = BiasDictionary({"body": [("old men", "young men")], "race": [("Asian", "white"), ("white", "Asian")]})
    assert texts(atomic_mutants("Old Men rule. old men too.", d, "body")) == [
        "Young Men rule. young men too."
    ]
    # A term's own capital is not copied (Asian -> white mid-sentence), a sentence start is.
    assert texts(atomic_mutants("An Asian actor. Asian films.", d, "race")) == ["A white actor. White films."]
    assert texts(atomic_mutants("a white actor", d, "race")) == ["an Asian actor"]


def test_articles_agree_with_the_replacement(packaged: BiasDictionary) -> None:
    race = BiasDictionary({"race": [("Black", "Asian"), ("Asian", "European")]})
    by_key = {m.key: m for m in atomic_mutants("A Black man met an Asian woman.", race, "race")}
    m = by_key["race:Black>Asian"]
    assert m.text == "An Asian man met an Asian woman."
    assert [m.text[s:e] for s, e in m.spans] == ["An Asian"]
    assert by_key["race:Asian>European"].text == "A Black man met a European woman."


def test_spans_locate_the_new_words_in_the_mutant() -> None:
    d = gender(("man", "woman"))
    [m] = atomic_mutants("A man, a MAN and a plan.", d, "gender")
    assert m.spans == ((2, 7), (11, 16))
    assert [m.text[s:e] for s, e in m.spans] == ["woman", "WOMAN"]


def test_atomic_one_mutant_per_pair_whose_word_occurs(packaged: BiasDictionary) -> None:
    text = "He thanked his brother."
    mutants = atomic_mutants(text, packaged, "gender")
    expected = [(w, r) for w, r in packaged.pairs("gender") if w in ("He", "he", "his", "brother")]
    assert [(m.replacements[0].word, m.replacements[0].replacement) for m in mutants] == expected
    assert {m.text for m in mutants} >= {
        "She thanked his brother.",
        "He thanked her brother.",
        "He thanked his sister.",
    }
    m = mutants[0]
    assert m.kind == "atomic" and m.attributes == ("gender",)
    assert m.key == f"gender:{m.replacements[0].word}>{m.replacements[0].replacement}"


def test_intersectional_pairs_and_parents_come_from_the_same_p1_p2(packaged: BiasDictionary) -> None:
    text = "The black man smiled."
    pairs = intersectional_mutants(text, packaged, ("race", "gender"))
    atomic = {m.key: m for a in ("race", "gender") for m in atomic_mutants(text, packaged, a)}
    n_race = len(atomic_mutants(text, packaged, "race"))
    n_gender = len(atomic_mutants(text, packaged, "gender"))
    assert len(pairs) == n_race * n_gender
    for m, (t1, t2) in pairs:
        assert m.kind == "intersectional" and m.attributes == ("race", "gender")
        assert m.replacements == (t1.replacements[0], t2.replacements[0])
        assert atomic[t1.key] == t1 and atomic[t2.key] == t2
        assert m.key == f"{t1.key}|{t2.key}"
    by_key = {m.key: m for m, _ in pairs}
    m = by_key["race:Black>white|gender:man>woman"]  # Figure 1: black man -> white woman
    assert m.text == "The white woman smiled."
    assert [m.text[s:e] for s, e in m.spans] == ["white", "woman"]


def test_second_replacement_never_rewrites_inside_the_first() -> None:
    d = BiasDictionary({"gender": [("people", "trans women")], "body": [("women", "old women")]})
    [(m, (t1, t2))] = intersectional_mutants("people and women", d, ("gender", "body"))
    assert m.text == "trans women and old women"
    assert t1.text == "trans women and women"
    assert t2.text == "people and old women"
    # Where the only occurrence of p2's word lies inside p1's span, there is no mutant.
    d2 = BiasDictionary({"body": [("old men", "young men")], "gender": [("men", "women")]})
    assert intersectional_mutants("the old men", d2, ("body", "gender")) == []


def test_order_three_has_three_parents() -> None:
    d = BiasDictionary(
        {"race": [("Black", "white")], "gender": [("man", "woman")], "body": [("tall", "short")]}
    )
    [(m, parents)] = intersectional_mutants("A tall Black man.", d, ("race", "gender", "body"))
    assert m.text == "A short white woman."
    assert [p.text for p in parents] == ["A tall white man.", "A tall Black woman.", "A short Black man."]
    assert m.attributes == ("race", "gender", "body")
    assert m.replacements[2] == Replacement("body", "tall", "short")


def test_intersectional_argument_errors(packaged: BiasDictionary) -> None:
    with pytest.raises(UsageError, match="distinct attributes"):
        intersectional_mutants("a man", packaged, ("gender", "gender"))
    with pytest.raises(UsageError):
        intersectional_mutants("a man", packaged, ("gender",))
    with pytest.raises(DataError, match="known attributes: race, nationality, religion, gender"):
        intersectional_mutants("a man", packaged, ("gender", "caste"))
    with pytest.raises(DataError, match="no attribute 'class'"):
        atomic_mutants("a man", packaged, "class")


def test_sampling_is_seeded_and_keeps_algorithm_order(packaged: BiasDictionary) -> None:
    text = "The British actor and his wife."
    full = intersectional_mutants(text, packaged, ("nationality", "gender"))
    sample = intersectional_mutants(text, packaged, ("nationality", "gender"), max_mutants=10, seed=3)
    again = intersectional_mutants(text, packaged, ("nationality", "gender"), max_mutants=10, seed=3)
    assert len(sample) == 10 and sample == again
    order = {m.key: i for i, (m, _) in enumerate(full)}
    assert [order[m.key] for m, _ in sample] == sorted(order[m.key] for m, _ in sample)
    atomic = atomic_mutants(text, packaged, "nationality", max_mutants=5, seed=1)
    assert len(atomic) == 5 and {m.key for m in atomic} <= {
        m.key for m in atomic_mutants(text, packaged, "nationality")
    }


def test_lazy_and_counted_intersections_agree_with_the_list(packaged: BiasDictionary) -> None:
    from fairprobe.text.mutate import count_intersectional, iter_intersectional_mutants

    text = "The old white man and his young Black wife met an Asian woman and a tall boy."
    combo = ("race", "gender", "body")
    full = intersectional_mutants(text, packaged, combo)
    assert len(full) > 1000  # order 3 explodes: why they are built one at a time
    lazy = iter_intersectional_mutants(text, packaged, combo)
    assert next(lazy) == full[0] and list(lazy) == full[1:]
    assert count_intersectional(text, packaged, combo) == len(full)
    picked = {3, 17, len(full) - 1}
    assert list(iter_intersectional_mutants(text, packaged, combo, indices=picked)) == [
        full[i] for i in sorted(picked)
    ]


def test_hinter_pieces_never_change_the_findings_order() -> None:
    """Chunking an original's mutants into pieces is an execution setting: same mutants, same order."""
    from fairprobe.data.datasets import Record
    from fairprobe.methods.hinter.block import HInterBlock
    from fairprobe.methods.hinter.cases import generate, shard_cases

    dictionary = load_dictionary()
    records = [
        Record("a", "The white man and his wife loved it.", None),
        Record("b", "No people here.", None),
        Record("c", "An Asian woman and a tall old man argued.", None),
    ]
    block = HInterBlock(model="py:m:f", attributes=["race", "gender", "body"], order=3, invariant=False)
    expected = []
    for r in records:
        atomic, inter = generate(r, dictionary, block, 0)
        expected += [(r.id, m.key) for m in atomic] + [(r.id, m.key) for m, _ in inter]
    for cap in (1, 7, 100, 100_000):
        chunks = list(shard_cases(records, dictionary, block.model_copy(update={"chunk_mutants": cap}), 0, 1))
        got = [(p.record.id, m.key) for chunk in chunks for p in chunk for m in p.mutants()]
        assert got == expected
        assert all(sum(len(p.inter) for p in chunk) <= cap for chunk in chunks)


# --------------------------------------------------- reads right: articles and capitals (oracle review)


@pytest.mark.parametrize(
    ("text", "pair", "expected", "span_text"),
    [
        ("He is a tall man.", ("tall man", "ugly man"), "He is an ugly man.", "an ugly man"),
        ("A tall man sings.", ("tall man", "ugly man"), "An ugly man sings.", "An ugly man"),
        ("A tall man sings.", ("tall man", "elderly man"), "An elderly man sings.", "An elderly man"),
        ("He is an elderly man.", ("elderly man", "young man"), "He is a young man.", "a young man"),
        ("An elderly man sings.", ("elderly man", "young man"), "A young man sings.", "A young man"),
        ("AN ELDERLY MAN SINGS.", ("elderly man", "young man"), "A YOUNG MAN SINGS.", "A YOUNG MAN"),
        ("An elderly man sings.", ("elderly man", "old man"), "An old man sings.", "old man"),
        ("He is a tall man.", ("tall man", "unusually tall man"), "He is an unusually tall man.", None),
        ("He is an ugly man.", ("ugly man", "unique man"), "He is a unique man.", "a unique man"),
        ("He is an ugly man.", ("ugly man", "European man"), "He is a European man.", "a European man"),
        ("He is a tall man.", ("tall man", "honest man"), "He is an honest man.", "an honest man"),
    ],
)
def test_article_agrees_after_every_replacement(
    text: str, pair: tuple[str, str], expected: str, span_text: str | None
) -> None:
    """The tester saw "a tall man" -> "A ugly man": "ugly" was read as a "you" sound (like "a unit").
    The article joins the replaced span when it changes, so the span still points at the new words."""
    [m] = atomic_mutants(text, BiasDictionary({"body": [pair]}), "body")
    assert m.text == expected
    if span_text is not None:
        assert [m.text[s:e] for s, e in m.spans] == [span_text]


def test_packaged_body_pairs_give_no_article_disagreement(packaged: BiasDictionary) -> None:
    from fairprobe.text.articles import wants_an

    for text in ("He was a tall man.", "He was an elderly man.", "She is a thin woman."):
        for m in atomic_mutants(text, packaged, "body"):
            words = m.text.rstrip(".").split()
            for article, following in zip(words, words[1:], strict=False):
                if article.lower() in ("a", "an"):
                    assert (article.lower() == "an") == wants_an(following), m.text


def test_spans_stay_on_the_new_words_when_articles_change_in_intersections() -> None:
    d = BiasDictionary(
        {"race": [("Black", "Asian")], "gender": [("man", "woman")], "body": [("tall", "old")]}
    )
    [(m, _)] = intersectional_mutants("I met a tall Black man and a Black woman.", d, ("body", "race"))
    assert m.text == "I met an old Asian man and an Asian woman."
    assert [m.text[s:e] for s, e in m.spans] == ["an old", "Asian", "an Asian"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Great cast.<br /><br />Black actors shine.", "Great cast.<br /><br />White actors shine."),
        ("Great cast<br>Black actors shine.", "Great cast<br>White actors shine."),
        ("Great cast.</p><p>Black actors shine.", "Great cast.</p><p>White actors shine."),
        ("Great cast.\nBlack actors shine.", "Great cast.\nWhite actors shine."),
        ("Great cast. <i>Black actors</i> shine.", "Great cast. <i>White actors</i> shine."),
        ("I loved the <i>Black actors</i>.", "I loved the <i>white actors</i>."),
        ("I loved the Black actors.", "I loved the white actors."),
    ],
)
def test_sentence_start_after_markup_and_line_breaks_keeps_its_capital(text: str, expected: str) -> None:
    """IMDB reviews break lines with <br />: the word after one starts a sentence and keeps its capital;
    an inline tag (<i>) is skipped to see what precedes it."""
    race = BiasDictionary({"race": [("Black", "white")]})
    [m] = atomic_mutants(text, race, "race")
    assert m.text == expected
    assert [m.text[s:e].lower() for s, e in m.spans] == ["white"]


@pytest.mark.parametrize(
    ("word", "an"),
    [
        ("ugly", True),
        ("unhappy", True),
        ("umpire", True),
        ("urban", True),
        ("unimpressed", True),
        ("elderly", True),
        ("honest", True),
        ("hour", True),
        ("MP", True),
        ("8-year-old", True),
        ("18-year-old", True),
        ("unique", False),
        ("union", False),
        ("useful", False),
        ("European", False),
        ("one-eyed", False),
        ("young", False),
        ("UN", False),
        ("1-star", False),
        ("tall", False),
    ],
)
def test_wants_an_by_sound(word: str, an: bool) -> None:
    from fairprobe.text.articles import wants_an

    assert wants_an(word) is an
