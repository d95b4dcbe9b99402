"""Schema migrations, applied in order; ``PRAGMA user_version`` records the last one applied.

Never edit a released migration: append a new one. Statements are split on semicolons,
so none may appear inside a statement or a comment.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE documents (
            id               TEXT PRIMARY KEY,
            kind             TEXT NOT NULL CHECK (kind IN ('paper', 'post')),
            source           TEXT NOT NULL,
            title            TEXT NOT NULL,
            abstract         TEXT NOT NULL DEFAULT '',
            authors          TEXT NOT NULL DEFAULT '[]',
            categories       TEXT NOT NULL DEFAULT '[]',
            primary_category TEXT NOT NULL DEFAULT '',
            published        TEXT NOT NULL,
            updated          TEXT NOT NULL DEFAULT '',
            url              TEXT NOT NULL DEFAULT '',
            version          INTEGER NOT NULL DEFAULT 0,
            date_estimated   INTEGER NOT NULL DEFAULT 0,
            content_hash     TEXT NOT NULL,
            first_seen       TEXT NOT NULL,
            changed_at       TEXT NOT NULL,
            extra            TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX documents_published ON documents (published);
        CREATE INDEX documents_source ON documents (source, published);
        CREATE INDEX documents_url ON documents (url) WHERE url != '';

        CREATE TABLE crawl_state (
            source        TEXT PRIMARY KEY,
            cursor        TEXT NOT NULL DEFAULT '',
            etag          TEXT NOT NULL DEFAULT '',
            last_modified TEXT NOT NULL DEFAULT '',
            last_attempt  TEXT NOT NULL DEFAULT '',
            last_success  TEXT NOT NULL DEFAULT '',
            last_error    TEXT NOT NULL DEFAULT '',
            last_error_at TEXT NOT NULL DEFAULT '',
            last_summary  TEXT NOT NULL DEFAULT ''
        );

        CREATE TABLE runs (
            id           TEXT PRIMARY KEY,
            kind         TEXT NOT NULL,
            status       TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
            params       TEXT NOT NULL DEFAULT '{}',
            result       TEXT NOT NULL DEFAULT '{}',
            progress     REAL NOT NULL DEFAULT 0,
            pid          INTEGER,
            error        TEXT NOT NULL DEFAULT '',
            created_at   TEXT NOT NULL,
            started_at   TEXT NOT NULL DEFAULT '',
            finished_at  TEXT NOT NULL DEFAULT '',
            heartbeat_at TEXT NOT NULL DEFAULT '',
            cancel_requested INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX runs_status ON runs (status, created_at);
        """,
    ),
    (
        2,
        """
        CREATE TABLE embeddings (
            vec_id       INTEGER PRIMARY KEY,  -- the id in the vector index, explicit so VACUUM keeps it
            doc_id       TEXT NOT NULL UNIQUE REFERENCES documents(id) ON DELETE CASCADE,
            model_id     TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            vector       BLOB NOT NULL
        );
        CREATE INDEX embeddings_model ON embeddings (model_id);

        CREATE TABLE document_tags (
            doc_id     TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            tag        TEXT NOT NULL,
            score      REAL NOT NULL DEFAULT 1.0,
            origin     TEXT NOT NULL CHECK (origin IN ('model', 'rule', 'user')),
            created_at TEXT NOT NULL,
            PRIMARY KEY (doc_id, tag)
        );
        CREATE INDEX document_tags_tag ON document_tags (tag, doc_id);
        CREATE INDEX documents_primary_category ON documents (primary_category);

        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    ),
    (
        3,
        """
        CREATE TABLE tag_corrections (
            doc_id     TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            tag        TEXT NOT NULL,
            value      INTEGER NOT NULL CHECK (value IN (0, 1)),  -- 1 confirms the tag, 0 removes it
            created_at TEXT NOT NULL,
            PRIMARY KEY (doc_id, tag)
        );

        CREATE TABLE tag_state (
            doc_id    TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
            tagger    TEXT NOT NULL,  -- the model version that decided this document
            tagged_at TEXT NOT NULL
        );
        CREATE INDEX tag_state_tagger ON tag_state (tagger);
        """,
    ),
    (
        4,
        """
        CREATE TABLE deliveries (
            period     TEXT NOT NULL,  -- the report period, e.g. 2025-W20
            channel    TEXT NOT NULL,  -- email, webhook or folder
            recipient  TEXT NOT NULL,
            status     TEXT NOT NULL CHECK (status IN ('sent', 'failed')),
            attempts   INTEGER NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            sent_at    TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL,
            PRIMARY KEY (period, channel, recipient)
        );
        """,
    ),
    (
        5,
        """
        CREATE TABLE names (
            name          TEXT PRIMARY KEY,
            kind          TEXT NOT NULL CHECK (kind IN ('method', 'model', 'benchmark', 'system', 'hardware',
                                                        'metric', 'org', 'generic', 'unknown')),
            kind_score    REAL NOT NULL DEFAULT 0,
            aliases       TEXT NOT NULL DEFAULT '[]',
            introduced_by TEXT,
            first_seen    TEXT NOT NULL,
            first_id      TEXT NOT NULL,
            count         INTEGER NOT NULL,
            recent_count  INTEGER NOT NULL DEFAULT 0,
            baseline_mentions        INTEGER NOT NULL DEFAULT 0,
            recent_baseline_mentions INTEGER NOT NULL DEFAULT 0,
            code          TEXT NOT NULL DEFAULT '[]',
            series        TEXT NOT NULL DEFAULT '[]',
            computed_at   TEXT NOT NULL
        );
        CREATE INDEX names_kind ON names (kind, first_seen);
        """,
    ),
    (
        6,
        """
        CREATE TABLE people (
            id         INTEGER PRIMARY KEY,
            name       TEXT NOT NULL UNIQUE,
            email      TEXT NOT NULL DEFAULT '',
            webhook    TEXT NOT NULL DEFAULT '',
            profile    TEXT NOT NULL DEFAULT '{}',  -- JSON: tags, terms, negative_terms, authors, institutions
            created_at TEXT NOT NULL
        );

        CREATE TABLE person_feedback (
            person_id  INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
            doc_id     TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            value      INTEGER NOT NULL CHECK (value IN (1, -1)),  -- 1 liked, -1 not for me
            source     TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (person_id, doc_id)
        );

        CREATE TABLE saved_searches (
            person_id  INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
            name       TEXT NOT NULL,
            query      TEXT NOT NULL,
            filters    TEXT NOT NULL DEFAULT '{}',
            min_score  REAL NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            PRIMARY KEY (person_id, name)
        );

        CREATE TABLE person_alerts (
            person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
            doc_id    TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            search    TEXT NOT NULL,
            score     REAL NOT NULL,
            found_at  TEXT NOT NULL,
            PRIMARY KEY (person_id, doc_id)
        );
        """,
    ),
    (
        7,
        """
        CREATE TABLE contributions (
            doc_id       TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
            content_hash TEXT NOT NULL,  -- of the text it was decided from
            model        TEXT NOT NULL,  -- the contributions model version that decided it
            introduces   INTEGER NOT NULL CHECK (introduces IN (0, 1)),
            name         TEXT NOT NULL DEFAULT '',
            name_key     TEXT NOT NULL DEFAULT '',  -- spelling key of name (case and hyphens folded)
            also         TEXT NOT NULL DEFAULT '[]',
            kind         TEXT NOT NULL DEFAULT '',
            area         TEXT NOT NULL DEFAULT '',
            builds_on    TEXT NOT NULL DEFAULT '[]',
            changes      TEXT NOT NULL DEFAULT '',
            changes_rewritten TEXT NOT NULL DEFAULT '',  -- the summary endpoint's line, when configured
            code         TEXT NOT NULL DEFAULT '[]',
            score        REAL NOT NULL DEFAULT 0,
            kind_score   REAL NOT NULL DEFAULT 0,
            computed_at  TEXT NOT NULL
        );
        CREATE INDEX contributions_name ON contributions (name_key) WHERE introduces = 1;
        CREATE INDEX contributions_model ON contributions (model);

        CREATE TABLE document_mentions (
            doc_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            key      TEXT NOT NULL,  -- spelling key of a name the document mentions
            compared INTEGER NOT NULL DEFAULT 0 CHECK (compared IN (0, 1)),  -- it compares against it
            PRIMARY KEY (doc_id, key)
        );
        CREATE INDEX document_mentions_key ON document_mentions (key, doc_id);
        """,
    ),
    (
        8,
        """
        ALTER TABLE document_mentions ADD COLUMN expansion TEXT NOT NULL DEFAULT ''
        """,
    ),
]


def _strip_invisible_sql() -> str:
    """Bidi controls and zero-width characters out of what was stored before ingest removed them. The SQL
    functions are store.text's, registered on every connection (store.db.register_functions): a GLOB or
    14 nested replace() calls took 26 s on the 93k-paper corpus, this about 2 s once."""
    statements = []
    for table, columns in (("documents", ("title", "abstract", "authors")), ("people", ("profile",))):
        assignments = ", ".join(f"{c} = radar_strip_invisible({c})" for c in columns)
        where = f"radar_has_invisible({', '.join(columns)})"
        statements.append(f"UPDATE {table} SET {assignments} WHERE {where}")
    return ";\n".join(statements)


MIGRATIONS.append((9, _strip_invisible_sql()))
# Spelling keys fold the Cyrillic and Greek lookalikes of a mixed-script name (DАPO -> dapo): the stored keys
# of contributions and mentions are folded the same way (store.text.fold_lookalikes, registered on every
# connection); a mention whose folded key the document already has goes
MIGRATIONS.append(
    (
        10,
        """
        UPDATE contributions SET name_key = radar_fold_lookalikes(name_key)
            WHERE radar_fold_lookalikes(name_key) != name_key;
        UPDATE OR IGNORE document_mentions SET key = radar_fold_lookalikes(key)
            WHERE radar_fold_lookalikes(key) != key;
        DELETE FROM document_mentions WHERE radar_fold_lookalikes(key) != key
        """,
    )
)

# IF NOT EXISTS: a workspace rewound to an earlier version (tests do, to replay migration 9) replays this one
MIGRATIONS.append(
    (
        11,
        """
        CREATE TABLE IF NOT EXISTS framework_entries (
            id         TEXT PRIMARY KEY,  -- fw: + a hash of the entry's link (else its guid)
            source     TEXT NOT NULL,     -- the [[sources]] name
            framework  TEXT NOT NULL,     -- the framework's name as cards show it
            area       TEXT NOT NULL,     -- what the framework is for (the source's area)
            kind       TEXT NOT NULL CHECK (kind IN ('release', 'commit')),
            published  TEXT NOT NULL,
            link       TEXT NOT NULL DEFAULT '',
            title      TEXT NOT NULL,     -- a commit's subject, a release's name (plain text)
            text       TEXT NOT NULL DEFAULT '',  -- the commit message or release note (plain text)
            first_seen TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS framework_entries_published ON framework_entries (published);

        CREATE TABLE IF NOT EXISTS framework_matches (
            entry_id TEXT NOT NULL REFERENCES framework_entries(id) ON DELETE CASCADE,
            key      TEXT NOT NULL,              -- spelling key of the card's name
            name     TEXT NOT NULL,
            intro_id TEXT NOT NULL DEFAULT '',   -- the paper introducing the sense matched ('' when none is stored)
            sense    TEXT NOT NULL DEFAULT '',   -- that sense's key (its long form's stems)
            via      TEXT NOT NULL CHECK (via IN ('arxiv-id', 'name', 'expansion')),
            PRIMARY KEY (entry_id, key)
        );
        CREATE INDEX IF NOT EXISTS framework_matches_key ON framework_matches (key)
        """,
    )
)

LATEST_VERSION = MIGRATIONS[-1][0]
