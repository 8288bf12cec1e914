"""The persistent label cache (:class:`LabelCache`): SQLite, keyed by (labeler name, prompt hash, query id,
document id)."""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from irrepro.labels.prompts import Prompt


class LabelCache:
    """A SQLite file of label distributions keyed by (labeler, prompt_hash, query_id, doc_id).

    WAL journal and a busy timeout, so several processes may read and write the same file; rows are inserted with
    ``INSERT OR IGNORE`` (the first writer of a pair wins; a labeler's labels are deterministic, so both agree).
    Distributions are stored as JSON arrays (exact float round trip). ``path=None`` or ``":memory:"``: in memory.
    """

    SCHEMA = """CREATE TABLE IF NOT EXISTS labels (
        labeler TEXT NOT NULL, prompt_hash TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL,
        prompt_id TEXT NOT NULL, probs TEXT NOT NULL, created REAL NOT NULL,
        PRIMARY KEY (labeler, prompt_hash, query_id, doc_id))"""

    def __init__(self, path=None, timeout: float = 600.0):
        self.path = ":memory:" if path in (None, ":memory:") else str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        self.con.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        if self.path != ":memory:":
            # switching to WAL while another process opens the file can fail at once with "database is locked"
            # (SQLite does not call the busy handler for it): retry until the timeout
            import time

            deadline = time.monotonic() + timeout
            while True:
                try:
                    self.con.execute("PRAGMA journal_mode = WAL")
                    break
                except sqlite3.OperationalError as e:
                    if "locked" not in str(e) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            self.con.execute("PRAGMA synchronous = NORMAL")
        self.con.execute(self.SCHEMA)

    def close(self):
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get(self, labeler: str, prompt_hash: str, pairs: Sequence[tuple[str, str]]) -> dict:
        """``{(query_id, doc_id): np.ndarray}`` for the pairs already cached."""
        rows = self.con.execute("SELECT query_id, doc_id, probs FROM labels WHERE labeler = ? AND prompt_hash = ?",
                                (labeler, prompt_hash)).fetchall()
        want = set(pairs)
        return {(q, d): np.array(json.loads(p), dtype=float) for q, d, p in rows if (q, d) in want}

    def put(self, labeler: str, prompt: Prompt, pairs: Sequence[tuple[str, str]], probs: np.ndarray) -> None:
        """Insert one batch in one transaction (committed on return)."""
        now = time.time()
        rows = [(labeler, prompt.hash, q, d, prompt.id, json.dumps([float(x) for x in p]), now)
                for (q, d), p in zip(pairs, probs)]
        self.con.execute("BEGIN IMMEDIATE")
        try:
            self.con.executemany("INSERT OR IGNORE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def rows(self, labeler: str, prompt_hash: str, pairs: Sequence[tuple[str, str]]) -> list[tuple]:
        """The stored rows ``(query_id, doc_id, prompt_id, probs_json)`` of the cached pairs among ``pairs``, sorted
        by (query id, document id); ``probs_json`` is the stored text, so a copy is exact."""
        rows = self.con.execute("SELECT query_id, doc_id, prompt_id, probs FROM labels WHERE labeler = ? AND "
                                "prompt_hash = ? ORDER BY query_id, doc_id", (labeler, prompt_hash)).fetchall()
        want = set(pairs)
        return [r for r in rows if (r[0], r[1]) in want]

    def put_rows(self, labeler: str, prompt_hash: str, rows: Sequence[tuple]) -> int:
        """Insert rows ``(query_id, doc_id, prompt_id, probs_json)`` as they are (``INSERT OR IGNORE``, one
        transaction, in the given order); returns how many were new."""
        now = time.time()
        before = self.count(labeler, prompt_hash)
        self.con.execute("BEGIN IMMEDIATE")
        try:
            self.con.executemany("INSERT OR IGNORE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 [(labeler, prompt_hash, q, d, pid, p, now) for q, d, pid, p in rows])
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        return self.count(labeler, prompt_hash) - before

    def count(self, labeler: str | None = None, prompt_hash: str | None = None) -> int:
        sql, args = "SELECT COUNT(*) FROM labels WHERE 1=1", []
        if labeler is not None:
            sql, args = sql + " AND labeler = ?", args + [labeler]
        if prompt_hash is not None:
            sql, args = sql + " AND prompt_hash = ?", args + [prompt_hash]
        return self.con.execute(sql, args).fetchone()[0]
