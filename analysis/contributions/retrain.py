"""Rebuild the shipped models from the shipped labels.

    python -m radar.analysis.contributions.retrain                          # model.json (what papers introduce)
    python -m radar.analysis.contributions.retrain --consequence --db DIR/radar.db [--before YYYY-MM-DD]

``model.json`` is fitted on the labeled papers alone: the measured weeks and the training-only labels
(``model.fit_shipped``; deterministic: a slow test checks the shipped file is what they train).
``consequence.json`` reads the database of a workspace of the full corpus as `radar import`, `radar index` and
`radar tag` leave it (its cards are the examples; ``consequence_fit``) and is fitted on the introductions before
``--before`` (default: every one).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from radar.analysis.contributions.consequence import CONSEQUENCE_FILE
from radar.analysis.contributions.consequence_fit import examples, fit_model, load_adopted, load_leads
from radar.analysis.contributions.labels import load_labeled, load_training
from radar.analysis.contributions.linear import encode
from radar.analysis.contributions.model import MODEL_FILE, fit_shipped
from radar.analysis.tags.taxonomy import load_taxonomy
from radar.store import Store


def _consequence(db: Path, before: str) -> int:
    groups = {t: g for g, names in load_taxonomy(None).groups.items() for t in names}
    with Store(db) as store:
        exs = examples(store, "", "9999", groups=groups, leads=load_leads(), adopted=load_adopted())
    model = fit_model(exs, before)
    path = Path(__file__).with_name(CONSEQUENCE_FILE)
    path.write_bytes(encode(model))
    labeled = sum(e.lead is not None for e in exs if e.day < before)
    print(f"wrote {path} ({model.version}): {labeled} labeled and {len(exs):,} cards before {before}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="rebuild the shipped contribution models")
    ap.add_argument("--consequence", action="store_true", help="the consequence model (needs --db)")
    ap.add_argument("--db", type=Path, help="radar.db of a workspace of the full corpus, imported, indexed and tagged")
    ap.add_argument("--before", default="9999-12-31", help="fit on introductions before this day (YYYY-MM-DD)")
    args = ap.parse_args(argv)
    if args.consequence:
        if args.db is None or not args.db.is_file():
            ap.error("--consequence needs --db DIR/radar.db (the database of a workspace of the full corpus)")
        return _consequence(args.db, args.before)
    model = fit_shipped(load_labeled(), load_training())
    path = Path(__file__).with_name(MODEL_FILE)
    path.write_bytes(encode(model))
    print(f"wrote {path} ({model.version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
