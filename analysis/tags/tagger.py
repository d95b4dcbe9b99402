"""Training the tag model and writing tag decisions: what `radar tag` runs.

    labels (shipped dev set, label files, corrections) --training.py--> Examples
    Examples + a sample of the workspace --fit_model--> TagModel (saved under index/tagger/)
    embedded documents not yet decided by this model --TagModel--> document_tags (score, origin)

A model is tied to the taxonomy file's content, the [tagging] settings and the embedding model:
when one changes the next `radar tag` retrains. `--retrain` also picks up new corrections and label files, and
re-decides every document. Corrections always win for their document (see Store.save_tag_decisions).
"""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import msgspec
import numpy as np
import scipy.sparse as sp
from msgspec.structs import force_setattr

from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.errors import TaggingError
from radar.analysis.tags.features import FeatureSpace
from radar.analysis.tags.model import WEAK_WEIGHT, TagModel, TagRule, fit_tag
from radar.analysis.tags.persist import ModelFileError, ModelHeader, StaleModelError, model_bytes, read_model
from radar.analysis.tags.taxonomy import DEFAULT_TAXONOMY, Taxonomy, load_taxonomy_file
from radar.analysis.tags.training import (
    SHIPPED_LABELS,
    SHIPPED_VECTORS,
    Examples,
    read_label_file,
    shipped_papers,
)
from radar.crawler.documents import Documents
from radar.index.embedder import Embedder, document_text
from radar.index.embeddings import Embeddings
from radar.index.errors import IndexError_
from radar.index.prebuilt import DAMAGED_NPZ, PrebuiltVectors
from radar.index.tags_table import Tags
from radar.store.files import write_bytes_atomic
from radar.store.table import Database

MODEL_FORMAT = 4  # 4: numpy + JSON (persist.py), trained on dev + dev2 + dev3; 3 was a pickle, never read now
VOCAB_SAMPLE = 5000  # workspace documents that join the examples to fit the TF-IDF vocabulary
WEAK_SAMPLE = 20000  # workspace documents searched for keyword matches (weak labels)

Progress = Callable[[int, int], None]
Describe = Callable[[Sequence[str]], np.ndarray]


# -- vectors -----------------------------------------------------------------------------------------


@dataclass
class Vectors:
    """The workspace's embedding model, and a lazily made embedder for texts it has no vector for.

    ``make_embedder`` builds an embedder of that model and precision (the composition root's resolver);
    ``cache_dir`` holds the example-vector cache (shared across workspaces with the model cache);
    ``shipped`` the labeled papers' prebuilt vectors, used where its model id and a text's hash match."""

    model_id: str
    precision: str
    cache_dir: Path
    make_embedder: Callable[[], Embedder]
    shipped: Path | None = SHIPPED_VECTORS
    _embedder: Embedder | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._embedder is None:
            self._embedder = self.make_embedder()
        return np.asarray(self._embedder.embed(list(texts)), dtype=np.float32)

    def _shipped_vectors(self, wanted: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        """{id: vector} of ``wanted`` (id, text hash) that the shipped file holds for this model and text."""
        if self.shipped is None or not self.shipped.is_file():
            return {}
        try:
            hits, found = PrebuiltVectors.open(self.shipped).take(self.model_id, wanted)
        except (IndexError_, *DAMAGED_NPZ):
            return {}  # a damaged shipped file: embed as if it were absent
        return dict(zip(hits, found, strict=True))

    def cache_path(self) -> Path:
        digest = hashlib.sha1(self.model_id.encode()).hexdigest()[:12]
        return self.cache_dir / f"tag-examples-{digest}.npz"

    def for_texts(self, store: Database, ids: Sequence[str], texts: dict[str, tuple[str, str]]) -> np.ndarray:
        """Vectors of ``ids``: stored ones for their current content, else cached by text, else shipped (the
        labeled papers, default model), else embedded now; what was not cached is cached (once per model,
        not per workspace)."""
        stored = Embeddings(store).current_vectors(ids, self.model_id)
        keys = {i: hashlib.sha1(document_text(*texts[i]).encode()).hexdigest() for i in ids if i not in stored}
        cache: dict[str, np.ndarray] = {}
        path = self.cache_path()
        if keys and path.is_file():
            try:
                with np.load(path, allow_pickle=False) as data:
                    cache = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
            except DAMAGED_NPZ:
                cache = {}  # a damaged or older cache is rebuilt
        missing = [i for i, key in keys.items() if key not in cache]
        found = self._shipped_vectors([(i, keys[i]) for i in missing]) if missing else {}
        cache.update((keys[i], vector) for i, vector in found.items())
        missing = [i for i in missing if i not in found]
        if missing:
            fresh = self.embed([document_text(*texts[i]) for i in missing])
            cache.update(zip((keys[i] for i in missing), fresh, strict=True))
        if found or missing:
            buf = io.BytesIO()
            np.savez(buf, keys=np.array(sorted(cache)), vectors=np.stack([cache[k] for k in sorted(cache)]))
            write_bytes_atomic(path, buf.getvalue())
        vectors = [np.frombuffer(stored[i], dtype=np.float32) if i in stored else cache[keys[i]] for i in ids]
        return np.stack(vectors).astype(np.float32) if vectors else np.zeros((0, 0), dtype=np.float32)


@dataclass
class TagEnv:
    """Everything the tags stage needs from outside it; the composition root (app) builds it."""

    config: TaggingConfig
    taxonomy: Taxonomy
    vectors: Vectors
    model_path: Path  # where the trained model is saved (numpy + JSON, persist.py)
    label_paths: tuple[Path, ...] = ()  # [tagging] labels, resolved
    legacy_model_path: Path | None = None  # where older versions pickled it: never read, removed on retraining


# -- examples ----------------------------------------------------------------------------------------


def gather_examples(store: Database, env: TagEnv) -> Examples:
    """Every labeled document (later label sources win), then corrections on top."""
    cfg, taxonomy, vectors = env.config, env.taxonomy, env.vectors
    labels, scope = _label_files(env)
    corrections = [(c.doc_id, c.tag, c.add) for c in Tags(store).corrections() if c.tag in taxonomy.names]
    texts = shipped_papers() if cfg.use_dev_labels else {}
    stored = Documents(store).of(set(labels) | {d for d, _, _ in corrections})
    texts.update({i: (doc.title, doc.abstract) for i, doc in stored.items()})
    ids = [i for i in labels if i in texts] + sorted({d for d, _, _ in corrections if d not in labels and d in texts})
    names = taxonomy.names
    row = {doc_id: i for i, doc_id in enumerate(ids)}
    y = np.zeros((len(ids), len(names)), dtype=bool)
    known = np.zeros_like(y)
    weight = np.ones(y.shape, dtype=np.float32)
    user = np.zeros(len(ids), dtype=bool)
    for doc_id, tags in labels.items():
        if doc_id in row:
            decided = scope[doc_id]
            known[row[doc_id]] = [decided is None or n in decided for n in names]
            y[row[doc_id]] = [n in tags for n in names]
    for doc_id, tag, value in corrections:
        if doc_id in row:
            i, j = row[doc_id], names.index(tag)
            y[i, j], known[i, j], weight[i, j] = bool(value), True, cfg.correction_weight
            user[i] = True
    return Examples(
        ids,
        [texts[i][0] for i in ids],
        [texts[i][1] for i in ids],
        vectors.for_texts(store, ids, texts),
        y,
        known,
        weight,
        user,
    )


def _label_files(env: TagEnv) -> tuple[dict[str, set[str]], dict[str, frozenset[str] | None]]:
    """Labels of every label file (later files win), and per paper the tags its labeler decided: the
    shipped labels only know the default taxonomy's tags (a tag a user adds is unknown for those papers,
    not a negative); a user's label file knows every tag (None)."""
    shipped_scope = frozenset(load_taxonomy_file(DEFAULT_TAXONOMY).names)
    labels: dict[str, set[str]] = {}
    scope: dict[str, frozenset[str] | None] = {}
    sources: list[Path] = (list(SHIPPED_LABELS) if env.config.use_dev_labels else []) + list(env.label_paths)
    for path in sources:
        shipped = path in SHIPPED_LABELS
        part = read_label_file(path, env.taxonomy, drop_unknown_tags=shipped)
        labels.update(part)
        scope.update(dict.fromkeys(part, shipped_scope if shipped else None))
    return labels, scope


def labeled_pairs(store: Database, env: TagEnv) -> set[tuple[str, str]]:
    """(doc id, tag) pairs a human has decided: the tags of labeled papers their labeler decided, and
    each correction."""
    scope = _label_files(env)[1]
    names = env.taxonomy.names
    pairs: set[tuple[str, str]] = set()
    for doc_id, decided in scope.items():
        pairs.update((doc_id, n) for n in names if decided is None or n in decided)
    pairs.update((c.doc_id, c.tag) for c in Tags(store).corrections())
    return pairs


# -- fitting -----------------------------------------------------------------------------------------


@dataclass
class Corpus:
    """Unlabeled workspace documents: TF-IDF vocabulary and weak labels."""

    titles: list[str] = field(default_factory=list)
    abstracts: list[str] = field(default_factory=list)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))

    @classmethod
    def sample(cls, store: Database, model_id: str, n: int = WEAK_SAMPLE) -> Corpus:
        rows = Embeddings(store).sample_embedded(model_id, n)
        if not rows:
            return cls()
        return cls(
            [r.title for r in rows],
            [r.abstract for r in rows],
            np.stack([np.frombuffer(r.vector, dtype=np.float32) for r in rows]),
        )


def fit_model(
    examples: Examples, taxonomy: Taxonomy, cfg: TaggingConfig, corpus: Corpus, describe: Describe
) -> TagModel:
    """Train on ``examples``; ``corpus`` gives the TF-IDF vocabulary and weak labels."""
    names = taxonomy.names
    for key, prefs in (("min_precision", cfg.min_precision), ("min_recall", cfg.min_recall)):
        unknown = [tag for tag, _ in prefs if tag not in names]
        if unknown:
            raise TaggingError(
                f"[tagging] {key} names unknown tag(s) {', '.join(unknown)}; valid tags: {', '.join(names)}"
            )
    space = FeatureSpace(taxonomy, use_tfidf=cfg.tfidf)
    vocab = min(VOCAB_SAMPLE, len(corpus.titles))
    space.fit(examples.titles + corpus.titles[:vocab], examples.abstracts + corpus.abstracts[:vocab])
    x = space.transform(examples.titles, examples.abstracts, examples.vectors) if len(examples) else None
    model = TagModel(names, space)
    dim = int(examples.vectors.shape[1]) if len(examples) else int(corpus.vectors.shape[1])
    weak_x: sp.csr_matrix | None = None
    hits = np.zeros((0, 2 * len(names)), dtype=np.float32)
    for j, name in enumerate(names):
        rows = np.flatnonzero(examples.known[:, j]) if len(examples) else np.zeros(0, dtype=int)
        y = examples.y[rows, j] if len(rows) else np.zeros(0, dtype=bool)
        positives, negatives = int(y.sum()), int((~y).sum())
        if positives >= cfg.min_examples and negatives >= cfg.min_examples and x is not None:
            clf, threshold = fit_tag(
                x[rows],
                y,
                examples.weight[rows, j],
                np.ones(len(rows), dtype=bool),
                dim,
                *cfg.preference(name),
                text_columns=space.text_columns(name),
            )
            model.rules[name] = TagRule("model", threshold, positives, clf)
            continue
        if weak_x is None and len(corpus.titles):
            weak_x = space.transform(corpus.titles, corpus.abstracts, corpus.vectors)
            hits = space.matcher.matrix(corpus.titles, corpus.abstracts)
        weak = _weak_rows(hits[:, j], hits[:, len(names) + j]) if weak_x is not None else np.zeros(0, dtype=int)
        if len(weak) and weak_x is not None:
            negs = np.setdiff1d(np.flatnonzero(hits[:, j] + hits[:, len(names) + j] == 0), weak)[: 3 * len(weak)]
            labeled_x = [x[rows]] if x is not None else []
            all_x = sp.vstack([*labeled_x, weak_x[weak], weak_x[negs]], format="csr")
            all_y = np.concatenate([y, np.ones(len(weak), dtype=bool), np.zeros(len(negs), dtype=bool)])
            w = np.concatenate([examples.weight[rows, j], np.full(len(weak) + len(negs), WEAK_WEIGHT)])
            labeled = np.concatenate([np.ones(len(rows), dtype=bool), np.zeros(len(weak) + len(negs), dtype=bool)])
            clf, threshold = fit_tag(
                all_x, all_y, w.astype(np.float32), labeled, dim, *cfg.preference(name), space.text_columns(name)
            )
            model.rules[name] = TagRule("weak", threshold, positives, clf)
            continue
        tag = taxonomy.get(name)
        vector = describe([f"{name.replace('-', ' ')}: {tag.description or ', '.join(tag.keywords)}"])[0]
        model.rules[name] = TagRule("zero-shot", cfg.zero_shot_threshold, positives, description_vector=vector)
    return model


def _weak_rows(title_hits: np.ndarray, abstract_hits: np.ndarray, limit: int = 500) -> np.ndarray:
    return np.flatnonzero((title_hits >= 1) | (abstract_hits >= 2))[:limit]


def _version(taxonomy: Taxonomy, model_id: str, examples: Examples, cfg: TaggingConfig) -> str:
    h = hashlib.sha1()
    for part in (taxonomy.digest, model_id, repr(cfg), *examples.ids):
        h.update(part.encode())
    h.update(examples.y.tobytes())
    h.update(examples.known.tobytes())
    return h.hexdigest()[:12]


def _header(env: TagEnv) -> ModelHeader:
    """What a saved model must have been trained for to be used."""
    return ModelHeader(MODEL_FORMAT, env.taxonomy.digest, env.vectors.model_id, repr(env.config))


def train(store: Database, env: TagEnv) -> TagModel:
    cfg, taxonomy, vectors = env.config, env.taxonomy, env.vectors
    examples = gather_examples(store, env)
    model = fit_model(examples, taxonomy, cfg, Corpus.sample(store, vectors.model_id), vectors.embed)
    model.version = _version(taxonomy, vectors.model_id, examples, cfg)
    write_bytes_atomic(env.model_path, model_bytes(model, _header(env)))
    legacy = env.legacy_model_path
    if legacy is not None and legacy.is_file():
        legacy.unlink(missing_ok=True)  # an old pickled model: never read, replaced by the one just saved
    return model


def load_model(env: TagEnv) -> tuple[TagModel | None, str | None]:
    """The saved model if it was trained for this taxonomy, [tagging] settings and embedding model (else
    None: retrain), and a line for the user when a file was there but not used (an old-format pickle, or a
    file that is not a model radar wrote): neither is ever unpickled."""
    old = _legacy_note(env)
    if not env.model_path.is_file():
        return None, old
    try:
        return read_model(env.model_path, _header(env), env.taxonomy), None
    except StaleModelError:
        return None, old
    except ModelFileError as exc:
        return None, f"{env.model_path} is not a tag model radar wrote ({exc}); ignored and retrained"


def _legacy_note(env: TagEnv) -> str | None:
    legacy = env.legacy_model_path
    if legacy is None or not legacy.is_file():
        return None
    return (
        f"{legacy} is a tag model in the old pickle format; it is not read (a pickle can run code) and the "
        f"model is retrained as {env.model_path.name}"
    )


def saved_model(env: TagEnv) -> TagModel | None:
    """The saved model if it can be used as it is (see load_model), else None."""
    return load_model(env)[0]


# -- tagging -----------------------------------------------------------------------------------------


@dataclass
class TagReport:
    version: str
    trained: bool
    decided: int
    unembedded: int
    train_seconds: float
    seconds: float  # deciding and writing, given the model
    per_tag: dict[str, int]
    strategies: dict[str, str]
    notes: tuple[str, ...] = ()  # lines for the user (a saved model that was not used, and why)

    @property
    def docs_per_s(self) -> float:
        return self.decided / self.seconds if self.seconds > 0 else 0.0


class TagReportJson(msgspec.Struct, frozen=True):
    """`radar tag --json`: a view msgspec fills from a ``TagReport``'s attributes (``of``), the version under the key
    ``model_version``, seconds to 2 places and the rate to 1."""

    version: str = msgspec.field(name="model_version")
    trained: bool
    decided: int
    unembedded: int
    train_seconds: float
    seconds: float
    docs_per_s: float
    per_tag: dict[str, int]
    strategies: dict[str, str]
    notes: list[str]

    def __post_init__(self) -> None:
        force_setattr(self, "train_seconds", round(self.train_seconds, 2))
        force_setattr(self, "seconds", round(self.seconds, 2))
        force_setattr(self, "docs_per_s", round(self.docs_per_s, 1))

    @classmethod
    def of(cls, report: TagReport) -> TagReportJson:
        return msgspec.convert(report, cls, from_attributes=True)


def decide(model: TagModel, titles: Sequence[str], abstracts: Sequence[str], vectors: np.ndarray) -> np.ndarray:
    """Scores (n, tags) for documents; a tag applies where score >= its threshold."""
    return model.scores(model.space.transform(titles, abstracts, vectors), vectors)


def tag_documents(
    store: Database, env: TagEnv, *, retrain: bool = False, progress: Progress | None = None
) -> TagReport:
    """Tag embedded documents that the current model has not decided yet (all of them when retraining)."""
    start = time.perf_counter()
    vectors = env.vectors
    model, note = (None, _legacy_note(env)) if retrain else load_model(env)
    trained = model is None
    if model is None:
        model = train(store, env)
    tag_start = time.perf_counter()
    thresholds = model.thresholds()
    origins = [model.rules[n].origin for n in model.names]
    total = Documents(store).count() - Embeddings(store).count_unembedded(vectors.model_id)
    decided = 0
    for batch in Tags(store).candidates(vectors.model_id, model.version, everything=retrain):
        ids = [r.doc_id for r in batch]
        vecs = np.stack([np.frombuffer(r.vector, dtype=np.float32) for r in batch])
        scores = decide(model, [r.title for r in batch], [r.abstract for r in batch], vecs)
        hits = np.argwhere(scores >= thresholds)
        Tags(store).save_decisions(
            model.version, ids, [(ids[i], model.names[j], float(scores[i, j]), origins[j]) for i, j in hits]
        )
        decided += len(ids)
        if progress:
            progress(decided, total)
    counts = Tags(store).counts()
    return TagReport(
        model.version,
        trained,
        decided,
        Embeddings(store).count_unembedded(vectors.model_id),
        tag_start - start,
        time.perf_counter() - tag_start,
        {n: sum(counts.get(n, {}).values()) for n in model.names},
        {n: model.rules[n].strategy for n in model.names},
        (note,) if note else (),
    )


def record_correction(
    store: Database, taxonomy: Taxonomy, doc_id: str, add: Sequence[str] = (), remove: Sequence[str] = ()
) -> None:
    """Store +tag/-tag corrections for one document: they apply at once and enter the next retrain."""
    if not add and not remove:
        raise TaggingError("nothing to record; give +TAG and/or -TAG, e.g. `radar tag fix 2503.14476 +llm-reasoning`")
    taxonomy.check([*add, *remove])
    both = sorted(set(add) & set(remove))
    if both:
        raise TaggingError(f"{', '.join(both)} is both added and removed; give each tag once")
    if Documents(store).get(doc_id) is None:
        raise TaggingError(f"no document {doc_id!r} in this workspace; find its id with `radar search`")
    Tags(store).save_correction(doc_id, add, remove)


class Tagger(Protocol):
    """The tagging seam (``tag_documents`` is the real one): decide the tags of what is undecided."""

    def __call__(
        self, store: Database, env: TagEnv, *, retrain: bool = False, progress: Progress | None = None
    ) -> TagReport: ...
