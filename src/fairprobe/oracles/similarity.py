"""Semantic similarity between two texts: LSA, LDA topic distributions and embedding cosine.

Generic oracle used by CAFFE (shared/seeds/caffe.txt §5.2 RQ2: "LSA", "LDA", "CS-BERT") and by any
technique that compares two model answers. Each scorer is ``fit(corpus)`` then ``score(a, b)``:

- :class:`LSASimilarity` — TF-IDF (scikit-learn defaults) → truncated SVD (100 components,
  ``random_state=42``) → cosine. The latent space is *fitted on a corpus*: by default the batch
  being scored (``a + b`` and any extra texts), as the authors' replication code does, so a pair's
  score depends on the other texts of the batch. Pass a fixed reference corpus to ``fit`` to make
  scores comparable across batches. A corpus with fewer documents (or terms) than components
  spans fewer latent dimensions: the space keeps all ``min(docs, terms)`` of them (an exact SVD),
  which is what the authors' ``TruncatedSVD(n_components=100)`` returns on such a batch, so a
  single pair scores the TF-IDF cosine of its two answers, never a degenerate 1.0; :attr:`note`
  says so.
- :class:`LDASimilarity` — count vectoriser → LDA with 30 topics (``random_state=42``) → cosine
  between the documents' topic distributions.

LDA fits on the corpus in a canonical (sorted) order, so its scores never depend on the order in
which the responses arrived (its random initialisation of each document's topic mixture
otherwise follows the row order). LSA keeps the order it is given: the authors' randomized SVD is
an approximation whose digits move (by up to ~0.03) with the row order, and CAFFE passes the
authors' order (every first response, then every second response) so its scores are theirs.
- :class:`EmbeddingSimilarity` — cosine of normalised sentence embeddings
  (:func:`fairprobe.models.embeddings.load_embedder`; MiniLM by default; the paper's
  bert-base-uncased is not available offline).

Edge cases, the same for every metric: two empty texts (or two texts with no known term) are
identical (1.0); exactly one such text against a non-empty one scores 0.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairprobe.errors import DataError, UsageError

METRICS = ("lsa", "lda", "embedding")


def _rowwise_cosine(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``x`` with the same row of ``y``; zero vectors follow the module rules."""
    nx = np.linalg.norm(x, axis=1)
    ny = np.linalg.norm(y, axis=1)
    dots = np.einsum("ij,ij->i", x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        sims = dots / (nx * ny)
    zx, zy = nx == 0, ny == 0
    sims = np.where(zx & zy, 1.0, np.where(zx | zy, 0.0, sims))
    return np.clip(sims, -1.0, 1.0).astype(float)


def _require_sklearn() -> None:
    import importlib.util

    if importlib.util.find_spec("sklearn") is None:
        raise UsageError("LSA and LDA similarity need scikit-learn: pip install scikit-learn")


def _check_pairs(a: Sequence[str], b: Sequence[str]) -> None:
    if len(a) != len(b):
        raise UsageError(f"similarity needs as many first texts as second texts; got {len(a)} and {len(b)}")


class _CorpusScorer:
    """Shared ``fit`` / ``score`` logic of the corpus-fitted metrics (LSA, LDA)."""

    name = ""
    canonical_order = False

    def __init__(self) -> None:
        self.note = ""
        self._fitted = False
        self._empty_vocabulary = False

    def fit(self, corpus: Sequence[str]) -> _CorpusScorer:
        texts = [t or "" for t in corpus]
        if self.canonical_order:
            texts.sort()  # LDA: scores must not depend on the order of the corpus
        if self.name in ("lsa", "lda"):
            _require_sklearn()
        if not texts:
            raise DataError(f"{self.name}: the corpus to fit is empty; give at least one text")
        self._fit(texts)
        self._fitted = True
        return self

    def _fit(self, texts: list[str]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def score(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Similarity of ``a[i]`` and ``b[i]`` for each i, in the space fitted by :meth:`fit`."""
        _check_pairs(a, b)
        if not self._fitted:
            raise UsageError(f"{self.name}: call fit(corpus) before score(a, b)")
        if not a:
            return np.zeros(0)
        if self._empty_vocabulary:
            return _rowwise_cosine(np.zeros((len(a), 1)), np.zeros((len(b), 1)))
        x = self._transform(list(a))
        y = self._transform(list(b))
        return _rowwise_cosine(x, y)

    def fit_score(self, a: Sequence[str], b: Sequence[str], extra: Sequence[str] = ()) -> np.ndarray:
        """Fit on the batch itself (``a + b + extra``), then score: the authors' batch mode."""
        _check_pairs(a, b)
        self.fit([*a, *b, *extra])
        return self.score(a, b)


class LSASimilarity(_CorpusScorer):
    """Latent Semantic Analysis similarity (CAFFE §5.2 RQ2; TF-IDF → truncated SVD → cosine)."""

    name = "lsa"

    def __init__(self, components: int = 100, random_state: int = 42):
        super().__init__()
        self.components = components
        self.random_state = random_state
        self.components_used = 0

    def _fit(self, texts: list[str]) -> None:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        self._tfidf = TfidfVectorizer()
        try:
            matrix = self._tfidf.fit_transform(texts)
        except ValueError:  # empty vocabulary: every text is empty or stop words only
            self._empty_vocabulary = True
            self.note = "lsa: the corpus has no terms; every text is treated as empty"
            return
        self._empty_vocabulary = False
        docs, terms = matrix.shape
        k = min(self.components, docs, terms)
        self._svd = None
        self._basis = None
        if k < self.components:
            # Fewer latent dimensions than components: keep every one of them (exact SVD). The
            # authors' TruncatedSVD(100) returns the same span on such a batch; dropping one more
            # (k = docs - 1) made a lone pair collinear, so it always scored 1.0.
            _, _, vt = np.linalg.svd(matrix.toarray(), full_matrices=False)
            self._basis = vt[:k]
            self.note = (
                f"lsa: the corpus has {docs} document(s) and {terms} term(s), fewer than "
                f"{self.components} components; the space keeps all {k} latent dimensions "
                "(the TF-IDF span, as the authors' code does); give a reference corpus of more than "
                f"{self.components} documents for a fixed {self.components}-dimensional space"
            )
        else:
            self.note = ""
            self._svd = TruncatedSVD(n_components=k, random_state=self.random_state).fit(matrix)
        self.components_used = k

    def _transform(self, texts: list[str]) -> np.ndarray:
        matrix = self._tfidf.transform(texts)
        if self._svd is None:
            reduced = np.asarray(matrix @ self._basis.T)
        else:
            reduced = self._svd.transform(matrix)
        # A text with no known term maps to the zero vector; keep it zero (not the SVD's offset).
        empty = np.asarray(matrix.getnnz(axis=1)) == 0
        reduced[empty] = 0.0
        return reduced


class LDASimilarity(_CorpusScorer):
    """LDA topic-distribution similarity (CAFFE §5.2 RQ2; counts → 30-topic LDA → cosine)."""

    name = "lda"
    canonical_order = True

    def __init__(self, topics: int = 30, random_state: int = 42):
        super().__init__()
        self.topics = topics
        self.random_state = random_state

    def _fit(self, texts: list[str]) -> None:
        from sklearn.decomposition import LatentDirichletAllocation
        from sklearn.feature_extraction.text import CountVectorizer

        self._counts = CountVectorizer()
        try:
            matrix = self._counts.fit_transform(texts)
        except ValueError:
            self._empty_vocabulary = True
            self.note = "lda: the corpus has no terms; every text is treated as empty"
            return
        self._empty_vocabulary = False
        self._lda = LatentDirichletAllocation(n_components=self.topics, random_state=self.random_state)
        self._lda.fit(matrix)

    def _transform(self, texts: list[str]) -> np.ndarray:
        matrix = self._counts.transform(texts)
        dist = self._lda.transform(matrix)
        empty = np.asarray(matrix.getnnz(axis=1)) == 0
        dist[empty] = 0.0  # LDA gives an empty document the prior; treat it as empty instead
        return dist


class EmbeddingSimilarity:
    """Cosine of sentence embeddings (CAFFE's CS-BERT, with MiniLM as the offline default)."""

    name = "embedding"

    def __init__(self, embedder: str = "minilm"):
        from fairprobe.models.embeddings import load_embedder

        # "hf:NAME" names a Hugging Face encoder (mean-pooled by sentence-transformers, as the paper's BERT).
        self._embedder = load_embedder(embedder.removeprefix("hf:"))
        self.embedder_name = self._embedder.name
        self.note = ""

    def fit(self, corpus: Sequence[str]) -> EmbeddingSimilarity:
        """No fitting: embeddings do not depend on the batch (kept for a uniform interface)."""
        return self

    def score(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        _check_pairs(a, b)
        if not a:
            return np.zeros(0)
        a, b = list(a), list(b)
        x = self._embedder.encode(a)
        y = self._embedder.encode(b)
        # Blank texts: apply the module's empty-text rule instead of the embedding of "".
        ea = np.array([not t.strip() for t in a])
        eb = np.array([not t.strip() for t in b])
        x = np.where(ea[:, None], 0.0, x)
        y = np.where(eb[:, None], 0.0, y)
        return _rowwise_cosine(x.astype(float), y.astype(float))

    def fit_score(self, a: Sequence[str], b: Sequence[str], extra: Sequence[str] = ()) -> np.ndarray:
        return self.score(a, b)


def make_scorer(metric: str, **options: Any) -> LSASimilarity | LDASimilarity | EmbeddingSimilarity:
    """A scorer by name: ``lsa`` (options ``components``, ``random_state``), ``lda`` (``topics``,
    ``random_state``) or ``embedding`` (``embedder``)."""
    if metric == "lsa":
        return LSASimilarity(**options)
    if metric == "lda":
        return LDASimilarity(**options)
    if metric == "embedding":
        return EmbeddingSimilarity(**options)
    raise UsageError(f"unknown similarity metric {metric!r}; use one of {', '.join(METRICS)}")


def similarity(
    metric: str, a: Sequence[str], b: Sequence[str], *, corpus: Sequence[str] | None = None, **options: Any
) -> np.ndarray:
    """Similarities of ``a[i]`` and ``b[i]`` with ``metric``, fitted on ``corpus`` (default: ``a + b``)."""
    scorer = make_scorer(metric, **options)
    scorer.fit(list(corpus) if corpus is not None else [*a, *b])
    return scorer.score(a, b)
