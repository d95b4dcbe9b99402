"""Admin commands: `radar rm ID...` removes documents and everything derived from them."""

from __future__ import annotations

import argparse
import re

from radar.app.cli_helpers import open_workspace
from radar.app.output import console, print_json
from radar.store.errors import ConfigError

_ID = re.compile(r"^[\w.:/\-]{1,200}$")  # arXiv ids, post:HASH ids; nothing with spaces or control characters


def cmd_rm(args: argparse.Namespace) -> int:
    bad = [i for i in args.ids if not _ID.match(i)]
    if bad:
        raise ConfigError(
            f"{bad[0][:60]!r} is not a document id; ids look like 2401.00642 or post:1a2b3c (see `radar search`)"
        )
    ws = open_workspace(args)
    # the index and tag steps read the documents they work on: removing under them waits for neither
    with ws.lock("index"), ws.lock("tag"), ws.store() as store:
        removed = store.delete_documents(args.ids)
    missing = [i for i in dict.fromkeys(args.ids) if i not in set(removed)]
    if not removed:
        raise ConfigError(f"no document {missing[0]!r} in {ws.root}; find ids with `radar search` or `radar stats`")
    if args.json:
        print_json({"removed": removed, "missing": missing})
    else:
        console.print(
            f"removed {len(removed)} document(s) with their vectors, tags and corrections"
            + (f"; not in the workspace: {', '.join(missing[:10])}" if missing else "")
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rm", help="remove documents (and their vectors, tags, corrections) from the workspace")
    p.add_argument("ids", nargs="+", metavar="ID", help="document ids, e.g. 2401.00642 or post:1a2b3c4d")
    p.add_argument("--json", action="store_true", help="print {removed, missing} as JSON")
    p.set_defaults(func=cmd_rm)
