"""Which occurrences of a person-only adjective actually describe a person.

HInter's body attribute (§4 "Sensitive Attributes", Table 1) is about people: "a cute → manly"
film review mutation means something only where the adjective is said of a person. Replacing
every "ugly" or "pretty" also turns "Things get ugly" into "Things get beautiful" and "pretty
coherent" into "homely coherent": findings about words, not people. The authors' list sidesteps
this with person phrases; fairprobe's dictionary marks bare body adjectives ``adjectives:`` and
keeps an occurrence only where the dependency parse (the same spaCy model as the invariant, with
its named-entity recogniser switched on for this check) links it to a person:

- ``amod`` / ``compound`` / ``nmod`` / ``appos`` of a person ("an ugly man", "the handsome Gregory
  Peck") or of a body part a person has ("her beautiful eyes", "Karloff's ugly face");
- ``acomp`` / ``attr`` / ``oprd`` / ``xcomp`` / ``ccomp`` / ``advcl`` / ``npadvmod`` whose clause
  subject or object is a person ("she is tall", "Dorothy Dandridge is beautiful", "they made him
  ugly", "Jessica Tandy, elderly but fierce, ...");
- a conjunct of such an adjective ("a tall and skinny man").

An adjective the tagger reads as part of a proper noun ("Sean Young", "Pretty Woman") describes no
one: it is a name.

A person is a personal pronoun, a name the parser's recogniser tags ``PERSON`` (a film title, a
city or a studio is not one) or a WordNet person's name it leaves untagged or calls an organisation
(``lexicons/person_names.txt``: "Karloff"), or a common noun of the person-noun list: a hand-written list of nouns
common in reviews and legal texts, the nouns of the dictionary's non-adjective entries that are
people, and the nouns WordNet files under ``person.n.01`` (``lexicons/person_nouns.txt``, generated
by ``scripts/wordnet_person_nouns.py``; runtime needs no WordNet).

The measured accuracy on ``tests/text/person_adjectives.jsonl`` (hand-labelled review sentences):
:func:`evaluate_corpus`.

**Group words** (issue 39). The terms of a ``scope: people`` attribute (race, nationality,
religion, sexual orientation) name a group of people in some uses and a thing in others: "a Korean
actress", "the Muslims", "she is Catholic" against "the Korean version", "Filipino horror films", "a
Russian battleship", "English farce", "speaks Korean", "Christian Bale". An occurrence is kept
(:func:`names_people`) where

- it is part of no multi-word name the recogniser tags ``PERSON`` ("Christian Bale", "Jack Black");
- used as a modifier or predicate, it describes a person by the adjective rules above, or modifies a
  noun for a group of people or a person's origin ("a Muslim family", "of Korean descent");
- used as a noun, it is plural ("Koreans", "the Muslims", "Black people") or has a determiner or
  possessor ("a Jew", "the Japanese", "our Christian"): a bare singular noun is a language or a name
  ("in English", "speaks Korean").

The measured precision and recall on ``tests/data/person_scope_labelled.csv`` (group-word
occurrences in packaged review, social-media, loan and Wikipedia texts, labelled by hand):
:func:`fairprobe.text.person_scope.evaluate_group_words`; see ``docs/group-words.md``.
"""

from __future__ import annotations

import functools
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

from fairprobe.errors import DataError
from fairprobe.lexicons.dictionary import BiasDictionary

__all__ = [
    "PERSON_NOUNS",
    "non_person_spans",
    "non_person_by_attribute",
    "describes_person",
    "names_people",
    "evaluate_corpus",
    "person_parser",
    "wordnet_person_names",
    "wordnet_person_nouns",
]

PERSON_NOUNS = frozenset(
    """person people man men woman women guy guys girl girls boy boys lady ladies gentleman gentlemen
    kid kids child children baby babies teen teenager adult adults actor actors actress actresses
    director directors character characters hero heroes heroine heroines villain villains
    protagonist protagonists lead leads star stars cast performer performers singer singers dancer
    dancers student students teacher teachers doctor doctors nurse nurses cop cops officer officers
    soldier soldiers detective detectives killer killers friend friends wife wives husband husbands
    mother mothers father fathers mom mum dad son sons daughter daughters brother brothers sister
    sisters parent parents uncle uncles aunt aunts cousin cousins grandmother grandfather grandma
    grandpa neighbor neighbors neighbour neighbours stranger strangers couple boss worker workers
    folks someone somebody anyone anybody everyone everybody nobody applicant applicants defendant
    defendants plaintiff plaintiffs victim victims witness witnesses prisoner prisoners judge judges
    lawyer lawyers employee employees individual individuals citizen citizens resident residents
    patient patients partner partners boyfriend girlfriend bride groom king queen prince princess
    actor's actress's barista baristas influencer influencers streamer streamers youtuber youtubers""".split()
)
"""Person nouns common in reviews and legal texts (the last few are missing from WordNet 3.0)."""
PERSON_PRONOUNS = frozenset(
    "i me my you your he him his she her we us our they them their who whose myself himself herself".split()
)
#: Parts of the body: an adjective of one describes a person when a person has it ("her pretty face").
BODY_PARTS = frozenset(
    """face faces eyes eye body bodies legs leg arms arm hands hand hair skin figure features lips nose
    mouth smile teeth cheeks chin neck shoulders chest belly stomach waist hips thighs feet frame
    physique looks scar scars wrinkles beard moustache mustache complexion cheekbones curves
    eyebrows forehead ears head""".split()
)
#: Linking verbs: an adjective after one is said of the subject, even where the tagger reads it as an
#: adverb ("Natalie Wood looked pretty").
LINKING_VERBS = frozenset(
    """look looks looked looking seem seems seemed appear appears appeared become becomes became
    grow grows grew grown turn turns turned remain remains remained stay stays stayed feel feels felt
    go goes went gone get gets got""".split()
)
#: Nouns for a group of people or a person's origin: a group word modifying one describes people.
GROUP_HEADS = frozenset(
    """family families community communities population populations household households couple
    couples tribe tribes clan clans descent origin origins heritage ancestry background parents
    parentage immigrant immigrants""".split()
)
_MODIFIER = frozenset({"amod", "compound", "nmod", "appos"})
_PREDICATE = frozenset({"acomp", "attr", "oprd", "xcomp", "ccomp", "advcl", "npadvmod"})
_SUBJECT = frozenset({"nsubj", "nsubjpass"})
_OBJECT = frozenset({"dobj"})


@functools.cache
def _packaged_words(name: str) -> frozenset[str]:
    path = Path(str(files("fairprobe.lexicons").joinpath(name)))
    if not path.is_file():
        raise DataError(f"{path} is missing; reinstall fairprobe (scripts/wordnet_person_nouns.py writes it)")
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(w.strip() for w in lines if w.strip() and not w.startswith("#"))


def wordnet_person_nouns() -> frozenset[str]:
    """The packaged WordNet person nouns (singular, lower case)."""
    return _packaged_words("person_nouns.txt")


def wordnet_person_names() -> frozenset[str]:
    """The packaged names of WordNet's named people whose every sense is a person ("Karloff")."""
    return _packaged_words("person_names.txt")


_IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman", "folks": "folk"}


def _singulars(word: str) -> list[str]:
    """``word`` and the singulars it may be a plural of ("wives" -> wife, "busboys" -> busboy)."""
    out = [word, _IRREGULAR.get(word, word)]
    if word.endswith("men"):
        out.append(word[:-3] + "man")
    if word.endswith("ies"):
        out.append(word[:-3] + "y")
    if word.endswith("ves"):
        out += [word[:-3] + "f", word[:-3] + "fe"]
    if word.endswith("es"):
        out.append(word[:-2])
    if word.endswith("s"):
        out.append(word[:-1])
    return out


@functools.lru_cache(maxsize=8)
def _person_nouns(dictionary: BiasDictionary) -> frozenset[str]:
    """Fixed list, WordNet list, and the heads of the dictionary's non-adjective terms that are
    people: listed person nouns, or capitalised demonyms ("Nigerians"); "race" or "illness" are not."""
    wordnet = wordnet_person_nouns()
    words = set(PERSON_NOUNS) | wordnet
    for attribute in dictionary.attributes:
        adjectives = dictionary.person_only(attribute)
        for term in dictionary.terms(attribute):
            if term.lower() in adjectives:
                continue
            head = term.split()[-1]  # the head of "Black people", "trans women"
            if head[:1].isupper() or any(w in words for w in _singulars(head.lower())):
                words.add(head.lower())
    return frozenset(words)


def _is_person(token: Any, nouns: frozenset[str]) -> bool:
    low = token.lower_
    if token.tag_.startswith("PRP") or token.tag_ in ("WP", "WP$"):
        return low in PERSON_PRONOUNS
    if token.tag_.startswith("NNP"):
        _entities(token.doc)
        # A name the recogniser calls PERSON, or a WordNet person's name it calls nothing or an
        # organisation (the small model reads "Karloff" as ORG); a place or a title is not a person.
        names = wordnet_person_names()
        return token.ent_type_ == "PERSON" or (
            token.ent_type_ in ("", "ORG")
            and any(t.text in names for t in (token, *(c for c in token.children if c.dep_ == "compound")))
        )
    return token.tag_.startswith("NN") and any(w in nouns for w in _singulars(low))


def _is_titled_person_noun(token: Any, nouns: frozenset[str]) -> bool:
    """A common person noun written with capitals, which the tagger reads as a proper noun ("a German
    Spy", "A LONE BLACK MAN"); never part of a name the recogniser tags PERSON."""
    if not token.tag_.startswith("NNP"):
        return False
    _entities(token.doc)
    return token.ent_type_ != "PERSON" and any(w in nouns for w in _singulars(token.lower_))


def _is_persons_body_part(token: Any, nouns: frozenset[str]) -> bool:
    """A body part with a person as possessor ("her eyes", "Karloff's face") or in a clause whose
    subject is a person ("she has a pretty face", "the makeup gives Karloff an ugly face")."""
    if token.lower_ not in BODY_PARTS:
        return False
    if any(c.dep_ == "poss" and _is_person(c, nouns) for c in token.children):
        return True
    if token.dep_ in ("dobj", "attr"):
        others = [c for c in token.head.children if c.dep_ in (*_SUBJECT, "dative") and c is not token]
        return any(_is_person(o, nouns) for o in others)
    return False


def _clause_people(head: Any) -> list[Any]:
    """Subjects (and, for "made him ugly", objects) of the clause headed by ``head``."""
    return [c for c in head.children if c.dep_ in _SUBJECT or c.dep_ in _OBJECT]


def describes_person(token: Any, nouns: frozenset[str], depth: int = 0, names: bool = True) -> bool:
    """Whether the adjective ``token`` is said of a person (see the module rules). With ``names``
    a token tagged as a proper noun is part of a name and describes no one; group words pass False
    (the tagger often reads "Korean" in "a Korean actress" as a proper noun)."""
    dep, head = token.dep_, token.head
    if names and token.tag_.startswith("NNP"):
        return False  # part of a name or title: "Sean Young", "Pretty Woman", "Young Frankenstein"
    if (
        dep == "advmod"
        and head.tag_.startswith("VB")
        and (token.tag_ == "JJ" or head.lower_ in LINKING_VERBS)
    ):
        dep = "acomp"  # "he went blind", "she looked pretty": read as a predicate of the subject
    if dep == "conj" and depth < 3:
        return describes_person(head, nouns, depth + 1, names)
    if dep in _MODIFIER:
        if _is_person(head, nouns) or _is_persons_body_part(head, nouns):
            return True
        if not names:  # group words
            if head.lower_ in GROUP_HEADS or _is_titled_person_noun(head, nouns):
                return True  # "a Muslim family", "of Korean descent", "a German Spy", "BLACK MAN"
            if head.dep_ in ("amod", "compound", "nmod") and _is_person(head.head, nouns):
                return True  # "a White retired teacher"
        return head.dep_ == "compound" and _is_person(head.head, nouns)
    if dep in _PREDICATE:
        if dep == "npadvmod" or (dep == "advcl" and not _clause_people(token)):
            # "Jessica Tandy, elderly but fierce, carries ...": said of the clause subject
            return any(_is_person(s, nouns) for s in head.children if s.dep_ in _SUBJECT)
        people = _clause_people(token) if dep in ("ccomp", "advcl") else []
        people = people or [c for c in head.children if c.dep_ in _SUBJECT]
        if not people and head.dep_ in ("xcomp", "ccomp", "conj"):
            people = [c for c in head.head.children if c.dep_ in _SUBJECT]
        if dep in ("oprd", "ccomp"):
            people += [c for c in head.children if c.dep_ in _OBJECT]
        if head.dep_ == "relcl" and (not people or all(p.tag_ in ("WDT", "WP") for p in people)):
            return _is_person(head.head, nouns)  # "the man who is tall", "the actor that looks old"
        return any(_is_person(p, nouns) for p in people)
    return False


def _in_name(token: Any) -> bool:
    """Part of a multi-word name the recogniser tags PERSON ("Christian Bale", "Jack Black")."""
    _entities(token.doc)
    if token.ent_type_ != "PERSON":
        return False
    ent = next((e for e in token.doc.ents if e.start <= token.i < e.end), None)
    return ent is not None and len(ent) > 1


def names_people(span: Any, nouns: frozenset[str]) -> bool:
    """Whether the group word ``span`` (a spaCy span: "Korean", "Black people") names or describes
    a person or people here (see the module's group-word rules)."""
    root = span.root
    if any(_in_name(t) for t in span):
        return False
    head = root.head
    if (
        root.dep_ in ("npadvmod", "advmod")
        and head.dep_ in ("amod", "compound")
        and _is_person(head.head, nouns)
    ):
        return True  # "a White retired teacher": the parser hangs the group word on the next modifier
    if root.tag_ in ("NNS", "NNPS") and root.dep_ not in _MODIFIER:
        return True  # "Koreans", "the Muslims", "Black people"
    if root.tag_.startswith("NN") and root.dep_ not in _MODIFIER and root.dep_ not in _PREDICATE:
        if any(c.dep_ in ("det", "poss", "nummod") for c in root.children):
            return True  # "a Jew", "the Japanese", "a white person", "one American"
        if root.lower_ in nouns and root.lower_ in PERSON_NOUNS:
            return True  # "person of color"
        if root.dep_ != "conj":
            return False  # a bare singular noun is a language or a name: "in English"
    return describes_person(root, nouns, names=False)


def non_person_by_attribute(
    text: str, dictionary: BiasDictionary, attributes: list[str] | tuple[str, ...], nlp: Any
) -> dict[str, frozenset[tuple[int, int]]]:
    """Per attribute, the spans in ``text`` the mutators skip: person-only adjectives that describe
    no person, and group words (``scope: people``) that name or describe no one. The text is
    parsed only when such a word occurs; attributes with nothing to skip are left out."""
    from fairprobe.text.mutate import find_terms

    candidates: dict[tuple[int, int], list[tuple[str, bool]]] = {}
    for attribute in attributes:
        adjectives = dictionary.person_only(attribute)
        groups = dictionary.group_words(attribute)
        if not adjectives and not groups:
            continue
        for word, spans in find_terms(text, dictionary, attribute).items():
            key = " ".join(word.lower().split())
            if key in adjectives or key in groups:
                for span in spans:
                    candidates.setdefault(span, []).append((attribute, key in groups))
    if not candidates:
        return {}
    nouns = _person_nouns(dictionary)
    skip: dict[str, set[tuple[int, int]]] = {}
    for offset, doc, spans in _parsed_windows(text, sorted(candidates), nlp):
        for start, end in spans:
            span = doc.char_span(start - offset, end - offset, alignment_mode="expand")
            for attribute, group in candidates[(start, end)]:
                if span is None or not len(span):
                    keep = False
                elif group:
                    keep = names_people(span, nouns)
                else:
                    keep = describes_person(span.root, nouns)
                if not keep:
                    skip.setdefault(attribute, set()).add((start, end))
    return {a: frozenset(s) for a, s in skip.items()}


def non_person_spans(
    text: str, dictionary: BiasDictionary, attributes: list[str] | tuple[str, ...], nlp: Any
) -> frozenset[tuple[int, int]]:
    """Every span :func:`non_person_by_attribute` skips, whatever its attribute."""
    return frozenset().union(*non_person_by_attribute(text, dictionary, attributes, nlp).values())


_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def _blank_breaks(text: str) -> str:
    """``text`` with each HTML line break (``<br />``, common in review data) replaced by a newline and
    spaces of the same length: offsets stay, and "performers.<br />Now" is no longer one token."""
    return _BREAK.sub(lambda m: "\n" + " " * (len(m.group()) - 1), text)


def _parse(nlp: Any, text: str) -> Any:
    """Tags and dependencies of ``text`` (line-break markup blanked, :func:`_blank_breaks`); the
    named-entity recogniser of ``nlp`` (if it has one) is kept aside and run only when a decision
    turns on a proper noun (:func:`_entities`): it costs about twice the parse (measured on IMDB
    sentences, see the notes)."""
    text = _blank_breaks(text)
    names = getattr(nlp, "pipe_names", ())
    if "ner" not in names:
        return nlp(text)
    doc = nlp(text, disable=["ner"])
    doc.user_data["fairprobe.ner"] = nlp.get_pipe("ner")
    return doc


def _entities(doc: Any) -> None:
    """Run the recogniser kept aside by :func:`_parse` on ``doc``, once."""
    ner = doc.user_data.pop("fairprobe.ner", None)
    if ner is not None:
        ner(doc)


WHOLE_TEXT_CHARS = 20_000
"""Texts up to this length are parsed whole; longer ones sentence by sentence (issue 17: parsing a
50 MB single-line text at once took GBs), and only the sentences holding a candidate."""


def _parsed_windows(
    text: str, candidates: list[tuple[int, int]], nlp: Any
) -> list[tuple[int, Any, list[tuple[int, int]]]]:
    """``(offset, parsed doc, candidate spans)`` per parsed window of ``text``."""
    if len(text) <= WHOLE_TEXT_CHARS:
        return [(0, _parse(nlp, text), candidates)]
    from fairprobe.text.sentences import sentence_spans

    windows: list[tuple[int, Any, list[tuple[int, int]]]] = []
    leftover: list[tuple[int, int]] = []
    i = 0
    for s, e in sentence_spans(text):
        while i < len(candidates) and candidates[i][0] < s:
            leftover.append(candidates[i])
            i += 1
        inside = []
        while i < len(candidates) and candidates[i][1] <= e:
            inside.append(candidates[i])
            i += 1
        if inside:
            windows.append((s, _parse(nlp, text[s:e]), inside))
    # A candidate across a sentence boundary (none in practice) is parsed with its own context.
    for start, end in leftover + candidates[i:]:
        lo = max(0, start - 200)
        windows.append((lo, _parse(nlp, text[lo : end + 200]), [(start, end)]))
    return windows


def person_parser(name: str | None = None) -> Any:
    """The parser the person check runs on: the invariant's tagger and parser plus the named-entity
    recogniser (names are people only where it says ``PERSON``)."""
    from fairprobe.text.parser import load_parser

    return load_parser(name, minimal=True, ner=True)[0]


def evaluate_corpus(
    path: str | Path, nlp: Any = None, dictionary: BiasDictionary | None = None, split: str | None = None
) -> dict[str, Any]:
    """Accuracy of the person check on a labelled corpus: counts, recall and precision of "this
    adjective describes a person", and the misjudged rows.

    ``path`` is JSONL, one object per sentence: ``text``, ``adjective`` (a person-only adjective of
    the dictionary; its first whole-word occurrence is judged), ``person`` (the label) and an
    optional ``kind`` and ``split``. With ``split`` only rows of that split count (rows without one are
    ``"dev"``: the sentences the rules were written against; ``"heldout"`` rows were written after the
    first rules, and two general fixes followed their errors (more body parts, linking verbs);
    ``"heldout2"`` rows were written after the rules were final). The corpus is
    ``tests/text/person_adjectives.jsonl``.
    """
    from fairprobe.lexicons.dictionary import load_dictionary

    dictionary = dictionary or load_dictionary()
    nlp = nlp if nlp is not None else person_parser()
    attributes = [a for a in dictionary.attributes if dictionary.person_only(a)]
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    wrong: list[dict[str, Any]] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if split is not None and row.get("split", "dev") != split:
            continue
        text, adjective, label = row["text"], row["adjective"], bool(row["person"])
        found = re.search(rf"(?<![\w-]){re.escape(adjective)}(?![\w-])", text, re.IGNORECASE)
        if found is None or not any(adjective.lower() in dictionary.person_only(a) for a in attributes):
            raise DataError(
                f"{path}:{number}: {adjective!r} is not a person-only adjective of the dictionary found in "
                "the text; label an adjective from an `adjectives:` block that the sentence contains"
            )
        said = found.span() not in non_person_spans(text, dictionary, attributes, nlp)
        counts[("t" if said == label else "f") + ("p" if said else "n")] += 1
        if said != label:
            wrong.append({"line": number, "text": text, "adjective": adjective, "person": label})
    said_person = counts["tp"] + counts["fp"]
    persons = counts["tp"] + counts["fn"]
    return {
        **counts,
        "n": sum(counts.values()),
        "recall": counts["tp"] / persons if persons else None,
        "precision": counts["tp"] / said_person if said_person else None,
        "wrong": wrong,
    }
