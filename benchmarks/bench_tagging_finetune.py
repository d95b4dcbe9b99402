"""Would a tagging encoder fine-tuned on the labels help? Across label sets, before any integration.

    nice -n 10 .venv/bin/python benchmarks/bench_tagging_finetune.py --top-layers 1 --epochs 3 --lr 1e-4 --no-oof

Trained on dev, scored on dev2, and the reverse (no test paper in training, asserted). In the same run:
- the tagger as it is (`fit_model` on the stored vectors of the packaged MiniLM; cached per direction);
- the packaged MiniLM with a linear multi-label head, title + abstract cut to --max-len tokens: the
  head starts as the embedding regressions (C = 10) on the frozen encoder's unit vectors ("frozen LR"),
  then encoder and head are fine-tuned with BCE on the training set only (--top-layers N: only the top
  N transformer layers; the frozen lower layers' outputs come once from the index's fp32 ONNX export
  and are cached; 0 = every layer, about 85 min per direction on the loaded 2-core machine, not run);
- the tagger with the stored vectors replaced by the fine-tuned encoder's vectors (its thresholds come
  from inner CV on vectors the encoder was trained on: biased; the mAP lines are threshold-free);
- mean average precision over tags of each one's probabilities, and of the fine-tuned head averaged
  with the tagger or with the tagger's text regression;
- without --no-oof: F1 of those averages with thresholds from out-of-fold head probabilities of 3
  fine-tunes on thirds of the training set (3 more fine-tunes per direction; not run in the figures of
  docs/benchmarks.md).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tagging_data as data
from bench_tagging import examples_of, no_describe

from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.evaluate import scores_table
from radar.analysis.tags.model import best_threshold
from radar.analysis.tags.tagger import Corpus, decide, fit_model
from radar.index.embedder import document_text, resolve_model_dir


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def lower_states(model: Any, enc: dict[str, Any], top_layers: int) -> Any:
    """Hidden states entering the top ``top_layers`` layers (frozen below), padded as ``enc``."""
    import torch

    out = []
    with torch.inference_mode():
        for lo in range(0, len(enc["input_ids"]), 64):
            hs = model(
                input_ids=enc["input_ids"][lo : lo + 64],
                attention_mask=enc["attention_mask"][lo : lo + 64],
                output_hidden_states=True,
            ).hidden_states
            out.append(hs[len(model.encoder.layer) - top_layers])
    return torch.cat(out).clone()


def onnx_states(texts: list[str], enc: dict[str, Any], top_layers: int) -> Any:
    """Hidden states entering the top ``top_layers`` layers from the index's fp32 ONNX export (the same
    weights; much faster than torch on a loaded CPU), cached in the benchmark cache."""
    import hashlib

    import onnx
    import onnxruntime as ort
    import torch

    from radar.index.embedder import model_fingerprint
    from radar.index.onnx_export import export

    n_ids = enc["input_ids"].shape[1]
    digest = hashlib.sha1("\n".join([str(n_ids), str(top_layers), *texts]).encode()).hexdigest()[:16]
    path = data.cache_dir() / f"states-{digest}.npy"
    if path.is_file():
        return torch.from_numpy(np.load(path, allow_pickle=False).astype(np.float32))
    model_dir = resolve_model_dir("default")
    onnx_path = export(model_dir, data.cache_dir() / "models" / model_fingerprint(model_dir), quantize=False)
    graph = onnx.load(str(onnx_path))
    name = f"/inner/encoder/layer.{6 - top_layers - 1}/output/LayerNorm/LayerNormalization_output_0"
    graph.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(graph.SerializeToString(), options, providers=["CPUExecutionProvider"])
    out = []
    for lo in range(0, len(texts), 32):
        ids = enc["input_ids"][lo : lo + 32].numpy()
        mask = enc["attention_mask"][lo : lo + 32].numpy()
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        out.append(session.run([name], feeds)[0].astype(np.float16))
    states = np.concatenate(out)
    np.save(path, states)
    return torch.from_numpy(states.astype(np.float32))


def upper_layers(model: Any, hidden: Any, mask: Any, top_layers: int) -> Any:
    from transformers.masking_utils import create_bidirectional_mask

    ext = create_bidirectional_mask(config=model.config, inputs_embeds=hidden, attention_mask=mask)
    for layer in model.encoder.layer[len(model.encoder.layer) - top_layers :]:
        out = layer(hidden, attention_mask=ext)
        hidden = out[0] if isinstance(out, tuple) else out
    return hidden


class FineTuner:
    """MiniLM + a linear multi-label head, trained with BCE (plain torch loop) on rows of ``texts``.

    With ``top_layers`` the lower layers stay frozen: their output for every text is computed once
    (shared by every fine-tune of this process) and only the top layers run in training and encoding."""

    _shared: dict[tuple[int, int, int], tuple[Any, Any]] = {}

    def __init__(self, texts: list[str], max_len: int, top_layers: int, epochs: int, lr: float, seed: int) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        torch.set_num_threads(2)
        self.torch = torch
        self.dir = resolve_model_dir("default")
        self.AutoModel = AutoModel
        self.max_len, self.top_layers, self.epochs, self.lr, self.seed = max_len, top_layers, epochs, lr, seed
        key = (id(texts), max_len, top_layers)
        if key not in self._shared:
            tok = AutoTokenizer.from_pretrained(self.dir)
            enc = tok(texts, truncation=True, max_length=max_len, padding="max_length", return_tensors="pt")
            states = None
            if top_layers:
                start = time.perf_counter()
                states = onnx_states(texts, enc, top_layers)
                log(f"frozen lower layers of {len(texts)} texts: {time.perf_counter() - start:.0f} s")
            self._shared[key] = (enc, states)
        self.enc, self.states = self._shared[key]

    @staticmethod
    def _pool(hidden: Any, mask: Any) -> Any:
        m = mask.unsqueeze(-1).float()
        return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)

    def _hidden(self, idx: np.ndarray) -> tuple[Any, Any]:
        mask = self.enc["attention_mask"][idx]
        width = int(mask.sum(1).max())
        mask = mask[:, :width]
        if self.states is not None:
            return upper_layers(self.model, self.states[idx][:, :width], mask, self.top_layers), mask
        ids = self.enc["input_ids"][idx][:, :width]
        return self.model(input_ids=ids, attention_mask=mask).last_hidden_state, mask

    def fit(self, rows: np.ndarray, y: np.ndarray) -> FineTuner:
        torch = self.torch
        torch.manual_seed(self.seed)
        self.model = self.AutoModel.from_pretrained(self.dir)
        if hasattr(self, "head"):
            del self.head
        n_layers = len(self.model.encoder.layer)
        if self.top_layers:
            for p in self.model.parameters():
                p.requires_grad = False
            for layer in self.model.encoder.layer[n_layers - self.top_layers :]:
                for p in layer.parameters():
                    p.requires_grad = True
        # the head starts as the tagger's embedding regressions (C = 10) on the frozen encoder's unit
        # vectors: fine-tuning then moves the encoder (and head) from a head that already works
        self.model.eval()
        self.head = torch.nn.Linear(self.model.config.hidden_size, y.shape[1])
        frozen = self.encode(rows)[0]
        with threadpool_limits(1):
            for j in range(y.shape[1]):
                lr = LogisticRegression(C=10.0, max_iter=2000).fit(frozen, y[:, j])
                self.head.weight.data[j] = torch.from_numpy(lr.coef_[0].astype(np.float32))
                self.head.bias.data[j] = float(lr.intercept_[0])
        if self.epochs == 0:
            return self
        loss_fn = torch.nn.BCEWithLogitsLoss()
        params = [
            {"params": [p for p in self.model.parameters() if p.requires_grad], "lr": self.lr},
            {"params": self.head.parameters(), "lr": self.lr},
        ]
        opt = torch.optim.AdamW(params, weight_decay=0.01)
        yt = torch.tensor(y, dtype=torch.float32)
        rng = np.random.default_rng(self.seed)
        batch = 16
        steps = self.epochs * ((len(rows) + batch - 1) // batch)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, 1 - s / steps)
        )
        self.model.train()
        for _ in range(self.epochs):
            order = rng.permutation(len(rows))
            for lo in range(0, len(rows), batch):
                idx = order[lo : lo + batch]
                hidden, mask = self._hidden(rows[idx])
                pooled = torch.nn.functional.normalize(self._pool(hidden, mask), dim=-1)
                loss = loss_fn(self.head(pooled), yt[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
        self.model.eval()
        return self

    def encode(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(unit vectors, head probabilities) of ``rows``."""
        torch = self.torch
        vecs, probs = [], []
        with torch.inference_mode():
            for lo in range(0, len(rows), 64):
                hidden, mask = self._hidden(rows[lo : lo + 64])
                pooled = torch.nn.functional.normalize(self._pool(hidden, mask), dim=-1)
                vecs.append(pooled.numpy())
                if hasattr(self, "head"):
                    probs.append(torch.sigmoid(self.head(pooled)).numpy())
        if not probs:
            return np.concatenate(vecs), np.zeros((len(rows), 0))
        return np.concatenate(vecs), np.concatenate(probs)


def with_vectors(ls: data.LabeledSet, vectors: np.ndarray) -> data.LabeledSet:
    return data.LabeledSet(ls.ids, ls.titles, ls.abstracts, vectors, ls.y, ls.source, ls.taxonomy)


def tagger_scores(
    ls: data.LabeledSet, train: np.ndarray, test: np.ndarray, corpus: Corpus, cache: str = ""
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tagger trained on ``train``: its scores on ``test``, thresholds, and its text regression's
    probabilities on ``test`` (cached under ``cache`` when given: the tagger does not change here)."""
    import pickle

    path = data.cache_dir() / f"tagger-{cache}.pkl"
    if cache and path.is_file():
        return pickle.loads(path.read_bytes())  # type: ignore[no-any-return]  # this benchmark's own file
    model = fit_model(examples_of(ls, train), ls.taxonomy, TaggingConfig(), corpus, no_describe)
    titles, abstracts = [ls.titles[i] for i in test], [ls.abstracts[i] for i in test]
    scores = decide(model, titles, abstracts, ls.vectors[test])
    x = model.space.transform(titles, abstracts, ls.vectors[test])
    text = np.zeros((len(test), len(ls.names)))
    for j, n in enumerate(ls.names):
        clf = model.rules[n].classifier
        assert clf is not None
        text[:, j] = clf.text.predict_proba(x[:, clf.dim :])[:, 1]
    out = (scores, model.thresholds(), text)
    if cache:
        path.write_bytes(pickle.dumps(out))
    return out


def mean_ap(y: np.ndarray, p: np.ndarray) -> float:
    return float(np.mean([average_precision_score(y[:, j], p[:, j]) for j in range(y.shape[1])]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--max-len", type=int, default=128)
    parser.add_argument("--top-layers", type=int, default=0)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--no-oof", action="store_true", help="skip the head's out-of-fold thresholds")
    args = parser.parse_args()
    ls = data.load_labeled()
    titles, abstracts = data.corpus_texts()
    corpus = Corpus(titles, abstracts, np.zeros((0, ls.vectors.shape[1]), dtype=np.float32))
    texts = [document_text(t, a) for t, a in zip(ls.titles, ls.abstracts, strict=True)]
    log(f"epochs {args.epochs}, max_len {args.max_len}, top_layers {args.top_layers or 'all'}, lr {args.lr}")
    for train_set, test_set in ((0, 1), (1, 0)):
        train, test = np.flatnonzero(ls.source == train_set), np.flatnonzero(ls.source == test_set)
        data.check_disjoint(ls.ids, train, test)
        yt = ls.y[test]
        rows: dict[str, float] = {}
        scores, thr, text = tagger_scores(ls, train, test, corpus, cache=f"{train_set}-{len(train)}")
        base = scores_table(ls.names, yt, scores >= thr)
        rows["tagger (stored vectors)"] = base.macro_f1
        rows["  mAP tagger"] = mean_ap(yt, scores)
        frozen = FineTuner(texts, args.max_len, args.top_layers, 0, args.lr, seed=0).fit(train, ls.y[train])
        rows["  mAP head before fine-tuning (frozen LR)"] = mean_ap(yt, frozen.encode(test)[1])
        log(f"frozen head mAP {rows['  mAP head before fine-tuning (frozen LR)']:.3f}")
        start = time.perf_counter()
        ft = FineTuner(texts, args.max_len, args.top_layers, args.epochs, args.lr, seed=0).fit(train, ls.y[train])
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        vec, head = ft.encode(np.arange(len(texts)))
        enc_s = time.perf_counter() - start
        log(
            f"{data.LABEL_FILES[train_set]}: fine-tune {fit_s:.0f} s, encode {len(texts)} docs {enc_s:.0f} s "
            f"({len(texts) / enc_s:.0f} docs/s, 2 threads)"
        )
        rows["  mAP head (fine-tuned)"] = mean_ap(yt, head[test])
        np.savez(data.cache_dir() / f"finetuned-{train_set}-{args.top_layers}-{args.epochs}.npz", vec=vec, head=head)
        log(f"fine-tuned head mAP {rows['  mAP head (fine-tuned)']:.3f}")

        s2, t2, _ = tagger_scores(with_vectors(ls, vec), train, test, corpus)
        rows["tagger, fine-tuned vectors"] = scores_table(ls.names, yt, s2 >= t2).macro_f1
        rows["  mAP (head + text) / 2"] = mean_ap(yt, (head[test] + text) / 2)
        rows["  mAP (tagger + head) / 2"] = mean_ap(yt, (scores + head[test]) / 2)
        if not args.no_oof:
            # thresholds for the head: out-of-fold head probabilities from 3 fine-tunes on the training set
            oof_head = np.zeros((len(train), len(ls.names)))
            strat = ls.y[train].argmax(1) + ls.y[train].any(1)
            for k, (a, b) in enumerate(StratifiedKFold(3, shuffle=True, random_state=0).split(train, strat)):
                sub = FineTuner(texts, args.max_len, args.top_layers, args.epochs, args.lr, seed=k + 1)
                oof_head[b] = sub.fit(train[a], ls.y[train[a]]).encode(train[b])[1]
            oof_tag = np.zeros_like(oof_head)
            oof_text = np.zeros_like(oof_head)
            for a, b in StratifiedKFold(3, shuffle=True, random_state=0).split(train, strat):
                oof_tag[b], _, oof_text[b] = tagger_scores(ls, train[a], train[b], corpus)
            for name, oof, tst in (
                ("head alone", oof_head, head[test]),
                ("(head + text) / 2", (oof_head + oof_text) / 2, (head[test] + text) / 2),
                ("(tagger + head) / 2", (oof_tag + oof_head) / 2, (scores + head[test]) / 2),
            ):
                th = np.array([best_threshold(oof[:, j], ls.y[train, j]) for j in range(len(ls.names))])
                res = scores_table(ls.names, yt, tst >= th)
                rows[name + " (oof thresholds)"] = res.macro_f1
                rows[f"    {name}: rl-policy-optimization"] = res.tags["rl-policy-optimization"].f1
        rows["    tagger: rl-policy-optimization"] = base.tags["rl-policy-optimization"].f1
        print(f"\ntrained on {data.LABEL_FILES[train_set]}, scored on {data.LABEL_FILES[test_set]} (macro-F1 / mAP):")
        for k, v in rows.items():
            print(f"  {k:45s} {v:.3f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
