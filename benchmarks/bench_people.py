"""Per-person ranking: precision@10 of held-out liked papers, learned model vs the rule-based relevance.

Simulated people from the shipped hand labels (analysis/tags/labels dev + dev2, 1,500 papers): the person
for tag T likes exactly the papers labeled T. Time split: arXiv ids are chronological, so for a split
quantile q the papers before the q-th id are the past (likes = T papers, skipped = the other papers they
saw) and the papers after are next weeks' candidates; the held-out likes are the T papers among them.
Every (tag, q in 0.5/0.6/0.7) is one case: 10 tags x 3 splits = 30 cases.

Rankers (all from reports/people/ranking.py and reports/ranking.py, as `radar digest` runs them):
- learned: logistic regression on [embedding | TF-IDF], likes vs skipped (the fallback threshold aside);
- rules (likes): reports.ranking's relevance from the liked papers (TF-IDF similarity), what an imported
  library gives the rule ranker;
- rules (likes + terms): the same plus the tag's seed keywords from the taxonomy as profile terms (a
  person who also wrote their terms down);
- nearest like: max cosine of the embedding to any liked paper (zotero-arxiv-daily's idea), for reference.
Also a small-library condition: only the 8 most recent likes.

Uncertainty: the mean over cases with a 95% bootstrap interval that resamples tags (the three splits of a
tag are not independent), and the paired difference learned - rules with its interval and win/tie/loss.

    .venv/bin/python benchmarks/bench_people.py          # ~1 min after the vectors are cached
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tagging_data as data  # noqa: E402

from radar.crawler.documents import Document  # noqa: E402
from radar.reports.config import ReportConfig  # noqa: E402
from radar.reports.people.ranking import Example, Training, learned_scores, rule_scores  # noqa: E402
from radar.reports.people.repository import PersonProfile  # noqa: E402
from radar.reports.period import parse_week  # noqa: E402

SPLITS = (0.5, 0.6, 0.7)
K = 10
SMALL_LIBRARY = 8
Ranker = Callable[[list[Example], list[Example], list[Example], list[str]], list[str]]


def _order(ids: list[str]) -> np.ndarray:
    """Chronological order of new-style arXiv ids (YYMM.NNNNN)."""
    return np.array(sorted(range(len(ids)), key=lambda k: (ids[k].split(".")[0], int(ids[k].split(".")[1]))))


def learned(liked: list[Example], skipped: list[Example], cands: list[Example], _terms: list[str]) -> list[str]:
    scores = learned_scores(Training(liked, [], skipped), cands)
    return [s.doc.id for s in sorted(scores, key=lambda s: -s.score)]


def rules(with_terms: bool) -> Ranker:
    def run(liked: list[Example], _skipped: list[Example], cands: list[Example], terms: list[str]) -> list[str]:
        profile = PersonProfile(terms={t.rstrip("*"): 1.0 for t in terms} if with_terms else {})
        scores = rule_scores(
            [c.doc for c in cands], {}, profile, [x.doc for x in liked], parse_week("2025-W01"), ReportConfig()
        )
        return [s.doc.id for s in sorted(scores, key=lambda s: (-s.score, s.doc.id))]

    return run


def nearest(liked: list[Example], _skipped: list[Example], cands: list[Example], _terms: list[str]) -> list[str]:
    likes = np.stack([x.vector for x in liked if x.vector is not None])
    vecs = np.stack([c.vector for c in cands if c.vector is not None])
    best = (vecs @ likes.T).max(axis=1)
    return [cands[i].doc.id for i in np.argsort(-best, kind="stable")]


def boot(values: dict[str, list[float]], seed: int = 0, n: int = 2000) -> tuple[float, float, float]:
    """Mean over all cases and a 95% interval resampling tags (clusters)."""
    tags = list(values)
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(n):
        pick = rng.choice(len(tags), len(tags))
        means.append(np.mean([v for j in pick for v in values[tags[j]]]))
    flat = [v for vs in values.values() for v in vs]
    return float(np.mean(flat)), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main() -> None:
    ls = data.load_labeled()
    order = _order(ls.ids)
    examples = [
        Example(Document(ls.ids[i], "paper", "bench", ls.titles[i], ls.abstracts[i], "2025-01-01"), ls.vectors[i])
        for i in range(len(ls.ids))
    ]
    rankers: dict[str, Ranker] = {
        "learned": learned,
        "rules (likes)": rules(False),
        "rules (likes+terms)": rules(True),
        "nearest like": nearest,
    }
    conditions = {"full library": None, f"{SMALL_LIBRARY} most recent likes": SMALL_LIBRARY}
    print(f"{len(ls.ids)} labeled papers, {len(ls.names)} tags x {len(SPLITS)} time splits; precision@{K}")
    for cond, limit in conditions.items():
        results: dict[str, dict[str, list[float]]] = {r: {} for r in rankers}
        oracle: list[float] = []
        n_likes: list[int] = []
        for j, tag in enumerate(ls.names):
            terms = list(ls.taxonomy.tags[j].keywords)
            for q in SPLITS:
                cut = int(len(order) * q)
                past, future = order[:cut], order[cut:]
                liked = [examples[i] for i in past if ls.y[i, j]]
                if limit:
                    liked = liked[-limit:]
                skipped = [examples[i] for i in past if not ls.y[i, j]]
                cands = [examples[i] for i in future]
                truth = {ls.ids[i] for i in future if ls.y[i, j]}
                if len(liked) < 5 or not truth:
                    continue
                n_likes.append(len(liked))
                oracle.append(min(K, len(truth)) / K)
                for name, ranker in rankers.items():
                    top = ranker(liked, skipped, cands, terms)[:K]
                    results[name].setdefault(tag, []).append(sum(t in truth for t in top) / K)
        n_cases = sum(len(v) for v in results["learned"].values())
        print(
            f"\n== {cond}: {n_cases} cases, likes per person {min(n_likes)}-{max(n_likes)}, "
            f"best possible P@{K} {np.mean(oracle):.3f}"
        )
        print(f"{'ranker':<22} {'P@10':>6}  95% CI (tags resampled)")
        for name, per_tag in results.items():
            m, lo, hi = boot(per_tag)
            print(f"{name:<22} {m:6.3f}  [{lo:.3f}, {hi:.3f}]")
        for base in ("rules (likes)", "rules (likes+terms)"):
            diff = {
                t: [a - b for a, b in zip(results["learned"][t], results[base][t], strict=True)]
                for t in results["learned"]
            }
            m, lo, hi = boot(diff)
            flat = [d for v in diff.values() for d in v]
            wins, ties = sum(d > 0 for d in flat), sum(d == 0 for d in flat)
            print(
                f"learned - {base:<20} {m:+.3f} [{lo:+.3f}, {hi:+.3f}]  "
                f"wins {wins} / ties {ties} / losses {len(flat) - wins - ties}"
            )
        print("per tag (learned / rules likes / rules likes+terms):")
        for t in results["learned"]:
            vals = [np.mean(results[r][t]) for r in ("learned", "rules (likes)", "rules (likes+terms)")]
            print(f"  {t:<24} " + " / ".join(f"{v:.2f}" for v in vals))


if __name__ == "__main__":
    main()
