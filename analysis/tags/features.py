"""Features for the tag classifier: embedding, TF-IDF, keyword hits and boundary features, side by side.

Columns: [embedding | TF-IDF | keyword hits in title, in abstract (per tag) | boundary features]. A tag's text
regression sees the TF-IDF, every keyword column and the boundaries it names in the taxonomy
(``text_columns``), not other tags' boundaries.

Measured by nested 5-fold cross-validation on the 750 dev labels (benchmarks/bench_tagging.py):
a regression on the embedding alone gives macro-F1 about 0.68, on TF-IDF alone 0.69, both blocks
with keyword hits 0.71-0.73 (model.py averages one regression per block). Weak labels from keywords
on unlabeled documents lowered it (0.65): they are used only for tags that lack labeled examples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np
import scipy.sparse as sp

from radar.analysis.tags.boundaries import BOUNDARIES, boundary_matrix
from radar.analysis.tags.keywords import KeywordMatcher
from radar.analysis.tags.taxonomy import Taxonomy

if TYPE_CHECKING:  # scikit-learn is imported where features are fitted, not at every command's start
    from sklearn.feature_extraction.text import TfidfVectorizer

FEATURES = (
    "embedding|tfidf|keywords|boundaries/1"  # names the columns transform() makes: a saved model of others is retrained
)
EMBEDDING_WEIGHT = 1.0  # the embedding block as stored (unit vectors); it has its own regression


# ``TfidfVectorizer`` keywords (scikit-learn's, not a record of ours): how texts become TF-IDF columns (what a saved
# model records and is rebuilt with); fitting also uses FIT_PARAMS, which decide the terms it keeps.
TRANSFORM_PARAMS: Final[Mapping[str, object]] = {"ngram_range": (1, 2), "sublinear_tf": True, "stop_words": "english"}
FIT_PARAMS: Final[Mapping[str, object]] = {"min_df": 2, "max_df": 0.3, "max_features": 60000}


def tfidf_text(title: str, abstract: str) -> str:
    return f"{title}. {title}. {abstract}"  # the title twice: it says what the paper is about


@dataclass
class FeatureSpace:
    taxonomy: Taxonomy
    use_tfidf: bool = True
    vectorizer: TfidfVectorizer | None = None
    matcher: KeywordMatcher = field(init=False)
    boundaries: tuple[str, ...] = field(init=False)  # every boundary a tag names, in the taxonomy's order

    def __post_init__(self) -> None:
        self.matcher = KeywordMatcher(self.taxonomy)
        self.boundaries = tuple(dict.fromkeys(b for tag in self.taxonomy.tags for b in tag.boundaries))

    def fit(self, titles: Sequence[str], abstracts: Sequence[str]) -> FeatureSpace:
        if self.use_tfidf:
            from sklearn.feature_extraction.text import TfidfVectorizer

            texts = [tfidf_text(t, a) for t, a in zip(titles, abstracts, strict=True)]
            self.vectorizer = TfidfVectorizer(**TRANSFORM_PARAMS, **FIT_PARAMS, dtype=np.float32)
            try:
                self.vectorizer.fit(texts)
            except ValueError:  # too few documents for min_df: keep every term
                self.vectorizer.set_params(min_df=1, max_df=1.0).fit(texts)
        return self

    def terms(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The fitted TF-IDF vocabulary (terms in column order) and idf weights; None without TF-IDF."""
        if self.vectorizer is None:
            return None
        vocabulary = self.vectorizer.vocabulary_
        return np.array(sorted(vocabulary, key=vocabulary.__getitem__), dtype=str), self.vectorizer.idf_

    @classmethod
    def from_terms(cls, taxonomy: Taxonomy, terms: np.ndarray | None, idf: np.ndarray | None) -> FeatureSpace:
        """A space as ``terms()`` saved it (the same columns and weights as the fitted one)."""
        space = cls(taxonomy, use_tfidf=terms is not None)
        if terms is not None and idf is not None:
            from sklearn.feature_extraction.text import TfidfVectorizer

            vocabulary = {str(t): i for i, t in enumerate(terms.tolist())}
            space.vectorizer = TfidfVectorizer(**TRANSFORM_PARAMS, vocabulary=vocabulary, dtype=np.float32)
            space.vectorizer.idf_ = np.asarray(idf, dtype=np.float64)
        return space

    def extra_columns(self) -> int:
        """Text-side columns after the TF-IDF ones: keyword hits in title and abstract per tag, then the
        boundary features."""
        return 2 * len(self.taxonomy.tags) + sum(len(BOUNDARIES[b].columns) for b in self.boundaries)

    def text_columns(self, tag: str) -> np.ndarray | None:
        """The text-side columns ``tag``'s regression uses: TF-IDF, keyword hits and the boundaries the tag
        names (not other tags' boundaries); None when it is all of them."""
        if not self.boundaries:
            return None
        start = (len(self.vectorizer.vocabulary_) if self.vectorizer is not None else 0) + 2 * len(self.taxonomy.tags)
        keep = [np.arange(start)]
        own = set(self.taxonomy.get(tag).boundaries)
        for name in self.boundaries:
            width = len(BOUNDARIES[name].columns)
            if name in own:
                keep.append(np.arange(start, start + width))
            start += width
        return np.concatenate(keep)

    def transform(self, titles: Sequence[str], abstracts: Sequence[str], vectors: np.ndarray) -> sp.csr_matrix:
        parts = [sp.csr_matrix(np.asarray(vectors, dtype=np.float32) * EMBEDDING_WEIGHT)]
        if self.vectorizer is not None:
            parts.append(self.vectorizer.transform([tfidf_text(t, a) for t, a in zip(titles, abstracts, strict=True)]))
        parts.append(sp.csr_matrix(np.log1p(self.matcher.matrix(titles, abstracts))))
        if self.boundaries:
            parts.append(sp.csr_matrix(boundary_matrix(self.boundaries, titles, abstracts)))
        return sp.hstack(parts, format="csr")
