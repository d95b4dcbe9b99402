"""Build data/snapshot_vectors.npz: the embeddings of the bundled snapshot, shipped so the demo need not embed.

Does exactly what `radar index` does on a CPU with the default radar.toml (the packaged
all-MiniLM-L6-v2, ONNX int8, 2 x 128-token windows): imports the snapshot into a throw-away
workspace, crawls the bundled feeds as `radar demo` does (their posts are embedded too), indexes
it there, and writes every stored vector with its document id and the content hash the store
computed (index/prebuilt.py: int8 with a scale per row, stamped with the model id).
`radar import data/snapshot.jsonl.gz` copies the file into the workspace and `radar index` reuses
each vector whose model id and content hash still match. Re-run after changing the snapshot, the
model or the window settings (a stale file is simply not used):

    .venv/bin/python data/build_embeddings.py [--limit N] [--out PATH]

`--labels` writes the shipped labeled papers' vectors instead (analysis/tags/labels/vectors.npz, about a
minute), which `radar tag` uses in a workspace that never imported them.

On a busy machine, shards run at once and are joined (`--shard 0/3` ... `--shard 2/3`, then `--merge`);
`--harvest WS...` writes what stopped or running build workspaces hold so far.

About 7 minutes on 2 idle cores for the 20k papers (the first run also exports the model to ONNX).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent
sys.path.insert(0, str(DATA.parent))  # run from a checkout without an install too

from radar.analysis.tags.training import SHIPPED_VECTORS, shipped_papers  # noqa: E402
from radar.app import steps, wiring  # noqa: E402
from radar.app.cmd_core import DEMO_FEEDS, demo_config  # noqa: E402
from radar.app.context import Radar  # noqa: E402
from radar.crawler.snapshot import import_snapshot  # noqa: E402
from radar.index.embedder import document_text  # noqa: E402
from radar.index.embeddings import Embeddings  # noqa: E402
from radar.index.prebuilt import merge_prebuilt, write_prebuilt  # noqa: E402
from radar.store import Workspace  # noqa: E402
from radar.store.config import DEFAULT_CONFIG_TEXT  # noqa: E402


def build(
    snapshot: Path,
    out: Path,
    *,
    limit: int | None = None,
    shard: tuple[int, int] = (0, 1),
    feeds: Path | None = None,
    work: Path | None = None,
) -> dict[str, object]:
    """Embed ``snapshot`` (its first ``limit`` lines; of those, line i when i % n == k for ``shard`` (k, n))
    as `radar index` would on a CPU, and with ``feeds`` the posts of the bundled feeds; write ``out``."""
    name = snapshot.name
    with tempfile.TemporaryDirectory(prefix="radar-embed-") as tmp:
        root = work or Path(tmp) / "ws"
        if limit is not None or shard != (0, 1):
            k, n = shard
            part = Path(tmp) / "part.jsonl.gz"
            with gzip.open(snapshot, "rb") as src, gzip.open(part, "wb") as dst:
                dst.writelines(line for i, line in enumerate(itertools.islice(src, limit)) if i % n == k)
            snapshot = part
        names = [f.name for f in sorted(feeds.glob("*.xml"))] if feeds else []
        ws, _ = Workspace.init(root, config_text=demo_config(names) if feeds else DEFAULT_CONFIG_TEXT)
        radar = Radar(ws)
        with ws.store() as store:
            import_snapshot(store, snapshot)
        if feeds:  # the demo's posts too: crawled from the bundled feeds exactly as `radar demo` does
            for name in names:
                ws.write_bytes_atomic(ws.resolve(DEMO_FEEDS) / name, (feeds / name).read_bytes())
            steps.crawl_sources(radar)
        started = time.perf_counter()
        run = steps.index(radar, device="cpu", prebuilt=())  # embed everything: no reuse when building
        seconds = time.perf_counter() - started
        model_id = run.report.model_id
        cfg = radar.settings.embedding
        with ws.store() as store:
            rows = store.conn.execute(
                "SELECT e.doc_id, e.content_hash, e.vector FROM embeddings e JOIN documents d ON d.id = e.doc_id "
                "WHERE e.model_id = ? AND e.content_hash = d.content_hash ORDER BY d.rowid",
                (model_id,),
            ).fetchall()
        ids = [r[0] for r in rows]
        hashes = [r[1] for r in rows]
        vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        write_prebuilt(
            out,
            model_id=model_id,
            ids=ids,
            hashes=hashes,
            vectors=vectors,
            stamp={
                "quantization": "int8" if model_id.endswith("/int8") else "fp",
                "max_seq_length": cfg.max_seq_length,
                "max_tokens": cfg.max_tokens,
                "snapshot": name,
                "embed_seconds": round(seconds, 1),
            },
        )
    return {"model_id": model_id, "vectors": len(ids), "embed_seconds": round(seconds, 1), "out": str(out)}


def build_labels(out: Path) -> dict[str, object]:
    """Embed the shipped labeled papers exactly as `radar tag` does in a workspace that holds none of them
    (app/wiring.tag_vectors: the default model, one text per paper), keyed by the text hash it looks up."""
    with tempfile.TemporaryDirectory(prefix="radar-embed-") as tmp:
        ws, _ = Workspace.init(Path(tmp) / "ws")
        with ws.store() as store:
            vectors = wiring.tag_vectors(Radar(ws), store, allow_empty=True)
        papers = shipped_papers()
        ids = sorted(papers)
        texts = [document_text(*papers[i]) for i in ids]
        started = time.perf_counter()
        embedded = vectors.embed(texts)
        seconds = time.perf_counter() - started
        write_prebuilt(
            out,
            model_id=vectors.model_id,
            ids=ids,
            hashes=[hashlib.sha1(t.encode()).hexdigest() for t in texts],
            vectors=embedded,
            stamp={"labeled_papers": len(ids), "key": "sha1(document_text)", "embed_seconds": round(seconds, 1)},
        )
    return {"model_id": vectors.model_id, "vectors": len(ids), "embed_seconds": round(seconds, 1), "out": str(out)}


def harvest(workspaces: list[Path], out: Path) -> int:
    """Write the vectors already stored in build workspaces (e.g. of shards still running or stopped) to ``out``;
    returns how many. A later full run replaces the file."""
    ids: list[str] = []
    hashes: list[str] = []
    parts: list[np.ndarray] = []
    model_ids: set[str] = set()
    for root in workspaces:
        ws = Workspace.open(root)
        with ws.store() as store:
            model_id = max(Embeddings(store).models().items(), key=lambda kv: kv[1])[0]
            rows = store.conn.execute(
                "SELECT e.doc_id, e.content_hash, e.vector FROM embeddings e JOIN documents d ON d.id = e.doc_id "
                "WHERE e.model_id = ? AND e.content_hash = d.content_hash ORDER BY d.rowid",
                (model_id,),
            ).fetchall()
        model_ids.add(model_id)
        ids += [r[0] for r in rows]
        hashes += [r[1] for r in rows]
        parts.append(np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1))
    if len(model_ids) != 1:
        raise SystemExit(f"the workspaces hold vectors of different models: {sorted(model_ids)}")
    cfg = Radar(Workspace.open(workspaces[0])).settings.embedding
    model_id = model_ids.pop()
    write_prebuilt(
        out,
        model_id=model_id,
        ids=ids,
        hashes=hashes,
        vectors=np.concatenate(parts),
        stamp={
            "quantization": "int8" if model_id.endswith("/int8") else "fp",
            "max_seq_length": cfg.max_seq_length,
            "max_tokens": cfg.max_tokens,
            "snapshot": "snapshot.jsonl.gz",
        },
    )
    return len(ids)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshot", type=Path, default=DATA / "snapshot.jsonl.gz")
    ap.add_argument("--out", type=Path, default=DATA / "snapshot_vectors.npz")
    ap.add_argument("--limit", type=int, help="only the first N papers (a quick check)")
    ap.add_argument("--feeds", type=Path, default=DATA / "feeds", help="bundled feeds whose posts the demo crawls")
    ap.add_argument("--no-feeds", action="store_true", help="papers only")
    ap.add_argument("--shard", default="0/1", metavar="K/N", help="only lines i with i %% N == K (run N at once)")
    ap.add_argument("--merge", nargs="+", type=Path, metavar="PART", help="join shard files into --out and stop")
    ap.add_argument("--work", type=Path, help="keep the build workspace here; an earlier one resumes where it stopped")
    ap.add_argument("--harvest", nargs="+", type=Path, metavar="WS", help="write what build workspaces hold so far")
    ap.add_argument("--labels", action="store_true", help=f"the shipped labeled papers instead -> {SHIPPED_VECTORS}")
    args = ap.parse_args()
    if args.labels:
        out = args.out if args.out != DATA / "snapshot_vectors.npz" else SHIPPED_VECTORS
        result = build_labels(out)
        print(f"{result['vectors']:,} labeled papers by {result['model_id']} in {result['embed_seconds']} s -> {out}")
        return
    if args.harvest:
        n = harvest(args.harvest, args.out)
        print(
            f"{n:,} vectors from {len(args.harvest)} workspaces -> {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)"
        )
        return
    if args.merge:
        merge_prebuilt(args.out, args.merge)
        print(f"merged {len(args.merge)} files -> {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")
        return
    k, n = (int(x) for x in args.shard.split("/"))
    feeds = None if args.no_feeds or k != 0 else args.feeds  # the posts go with shard 0
    result = build(args.snapshot, args.out, limit=args.limit, shard=(k, n), feeds=feeds, work=args.work)
    size = args.out.stat().st_size / 1e6
    print(
        f"{result['vectors']:,} vectors by {result['model_id']} in {result['embed_seconds']} s -> {args.out} "
        f"({size:.1f} MB)"
    )


if __name__ == "__main__":
    main()
