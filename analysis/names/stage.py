"""The names stage on a store: the names of its documents, computed once per corpus state and kept in the
names table, and the look-ups that trends, the report and the dashboard read (kind, adoption by any spelling).

The composition root (app) passes the store; nothing here reads settings or builds paths.
"""

from __future__ import annotations

from collections.abc import Callable

from radar.analysis.names.aliases import surface_key
from radar.analysis.names.context import Embed
from radar.analysis.names.find import find_names
from radar.analysis.names.table import NameRow, Names
from radar.crawler.documents import Documents
from radar.store.table import Database

# bump when find_names changes what it computes (kinds, margin, lexicon), so stored names are recomputed
NAMES_VERSION = "9"  # 9: spelling keys fold Cyrillic/Greek lookalikes in mixed-script names


def names_state(store: Database, as_of: str = "", embed: Embed | None = None) -> str:
    """What the stored names of ``store`` up to ``as_of`` are computed from: documents, cut-off, code version."""
    return f"{Documents(store).fingerprint()}|{as_of}|{NAMES_VERSION}" + ("|context" if embed is not None else "")


def stored_names(store: Database, as_of: str = "", embed: Embed | None = None) -> list[NameRow]:
    """The names of the store's documents up to ``as_of`` (YYYY-MM-DD, '' for all): computed with
    ``find_names`` and kept in the names table until the documents change (or ``NAMES_VERSION`` does).

    ``embed`` (the composition root's sentence encoder): context vectors for the names the evidence leaves
    unsure; kinds computed with and without it are stored under different states (a call of the other kind
    recomputes)."""
    state = names_state(store, as_of, embed)
    table = Names(store)
    if table.names_state() != state:
        found = find_names(Documents(store).scan(), as_of or None, embed=embed)
        table.replace_names(found, state)
    return table.names()


def name_adoption(store: Database) -> Callable[[str], tuple[int, int, str] | None]:
    """adoption(name): (recent baseline mentions, all baseline mentions, first seen) of a name in the corpus,
    by any of its spellings; None when it is not a name of the corpus."""
    index: dict[str, tuple[int, int, str]] = {}
    for row in stored_names(store):
        for s in (row.name, *row.aliases):
            index.setdefault(surface_key(s), (row.recent_baseline_mentions, row.baseline_mentions, row.first_seen))
    return lambda name: index.get(surface_key(name))


def name_kinds(store: Database) -> Callable[[str], str | None]:
    """kind_of(name): the kind of a name found in the corpus (aliases resolved), None when it is not one."""
    index: dict[str, str] = {}
    for row in stored_names(store):
        for s in (row.name, *row.aliases):
            index.setdefault(surface_key(s), row.kind)
    return lambda name: index.get(surface_key(name))
