"""The persistent label cache (:class:`LabelCache`): SQLite, keyed by (labeler cache key, prompt hash, query id,
document id, input hash), where the input hash (:func:`input_hash`) is the hash of the query and document texts the
label was computed from; checked when opened (:func:`check_or_recover`) and row by row when read
(:func:`valid_probs`)."""
from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from irrepro.labels.prompts import Prompt

log = logging.getLogger("irrepro.labels")


def input_hash(query: str, text: str) -> str:
    """The first 32 hex digits of the sha256 of ``[query, text]`` as JSON (UTF-8): what a labeler reads of a pair.

    Part of every cached label's key, so a label is served only for the texts it was computed from: two collections
    whose pairs share ids (vaswani's and cranfield's query 1 and document 12), or a collection whose texts changed,
    never get each other's labels, whatever the labeler or the prompt."""
    return hashlib.sha256(json.dumps([str(query), str(text)], ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


def input_hashes(queries: Sequence[str], texts: Sequence[str]) -> list[str]:
    """:func:`input_hash` of each (query, text)."""
    if len(queries) != len(texts):
        raise ValueError(f"{len(queries)} queries, {len(texts)} texts")
    return [input_hash(q, t) for q, t in zip(queries, texts)]


def sum_tolerance(n_grades: int) -> float:
    """How far from 1 the sum of a stored distribution over ``n_grades`` grades may be: ``n_grades`` times float32's
    machine epsilon. Rows are stored as float64 (exact JSON round trip) and computed by a float64 softmax, whose
    sum is within a few float64 ulps of 1; a backend that computed its probabilities in float32 rounds each of the
    G entries by at most eps32/2, so the sum of a true distribution is within G·eps32/2 of 1. Anything further
    away was not written by a labeler."""
    return n_grades * float(np.finfo(np.float32).eps)


def valid_probs(text: str, n_grades: int | None = None) -> np.ndarray | None:
    """The stored JSON row as an array when it is a distribution over grades (a list of ``n_grades`` numbers, all
    finite and non-negative, summing to 1 within :func:`sum_tolerance`), else None."""
    try:
        p = np.array(json.loads(text), dtype=float)
    except (ValueError, TypeError):
        return None
    if p.ndim != 1 or len(p) < 2 or (n_grades is not None and len(p) != n_grades):
        return None
    if not np.isfinite(p).all() or (p < 0).any() or abs(p.sum() - 1.0) > sum_tolerance(len(p)):
        return None
    return p


def _readable_rows(path: str) -> tuple[list[tuple], int, bool]:
    """Every row of the ``labels`` table of a damaged SQLite file that can still be read, how many rowid ranges
    could not (rowids are read in chunks, and a chunk that fails is split until single rows), and whether the rows
    carry an input hash (a file written without it: rows of :attr:`LabelCache.UNKEYED_COLUMNS`)."""
    import shutil
    import struct

    rows: list[tuple] = []
    lost = 0
    # read a scratch copy (the damaged file stays as it was) whose header page count says what the file holds: a
    # truncated file's header still counts its lost pages, and SQLite then refuses to read even the schema
    scratch = f"{path}.reading"
    data = bytearray(Path(path).read_bytes())
    if len(data) >= 100 and data[:16] == b"SQLite format 3\x00":
        ps = struct.unpack(">H", data[16:18])[0]
        ps = 65536 if ps == 1 else ps
        if ps >= 512:
            del data[len(data) // ps * ps:]
            data[28:32] = struct.pack(">I", len(data) // ps)
    Path(scratch).write_bytes(data)
    if os.path.exists(f"{path}-wal"):
        shutil.copyfile(f"{path}-wal", f"{scratch}-wal")
    try:
        con = sqlite3.connect(scratch, isolation_level=None)
    except sqlite3.DatabaseError:
        return rows, 1, True
    keyed = True
    try:
        try:
            cols = [r[1] for r in con.execute("PRAGMA table_info(labels)").fetchall()]
        except sqlite3.DatabaseError:
            cols = []
        keyed = not cols or "input_hash" in cols
        try:
            top = con.execute("SELECT max(rowid) FROM labels").fetchone()[0] or 0
        except sqlite3.DatabaseError:
            top = os.path.getsize(path) // 32 + 1  # a row takes more than 32 bytes
        sql = f"SELECT {', '.join(LabelCache.COLUMNS if keyed else LabelCache.UNKEYED_COLUMNS)} FROM labels WHERE " \
              "rowid BETWEEN ? AND ?"
        stack = [(lo, min(lo + 4095, top)) for lo in range(1, top + 1, 4096)][::-1]
        while stack:
            lo, hi = stack.pop()
            try:
                rows.extend(con.execute(sql, (lo, hi)).fetchall())
            except sqlite3.DatabaseError:
                if lo == hi:
                    lost += 1
                else:
                    mid = (lo + hi) // 2
                    stack += [(mid + 1, hi), (lo, mid)]
    except sqlite3.DatabaseError:
        lost += 1
    finally:
        con.close()
        for ext in ("", "-wal", "-shm"):
            if os.path.exists(scratch + ext):
                os.remove(scratch + ext)
    return rows, lost, keyed


def _damage(path: str) -> str | None:
    """None when ``PRAGMA integrity_check`` finds the file sound, else what SQLite says. Cost measured on a 260 MB
    cache of 1M labels (page cache warm, 2026-11-25): integrity_check 0.7 s, quick_check 0.19 s."""
    try:
        con = sqlite3.connect(path, isolation_level=None)
        try:
            res = [r[0] for r in con.execute("PRAGMA integrity_check").fetchall()]
            if res != ["ok"]:
                return "; ".join(res[:3])
            con.execute("SELECT COUNT(*) FROM labels").fetchone()
        finally:
            con.close()
    except sqlite3.DatabaseError as e:
        return str(e)
    return None


def check_or_recover(path: str, timeout: float = 600.0) -> dict | None:
    """Check the cache file with ``PRAGMA integrity_check`` (under an exclusive lock on ``<path>.lock``, so that one
    process checks and recovers while the others wait). Damaged: the file (and its ``-wal``) is moved aside to
    ``<path>.damaged-<UTC time>`` and kept, every readable row is copied into a fresh file at ``path``, and a
    warning says how many labels were kept (the pairs lost are labelled again by whoever asks for them). Returns
    ``{"aside", "kept", "damage"}`` after a recovery, else None."""
    p = Path(path)
    if not p.exists() or p.stat().st_size == 0:
        return None
    with open(f"{path}.lock", "a") as lock:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"label cache {path}: another process holds {path}.lock") from None
                time.sleep(0.05)
        try:
            damage = _damage(path)
            if damage is None:
                return None
            aside = f"{path}.damaged-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}"
            for ext in ("", "-wal", "-shm"):
                if os.path.exists(path + ext):
                    os.rename(path + ext, aside + ext)
            rows, _, keyed = _readable_rows(aside)
            table = "labels" if keyed else LabelCache.UNKEYED_TABLE
            con = sqlite3.connect(path, isolation_level=None)
            try:
                con.execute(LabelCache.SCHEMA if keyed else LabelCache.UNKEYED_SCHEMA)
                if rows:
                    con.execute("BEGIN IMMEDIATE")
                    con.executemany(f"INSERT OR IGNORE INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
                    con.execute("COMMIT")
                kept = con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            finally:
                con.close()
            log.warning("label cache %s is damaged (%s): moved aside to %s (kept there); %d readable label(s) "
                        "copied into a fresh cache; the pairs lost are labelled again (the next line of the labelling "
                        "log says how many)", path, damage, aside, kept)
            return {"aside": aside, "kept": kept, "damage": damage}
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class LabelCache:
    """A SQLite file of label distributions keyed by (labeler, prompt_hash, query_id, doc_id, input_hash).

    Pairs are named by ``(query_id, doc_id, input_hash)`` triples (:func:`input_hash` of the query and document
    texts): a label is served only to the texts it was computed from. WAL journal and a busy timeout, so several
    processes may read and write the same file; rows are inserted with ``INSERT OR IGNORE`` (the first writer of a
    pair wins; a labeler's labels are deterministic, so both agree). Distributions are stored as JSON arrays (exact
    float round trip). ``path=None`` or ``":memory:"``: in memory.

    A file written without input hashes (its ``labels`` table lacks the column) is migrated when opened: its rows
    are moved to the table ``labels_unkeyed``, kept and never served (nothing records which texts they were
    computed from), and a warning says how many; the pairs are labelled again.
    """

    COLUMNS = ("labeler", "prompt_hash", "query_id", "doc_id", "input_hash", "prompt_id", "probs", "created")
    SCHEMA = """CREATE TABLE IF NOT EXISTS labels (
        labeler TEXT NOT NULL, prompt_hash TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL,
        input_hash TEXT NOT NULL, prompt_id TEXT NOT NULL, probs TEXT NOT NULL, created REAL NOT NULL,
        PRIMARY KEY (labeler, prompt_hash, query_id, doc_id, input_hash))"""
    #: rows of a cache written without input hashes: kept, never served
    UNKEYED_TABLE = "labels_unkeyed"
    UNKEYED_COLUMNS = ("labeler", "prompt_hash", "query_id", "doc_id", "prompt_id", "probs", "created")
    UNKEYED_SCHEMA = f"""CREATE TABLE IF NOT EXISTS {UNKEYED_TABLE} (
        labeler TEXT NOT NULL, prompt_hash TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL,
        prompt_id TEXT NOT NULL, probs TEXT NOT NULL, created REAL NOT NULL,
        PRIMARY KEY (labeler, prompt_hash, query_id, doc_id))"""

    def __init__(self, path=None, timeout: float = 600.0):
        self.path = ":memory:" if path in (None, ":memory:") else str(path)
        self.recovered: dict | None = None
        self.migrated = 0
        self.bad_rows = 0
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self.recovered = check_or_recover(self.path, timeout)
        self.con = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        self.con.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        if self.path != ":memory:":
            # switching to WAL while another process opens the file can fail at once with "database is locked"
            # (SQLite does not call the busy handler for it): retry until the timeout
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
        self.migrated = self._migrate()
        self.con.execute(self.SCHEMA)

    def _columns(self) -> list[str]:
        return [r[1] for r in self.con.execute("PRAGMA table_info(labels)").fetchall()]

    def _migrate(self) -> int:
        """Move the rows of a ``labels`` table without input hashes to :attr:`UNKEYED_TABLE` (one transaction; a
        process that finds it done does nothing); returns how many moved."""
        cols = self._columns()
        if not cols or "input_hash" in cols:
            return 0
        self.con.execute("BEGIN IMMEDIATE")
        try:
            cols = self._columns()  # another process may have migrated it meanwhile
            if not cols or "input_hash" in cols:
                self.con.execute("COMMIT")
                return 0
            self.con.execute(self.UNKEYED_SCHEMA)
            names = ", ".join(self.UNKEYED_COLUMNS)
            n = self.con.execute(f"INSERT OR IGNORE INTO {self.UNKEYED_TABLE} ({names}) SELECT {names} FROM labels"
                                 ).rowcount
            self.con.execute("DROP TABLE labels")
            self.con.execute(self.SCHEMA)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        log.warning("label cache %s: %d label(s) were cached without the hash of the query and document texts they "
                    "were computed from (two collections with the same query and document ids shared them): not "
                    "served, kept in its table %r; the pairs are labelled again", self.path, n, self.UNKEYED_TABLE)
        return n

    def close(self):
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _select(self, sql: str, args) -> list:
        try:
            return self.con.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as e:
            raise sqlite3.DatabaseError(f"label cache {self.path}: {e} (damaged while open; rerun: the cache is "
                                        "checked when opened and its readable labels kept)") from e

    def get(self, labeler: str, prompt_hash: str, pairs: Sequence[tuple[str, str, str]],
            n_grades: int | None = None) -> dict:
        """``{(query_id, doc_id, input_hash): np.ndarray}`` for the pairs already cached whose row is a distribution
        (:func:`valid_probs`); rows that are not are deleted (so they are labelled again) and counted in
        :attr:`bad_rows`."""
        rows = self._select("SELECT query_id, doc_id, input_hash, probs FROM labels WHERE labeler = ? AND "
                            "prompt_hash = ?", (labeler, prompt_hash))
        want = set(pairs)
        out, bad = {}, []
        for q, d, h, p in rows:
            if (q, d, h) not in want:
                continue
            v = valid_probs(p, n_grades)
            if v is None:
                bad.append((labeler, prompt_hash, q, d, h))
            else:
                out[(q, d, h)] = v
        self.bad_rows = len(bad)
        if bad:
            self.con.execute("BEGIN IMMEDIATE")
            self.con.executemany("DELETE FROM labels WHERE labeler = ? AND prompt_hash = ? AND query_id = ? AND "
                                 "doc_id = ? AND input_hash = ?", bad)
            self.con.execute("COMMIT")
        return out

    def put(self, labeler: str, prompt: Prompt, pairs: Sequence[tuple[str, str, str]], probs: np.ndarray) -> None:
        """Insert one batch of ``(query_id, doc_id, input_hash)`` pairs in one transaction (committed on return)."""
        now = time.time()
        rows = [(labeler, prompt.hash, q, d, h, prompt.id, json.dumps([float(x) for x in p]), now)
                for (q, d, h), p in zip(pairs, probs)]
        self.con.execute("BEGIN IMMEDIATE")
        try:
            self.con.executemany("INSERT OR IGNORE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def rows(self, labeler: str, prompt_hash: str, pairs: Sequence[tuple[str, str, str]]) -> list[tuple]:
        """The stored rows ``(query_id, doc_id, input_hash, prompt_id, probs_json)`` of the cached pairs among
        ``pairs``, sorted by (query id, document id, input hash); ``probs_json`` is the stored text, so a copy is
        exact."""
        rows = self._select("SELECT query_id, doc_id, input_hash, prompt_id, probs FROM labels WHERE labeler = ? AND "
                            "prompt_hash = ? ORDER BY query_id, doc_id, input_hash", (labeler, prompt_hash))
        want = set(pairs)
        return [r for r in rows if (r[0], r[1], r[2]) in want and valid_probs(r[4]) is not None]

    def put_rows(self, labeler: str, prompt_hash: str, rows: Sequence[tuple]) -> int:
        """Insert rows ``(query_id, doc_id, input_hash, prompt_id, probs_json)`` as they are (``INSERT OR IGNORE``,
        one transaction, in the given order); returns how many were new."""
        now = time.time()
        before = self.count(labeler, prompt_hash)
        self.con.execute("BEGIN IMMEDIATE")
        try:
            self.con.executemany("INSERT OR IGNORE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                 [(labeler, prompt_hash, q, d, h, pid, p, now) for q, d, h, pid, p in rows])
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
