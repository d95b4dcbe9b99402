"""Names benchmark: kind accuracy on the labeled names of each pool (random, frequent, focus, new),
cross-validated with folds by name, beside the rule baseline and the decider without each lever; and the
speed of finding names on the full corpus beside a plain pass over the texts.

    .venv/bin/python benchmarks/bench_names.py [--corpus ../shared/data/arxiv_corpus_full.jsonl.gz]
        [--labels ../shared/labels] [--extra FILE | --no-extra] [--seeds 3] [--limit N] [--context] [--levers]

1. Speed: a plain pass (every title and abstract tokenised once with the names' token pattern: the floor any
   reading of the texts costs), ``evidence.collect`` (both passes, the context of every mention), the kinds
   (``find.classify``: features, the fit with its inner CV for the method margins, prediction of every name);
   CPU seconds, papers/s on one core, peak RSS.
2. Quality: 5-fold cross-validation over the labels of names_dev.jsonl (431 random names), names_dev2.jsonl
   (441 names with 30 or more papers) and names_dev3.jsonl (76 names the trend detector listed as new), all
   pooled, folds by name group (a name and its aliases in one fold; asserted), repeated over --seeds fold
   splits. Scored per pool: random (names_dev), frequent (names_dev2), focus (the names of dev2 and dev3
   labeled ``focus``: the lab's areas) and new (names_dev3). Deciders, in the same run: the rules
   (``features.rule_kind``), the model before the frequent-name labels (balanced class weights, no expansion /
   frequent / neighbour features), "round 2" (Radar without the use-cue and lab-area features), "+uses" (the
   use cues added), and Radar (``evaluate.RADAR``: what ``find.classify`` fits, the method margins chosen by
   inner CV on each training part); ``--evidence-cache DIR`` keeps the evidence pass between runs. With
   --context also Radar with the context vectors (packaged sentence encoder; ``context.py``) for the names
   the evidence leaves unsure. With --levers also the levers measured and left off (``evaluate.LEVERS``: two
   stages, name or generic term then the kind among the names; soft class weights; expansion head words; no
   frequent-name features, or those from 10, 15 or 20 papers).
   The lexicon (a labeled name keeps its label) is not in these figures: a test name is never among its
   fold's labels, and the neighbour features read the training part's labels only. The extra training labels
   (``--extra``, default the shipped ``names_extra.jsonl``; ``--no-extra`` leaves them out) join every fold's
   training part and lexicon and are never scored; asserted: each has fewer than 30 papers in the corpus (the
   frequent pool and its held-out half start at 30) and none is an evaluated name (group or spelling key).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import pickle
import resource
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import orjson
from rich.console import Console
from rich.table import Table

from radar.analysis.names.context import Embed, context_vectors
from radar.analysis.names.evaluate import (
    FREQUENT_POOL,
    LEVERS,
    VARIANTS,
    CrossValidation,
    check_extra,
    cross_validate,
    group_of,
)
from radar.analysis.names.evidence import Corpus, collect
from radar.analysis.names.extract import _TOKEN
from radar.analysis.names.find import classify, introducing, load_labels
from radar.analysis.names.kinds import KINDS, MARGINS

console = Console(width=150)
ROOT = Path(__file__).resolve().parents[1]
FILES = (("names_dev.jsonl", "random"), ("names_dev2.jsonl", "frequent"), ("names_dev3.jsonl", "new"))
POOLS = ("random", "frequent", "focus", "new", "all")


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def read_extra(path: Path | None) -> list[tuple[str, str]]:
    """(name, kind) per extra training label (``names_extra.jsonl``, read as the stage reads it; ``unknown`` left
    out); none without a path."""
    return [] if path is None else load_labels(path.read_text("utf-8"))


def check_rare(corpus: Corpus, extra: Sequence[tuple[str, str]]) -> int:
    """Assert that every extra training name has fewer than ``FREQUENT_POOL`` papers in the corpus (the frequent pool,
    whose held-out half checks the product, starts there); the most papers of one."""
    counts = {n: ev.n_docs if (ev := corpus.find(n)) is not None else 0 for n, _ in extra}
    frequent = sorted(n for n, c in counts.items() if c >= FREQUENT_POOL)
    assert not frequent, f"{len(frequent)} extra training names have {FREQUENT_POOL} or more papers: {frequent[:5]}"
    return max(counts.values(), default=0)


def read_labels(folder: Path) -> tuple[list[tuple[str, str]], list[set[str]]]:
    """(name, kind) per labeled name of the three files (``unknown`` left out) and the pools of each."""
    labels, pools = [], []
    for file, pool in FILES:
        for line in (folder / file).read_text("utf-8").splitlines():
            if not line.strip():
                continue
            row = orjson.loads(line)
            if row["kind"] not in KINDS:
                continue
            labels.append((str(row["name"]), str(row["kind"])))
            pools.append({pool, "all"} | ({"focus"} if row.get("focus") else set()))
    return labels, pools


class _Counted:
    """An ``Embed`` that counts the texts it embeds and the CPU seconds it spends."""

    def __init__(self, embed: Embed) -> None:
        self.embed, self.texts, self.cpu = embed, 0, 0.0

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        cpu = time.process_time()
        out = self.embed(texts)
        self.cpu += time.process_time() - cpu
        self.texts += len(texts)
        return out


# the modules whose code decides the evidence: a cached evidence pass is reused only when none of them changed
_EVIDENCE_CODE = ("extract.py", "aliases.py", "evidence.py")


def _cache_file(folder: Path, corpus: Path, limit: int) -> Path:
    """Where the evidence of this corpus file (size and mtime), ``--limit`` and evidence code is cached."""
    h = hashlib.sha256(f"{corpus.resolve()}|{corpus.stat().st_size}|{corpus.stat().st_mtime_ns}|{limit}".encode())
    for name in _EVIDENCE_CODE:
        h.update((ROOT / "analysis/names" / name).read_bytes())
    return folder / f"evidence-{h.hexdigest()[:16]}.pickle"


def _collect(docs: list[SimpleNamespace], cache: Path | None) -> tuple[Corpus, float, bool]:
    """The evidence, its CPU seconds (of the pass that computed it) and whether it came from the cache."""
    if cache is not None and cache.exists():
        with cache.open("rb") as fh:
            corpus, cpu_collect = pickle.load(fh)  # noqa: S301 (our own scratch file)
        return corpus, cpu_collect, True
    cpu = time.process_time()
    corpus = collect(docs)
    cpu_collect = time.process_time() - cpu
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        with tmp.open("wb") as fh:
            pickle.dump((corpus, cpu_collect), fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(cache)
    return corpus, cpu_collect, False


def speed(  # noqa: ANN201
    docs: list[SimpleNamespace], labels: list[tuple[str, str]], embed: Embed | None, cache: Path | None = None
):
    cpu = time.process_time()
    tokens = sum(len(_TOKEN.findall(d.title)) + len(_TOKEN.findall(d.abstract)) for d in docs)
    cpu_plain = time.process_time() - cpu
    corpus, cpu_collect, cached = _collect(docs, cache)
    cpu = time.process_time()
    kinds = classify(corpus, labels)
    cpu_classify = time.process_time() - cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    table = Table(title=f"Speed: {len(docs):,} papers, {len(corpus.names):,} names (>= 3 papers), one core")
    for col in ("step", "CPU s", "papers/s", "vs plain pass"):
        table.add_column(col, justify="left" if col == "step" else "right")
    table.add_row("plain pass (tokenise every text)", f"{cpu_plain:.1f}", f"{len(docs) / cpu_plain:,.0f}", "1.0x")
    table.add_row(
        "evidence (collect)" + (" (cached: the pass that made the cache)" if cached else ""),
        f"{cpu_collect:.1f}",
        f"{len(docs) / cpu_collect:,.0f}",
        f"{cpu_collect / cpu_plain:.1f}x",
    )
    table.add_row("kinds (classify)", f"{cpu_classify:.1f}", "", f"{cpu_classify / cpu_plain:.1f}x")
    if embed is not None:
        counted = _Counted(embed)
        cpu = time.process_time()
        classify(corpus, labels, counted)
        cpu_context = time.process_time() - cpu
        table.add_row(
            f"kinds with context vectors ({counted.texts:,} snippets, {counted.cpu:.1f} s in the encoder)",
            f"{cpu_context:.1f}",
            "",
            f"{cpu_context / cpu_plain:.1f}x",
        )
    console.print(table)
    console.print(f"{tokens:,} tokens; peak RSS {peak_mb:,.0f} MB")
    by_kind: dict[str, int] = {}
    for kind, _ in kinds.values():
        by_kind[kind] = by_kind.get(kind, 0) + 1
    console.print("names per kind: " + ", ".join(f"{k} {by_kind.get(k, 0):,}" for k in KINDS))
    return corpus


def accuracy_table(runs: list[CrossValidation], pools: list[set[str]], variants: Sequence[str]) -> None:
    table = Table(title="Accuracy per pool (mean over fold splits [min, max]); method precision / recall in brackets")
    table.add_column("decider")
    subsets = {p: [i for i, ps in enumerate(pools) if p in ps] for p in POOLS}
    for p in POOLS:
        table.add_column(f"{p} ({len(subsets[p])})", justify="right")
    for v in variants:
        cells = [v]
        for p in POOLS:
            scores = [r.scores(subsets[p])[v] for r in runs]
            accs = [s.accuracy for s in scores]
            prec = [x for s in scores if (x := s.precision["method"]) is not None]
            rec = [y for s in scores if (y := s.recall["method"]) is not None]
            mp = _fmt(statistics.fmean(prec)) if prec else "-"
            mr = _fmt(statistics.fmean(rec)) if rec else "-"
            cells.append(f"{statistics.fmean(accs):.3f} [{min(accs):.3f}, {max(accs):.3f}] ({mp}/{mr})")
        table.add_row(*cells)
    console.print(table)


def kinds_table(runs: list[CrossValidation], pools: list[set[str]], pool: str, variant: str) -> None:
    idx = [i for i, ps in enumerate(pools) if pool in ps]
    truth = [runs[0].truth[i] for i in idx]
    table = Table(
        title=f"{variant} per kind on the {pool} names (precision / recall, mean over splits; Wilson 95% of split 0)"
    )
    for col in ("kind", "labels", "precision", "recall"):
        table.add_column(col, justify="left" if col == "kind" else "right")
    for kind in KINDS:
        scores = [r.scores(idx)[variant] for r in runs]
        prec = [x for s in scores if (x := s.precision[kind]) is not None]
        rec = [y for s in scores if (y := s.recall[kind]) is not None]
        table.add_row(
            kind,
            str(truth.count(kind)),
            _fmt(statistics.fmean(prec)) if prec else "-",
            _fmt(statistics.fmean(rec)) if rec else "-",
        )
    console.print(table)
    s0 = runs[0].scores(idx)[variant]
    console.print(
        f"{variant}, {pool}: accuracy {s0.accuracy:.3f}, "
        f"Wilson 95% [{s0.accuracy_ci[0]:.3f}, {s0.accuracy_ci[1]:.3f}] (split 0)"
    )


def focus_errors(runs: list[CrossValidation], pools: list[set[str]], variants: Sequence[str]) -> None:
    """Per decider, the lab-focus names it gets wrong in some fold split and what it said in each."""
    idx = [i for i, ps in enumerate(pools) if "focus" in ps]
    console.print("Lab-focus names said wrong (the kind said in each split that got it wrong):")
    for v in variants:
        wrong: dict[str, list[str]] = {}
        for r in runs:
            for i in idx:
                if r.predicted[v][i] != r.truth[i]:
                    wrong.setdefault(f"{r.names[i]} ({r.truth[i]})", []).append(r.predicted[v][i])
        console.print(f"  {v}: " + "; ".join(f"{n}: {'/'.join(said)}" for n, said in wrong.items()))


def margin_table(runs: list[CrossValidation], pools: list[set[str]]) -> None:
    table = Table(title="Radar's fits at fixed method margins (frequent names: accuracy, method P / R; all: accuracy)")
    for col in ("margin", "frequent acc", "frequent method P", "frequent method R", "all acc"):
        table.add_column(col, justify="right")
    freq = [i for i, ps in enumerate(pools) if "frequent" in ps]
    for m in MARGINS:
        key = f"margin={m:.2f}"
        f_scores = [r.scores(freq)[key] for r in runs]
        a_scores = [r.scores()[key] for r in runs]
        prec = [x for s in f_scores if (x := s.precision["method"]) is not None]
        table.add_row(
            f"{m:.2f}",
            f"{statistics.fmean(s.accuracy for s in f_scores):.3f}",
            _fmt(statistics.fmean(prec)) if prec else "-",
            _fmt(statistics.fmean(s.recall["method"] or 0.0 for s in f_scores)),
            f"{statistics.fmean(s.accuracy for s in a_scores):.3f}",
        )
    console.print(table)
    margins = [m for r in runs for m in r.margins.get("Radar", [])]
    console.print(f"method margins (rare, frequent names) chosen by inner CV per outer fold: {margins}")


# the names the method-cards issue called out, with their kind in the labels' definitions (NAMES.md lists
# FlashAttention among the methods, vLLM/SGLang/DeepSpeed among the systems); GRPO is checked for its introducer
CALLED_OUT = {
    **dict.fromkeys(("PPO", "DPO", "GSPO", "RLOO", "AWQ", "GPTQ", "KTO", "LoRA", "GRPO", "FlashAttention"), "method"),
    **dict.fromkeys(("DeepSpeed", "vLLM", "SGLang"), "system"),
}


def called_out_table(corpus: Corpus, kinds: dict[str, tuple[str, float]], oof: dict[str, str]) -> None:
    """The product's kind (the shipped labels as lexicon) of each called-out name on the full corpus, its
    introducing paper, and for a labeled one the cross-validated kind (its fold's labels left out)."""
    table = Table(title="Names the issue called out, full corpus (product: a labeled name keeps its label)")
    for col in ("name", "expected", "kind", "p", "labeled", "out-of-fold kind", "introduced by", "papers"):
        table.add_column(col)
    right = 0
    for name, expected in CALLED_OUT.items():
        ev = corpus.find(name)
        if ev is None:
            table.add_row(name, expected, "not found", "", "", "", "", "")
            continue
        kind, p = kinds[ev.key]
        intro = introducing(ev) if kind != "generic" else None
        right += kind == expected
        table.add_row(
            name,
            expected,
            kind,
            f"{p:.2f}",
            "yes" if name in oof else "no",
            oof.get(name, ""),
            corpus.ids[intro] if intro is not None else "-",
            str(ev.n_docs),
        )
    console.print(table)
    console.print(f"called-out names of the expected kind: {right} of {len(CALLED_OUT)}")


def read_corpus(path: Path, limit: int = 0) -> list[SimpleNamespace]:
    """The corpus file's papers as the names stage reads them (the first ``limit``; all with 0)."""
    docs = []
    with gzip.open(path, "rb") as fh:
        for line in fh:
            d = orjson.loads(line)
            docs.append(
                SimpleNamespace(
                    id=d["id"],
                    title=d["title"],
                    abstract=d["abstract"],
                    published=d["published"],
                    categories=tuple(d.get("categories", ())),
                )
            )
            if limit and len(docs) >= limit:
                break
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/arxiv_corpus_full.jsonl.gz")
    ap.add_argument("--labels", type=Path, default=ROOT.parent / "shared/labels", help="folder of names_dev*.jsonl")
    ap.add_argument(
        "--extra",
        type=Path,
        default=ROOT / "analysis/names/labels/names_extra.jsonl",
        help="extra training labels (names of fewer than 30 papers, none of the evaluated ones): added to every "
        "fold's training and lexicon, never evaluated",
    )
    ap.add_argument("--no-extra", action="store_true", help="without the extra training labels")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="read only the first N papers (0: all)")
    ap.add_argument("--context", action="store_true", help="also the context vectors (the packaged encoder)")
    ap.add_argument("--levers", action="store_true", help="also the levers measured and left off (evaluate.LEVERS)")
    ap.add_argument("--model-cache", type=Path, default=Path("/tmp/radar-bench-names/models"))
    ap.add_argument(
        "--evidence-cache",
        type=Path,
        default=None,
        help="folder to keep the evidence pass in (reused while the corpus and extract/aliases/evidence code are "
        "unchanged; its CPU seconds are those of the run that made it)",
    )
    args = ap.parse_args()
    embed: Embed | None = None
    if args.context:
        from radar.index.config import EmbeddingConfig
        from radar.index.embedder import make_embedder

        # one thread: the CPU seconds printed are what one core spends
        embed = make_embedder(EmbeddingConfig(threads=1), device="cpu", cache_dir=args.model_cache).embed
    docs = read_corpus(args.corpus, args.limit)
    labels, pools = read_labels(args.labels)
    extra = read_extra(None if args.no_extra else args.extra)
    cache = _cache_file(args.evidence_cache, args.corpus, args.limit) if args.evidence_cache else None
    corpus = speed(docs, labels + extra, embed, cache)
    missing = [n for n, _ in labels if corpus.find(n) is None]
    console.print(f"labels: {len(labels)} names, {len(missing)} not found as a name of the corpus {missing[:8]}")
    if extra:
        most = check_rare(corpus, extra) if not args.limit else None  # a --limit corpus counts fewer papers
        found_extra = check_extra(corpus, labels, extra)  # none of them is an evaluated name (asserted)
        console.print(
            f"extra training labels ({args.extra.name}): {len(extra)}, {len(found_extra)} found in the corpus, "
            f"most papers of one {most} (< {FREQUENT_POOL} asserted), none an evaluated name (asserted)"
        )
    vectors = None
    if embed is not None:  # the labeled names' context vectors: from the corpus only, no label read
        found = [group_of(corpus, n) for n, _ in labels + check_extra(corpus, labels, extra)]
        keys = sorted({g for g in found if g in corpus.names})
        by_key = dict(zip(keys, context_vectors(corpus, keys, embed), strict=True))
        dim = next(iter(by_key.values())).shape[0] if by_key else 0
        vectors = np.stack([by_key.get(g, np.zeros(dim, dtype=np.float32)) for g in found])
    cpu = time.process_time()
    deciders = {**VARIANTS, **(LEVERS if args.levers else {})}
    runs = [
        cross_validate(corpus, labels, k=5, seed=s, variants=deciders, curve=True, vectors=vectors, extra=extra)
        for s in range(args.seeds)
    ]
    console.print(f"cross-validation: {args.seeds} fold splits, {time.process_time() - cpu:.0f} s CPU")
    variants = ["rules", *deciders, *(["+context"] if vectors is not None else [])]
    accuracy_table(runs, pools, variants)
    focus_errors(runs, pools, variants[1:])
    for pool in ("frequent", "focus"):
        kinds_table(runs, pools, pool, "Radar")
    margin_table(runs, pools)
    oof = {n: k for n, k in zip(runs[0].names, runs[0].predicted["Radar"], strict=True) if n in CALLED_OUT}
    called_out_table(corpus, classify(corpus, labels + extra), oof)


if __name__ == "__main__":
    main()
