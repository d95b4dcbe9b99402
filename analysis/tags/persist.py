"""Saving and loading a trained tag model as numbers and text only: a numpy archive (.npz) whose arrays are
the regressions' weights, the TF-IDF vocabulary and idf, with a JSON spec beside them in the same file.

Nothing in the file can run code: it is read with ``allow_pickle=False`` (a pickle, or an archive holding an
object array, is refused by numpy), the spec is parsed as JSON, and every array is checked for its kind and
shape before use. A file that fails any check is not a model (``ModelFileError``, whose message says why):
the caller retrains and overwrites it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgspec
import numpy as np

from radar.analysis.tags.features import FEATURES, FeatureSpace
from radar.analysis.tags.model import Linear, PairClassifier, TagModel, TagRule
from radar.analysis.tags.taxonomy import Taxonomy
from radar.index.prebuilt import DAMAGED_NPZ

STRATEGIES = ("model", "weak", "zero-shot")


class ModelHeader(msgspec.Struct, frozen=True):
    """What a saved model must have been trained for to be used (``tagger._header``)."""

    format: int  # tagger.MODEL_FORMAT
    taxonomy: str  # the taxonomy's digest
    model_id: str  # the embedding model
    config: str  # repr of the [tagging] settings


class RuleSpec(msgspec.Struct, frozen=True, omit_defaults=True):
    """One tag's rule in the spec; its weights (``classifier``) or description vector (``description``) are
    rows of the archive's arrays (the one it has is written, the other left out)."""

    strategy: str
    threshold: float
    positives: int
    classifier: int | None = None
    description: int | None = None


class ModelSpec(ModelHeader, frozen=True):
    """The JSON spec saved beside the arrays (msgspec: written in field order, read back with every type
    checked)."""

    features: str
    tfidf: bool
    dim: int
    names: list[str]
    version: str
    rules: dict[str, RuleSpec]


class ModelFileError(Exception):
    """The file is not a tag model this version wrote; the message says why (for one line to the user)."""


class StaleModelError(ModelFileError):
    """A model radar wrote, for another taxonomy, settings, embedding model or model format: retrain quietly."""


def model_bytes(model: TagModel, header: ModelHeader) -> bytes:
    """The .npz bytes of ``model``; ``header`` (format, taxonomy digest, embedding model, settings) goes into
    the spec, and ``read_model`` gives the model back only when the same header is asked for."""
    arrays: dict[str, np.ndarray] = {}
    terms = model.space.terms()
    if terms is not None:
        arrays["terms"], arrays["idf"] = terms[0], np.asarray(terms[1], dtype=np.float64)
    rules: dict[str, RuleSpec] = {}
    pairs: list[PairClassifier] = []
    descriptions: list[np.ndarray] = []
    for name in model.names:
        rule = model.rules[name]
        classifier = description = None
        if rule.classifier is not None:
            classifier = len(pairs)
            pairs.append(rule.classifier)
        elif rule.description_vector is not None:
            description = len(descriptions)
            descriptions.append(np.asarray(rule.description_vector, dtype=np.float32))
        rules[name] = RuleSpec(rule.strategy, rule.threshold, rule.positives, classifier, description)
    dim = pairs[0].dim if pairs else 0
    if pairs:
        arrays["emb_coef"] = np.stack([p.embedding.coef for p in pairs]).astype(np.float32)
        arrays["emb_intercept"] = np.array([p.embedding.intercept for p in pairs], dtype=np.float64)
        arrays["text_coef"] = np.stack([p.text.coef for p in pairs]).astype(np.float32)
        arrays["text_intercept"] = np.array([p.text.intercept for p in pairs], dtype=np.float64)
    if descriptions:
        arrays["descriptions"] = np.stack(descriptions)
    spec = ModelSpec(
        **msgspec.structs.asdict(header),
        features=FEATURES,
        tfidf=terms is not None,
        dim=dim,
        names=model.names,
        version=model.version,
        rules=rules,
    )
    buf = io.BytesIO()
    arrays["spec"] = np.array(json.dumps(msgspec.to_builtins(spec)))  # the spacing json.dumps has always written
    np.savez_compressed(buf, allow_pickle=False, **arrays)
    return buf.getvalue()


def read_model(path: Path, header: ModelHeader, taxonomy: Taxonomy) -> TagModel:
    """The model saved at ``path`` for this ``header``; ModelFileError (saying why) when it is not one."""
    try:
        data = np.load(path, allow_pickle=False)
    except DAMAGED_NPZ as exc:  # a pickle is refused here (ValueError) without being read, as is a damaged file
        raise ModelFileError(f"not a numpy archive of numbers ({type(exc).__name__})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ModelFileError("a single numpy array, not a tag model archive")
    try:
        with data:
            arrays = {key: data[key] for key in data.files}
    except DAMAGED_NPZ as exc:  # an object array is refused here (ValueError): it would need a pickle
        raise ModelFileError(f"not a numpy archive of numbers ({type(exc).__name__})") from None
    try:
        text = str(_array(arrays, "spec", "U", 0))
        stamp = msgspec.json.decode(text, type=_Stamp)  # checked before the rest: an older spec is stale, not damaged
        if stamp != _Stamp(**msgspec.structs.asdict(header), features=FEATURES):
            raise StaleModelError("trained for another taxonomy, settings, embedding model or model version")
        return _build(msgspec.json.decode(text, type=ModelSpec), arrays, taxonomy)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ModelFileError(f"its contents do not match a tag model ({type(exc).__name__})") from None


class _Stamp(msgspec.Struct, frozen=True):
    """The spec's keys that say what it was trained for (any of them missing or of another type: not this one)."""

    format: object = None
    taxonomy: object = None
    model_id: object = None
    config: object = None
    features: object = None


def _array(arrays: dict[str, np.ndarray], key: str, kind: str, ndim: int) -> np.ndarray:
    value = arrays[key]
    if not isinstance(value, np.ndarray) or value.dtype.kind not in kind or value.ndim != ndim:
        raise TypeError(f"{key} is not a {ndim}-dimensional array of kind {kind}")
    return value


def _build(spec: ModelSpec, arrays: dict[str, np.ndarray], taxonomy: Taxonomy) -> TagModel:
    names = spec.names
    if names != taxonomy.names:
        raise ValueError("tags")
    terms = idf = None
    if spec.tfidf:
        terms, idf = _array(arrays, "terms", "U", 1), _array(arrays, "idf", "f", 1)
        if len(terms) != len(idf):
            raise ValueError("vocabulary")
    space = FeatureSpace.from_terms(taxonomy, terms, idf)
    dim = spec.dim
    text_width = (len(terms) if terms is not None else 0) + space.extra_columns()
    model = TagModel(list(names), space, version=spec.version)
    for name in names:
        rule = spec.rules[name]
        strategy, threshold, positives = rule.strategy, rule.threshold, rule.positives
        if strategy not in STRATEGIES:
            raise ValueError("strategy")
        if rule.classifier is not None:
            k = rule.classifier
            emb, text = _array(arrays, "emb_coef", "f", 2)[k], _array(arrays, "text_coef", "f", 2)[k]
            if len(emb) != dim or len(text) != text_width:
                raise ValueError("weights")
            pair = PairClassifier(
                dim,
                Linear(emb, float(_array(arrays, "emb_intercept", "f", 1)[k])),
                Linear(text, float(_array(arrays, "text_intercept", "f", 1)[k])),
            )
            model.rules[name] = TagRule(strategy, threshold, positives, classifier=pair)
        else:
            if rule.description is None:
                raise ValueError("rule")
            vector = _array(arrays, "descriptions", "f", 2)[rule.description]
            if dim and len(vector) != dim:
                raise ValueError("description")
            model.rules[name] = TagRule(strategy, threshold, positives, description_vector=vector)
    return model
