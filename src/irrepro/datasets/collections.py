"""Test collections through ir_datasets: topics, qrels and documents, in irrepro's frames.

``topics``: ``query_id, text``; ``qrels``: ``query_id, iteration, doc_id, relevance`` (for diversity qrels the
subtopic id goes into ``iteration``, as ir_measures expects).
"""
from __future__ import annotations

from contextlib import contextmanager

import pandas as pd

from irrepro.errors import InputError
from irrepro.datasets.mirror import ir_datasets_error


@contextmanager
def store_lock(dataset_id: str, home=None):
    """Hold an exclusive lock on ``<IR_DATASETS_HOME>/.locks/<top-level id>.lock`` (``fcntl.flock``) for the
    duration: ir_datasets takes no lock on its cache writes and builds some stores (extracted archives, the
    docstore) lazily on first use, so two jobs (or two cluster jobs on a shared file system) that touch the same
    dataset first must not build it at once. Everything that may build a store goes through this lock; reads of a
    built store do not need it. The lock is per top-level id (``vaswani``, ``clueweb12``): subsets share files."""
    import fcntl
    import logging
    import os
    from pathlib import Path

    home = Path(home or os.environ.get("IR_DATASETS_HOME") or Path.home() / ".ir_datasets")
    d = home / ".locks"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{dataset_id.split('/')[0]}.lock"
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            logging.getLogger("irrepro.datasets").info("waiting for %s (another job is building %s)", path,
                                                       dataset_id)
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build_docstore(ds, dataset_id: str = "") -> None:
    """Build ir_datasets' docstore of ``ds`` now (under :func:`store_lock`), so that later jobs only read it."""
    with store_lock(dataset_id):
        store = ds.docs_store()
        try:
            first = next(iter(ds.docs_iter())).doc_id
            store.get(first)
        except Exception as e:  # noqa: BLE001
            raise ir_datasets_error(dataset_id + " (documents)", e) from e
        del store  # close the docstore while the interpreter is alive (its __del__ fails at shutdown)


def load(dataset_id: str):
    """``ir_datasets.load`` with a clear error for unknown ids."""
    import ir_datasets
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"unknown ir_datasets id {dataset_id!r} (see https://ir-datasets.com for the catalogue)") from None


def known_dataset(dataset_id: str) -> bool:
    import ir_datasets
    return dataset_id in ir_datasets.registry


def topics(ds, dataset_id: str = "") -> pd.DataFrame:
    try:
        rows = [(q.query_id, " ".join(q.default_text().split())) for q in ds.queries_iter()]
    except Exception as e:  # noqa: BLE001 - ir_datasets raises many kinds on failed downloads
        raise ir_datasets_error(dataset_id + " (queries)", e) from e
    return pd.DataFrame(rows, columns=["query_id", "text"])


def qrels(ds, dataset_id: str = "") -> pd.DataFrame:
    try:
        rows = []
        for q in ds.qrels_iter():
            it = getattr(q, "subtopic_id", None)
            if it is None:
                it = getattr(q, "iteration", "0")
            rows.append((q.query_id, str(it), q.doc_id, int(q.relevance)))
    except Exception as e:  # noqa: BLE001
        raise ir_datasets_error(dataset_id + " (qrels)", e) from e
    return pd.DataFrame(rows, columns=["query_id", "iteration", "doc_id", "relevance"])


#: Cleverdon's Cranfield codes as graded relevance (``collections.<c>.grades`` in the default config): code 1
#: "complete answer" is the best, 4 "minimum interest" the least; ir_datasets numbers them the other way round
#: (4 = complete answer). -1 (one row per query in the distributed qrels, not in Cleverdon's scheme) stays -1.
CRANFIELD_CLEVERDON = {-1: -1, 1: 4, 2: 3, 3: 2, 4: 1}


def map_grades(qrels: pd.DataFrame, grades: dict | None, where: str = "grades") -> pd.DataFrame:
    """``qrels`` with every ``relevance`` replaced by ``grades[relevance]`` (keys ints or their strings); ``None``
    returns the qrels unchanged (the grades as ir_datasets gives them). A grade without an entry raises
    :class:`InputError` naming ``where`` (the config key)."""
    if grades is None:
        return qrels
    table = {int(k): int(v) for k, v in grades.items()}
    missing = sorted(set(qrels["relevance"].astype(int)) - set(table))
    if missing:
        raise InputError(f"config key {where}: no entry for the qrels' grade(s) {missing} (has {sorted(table)})")
    out = qrels.copy()
    out["relevance"] = out["relevance"].astype(int).map(table)
    return out


def docs_iter(ds, dataset_id: str = "", jsonl: str | None = None):
    """Yield ``{'docno', 'text'}`` dicts, the form PISA indexes (from ``jsonl`` when the collection's documents
    come from a declared artifact instead of ir_datasets)."""
    if jsonl:
        yield from read_jsonl_docs(jsonl)
        return
    try:
        for d in ds.docs_iter():
            yield {"docno": d.doc_id, "text": d.default_text()}
    except Exception as e:  # noqa: BLE001
        raise ir_datasets_error(dataset_id + " (documents)", e) from e


def read_jsonl_docs(path, id_field: str = "docid", text_field: str = "doc"):
    """Yield ``{'docno', 'text'}`` from a (gzipped) JSONL file of documents, e.g. the TREC DL 2019 judged pool."""
    import gzip
    import json

    from irrepro.errors import InputError
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                yield {"docno": str(rec[id_field]), "text": rec[text_field]}
            except (ValueError, KeyError) as e:
                raise InputError(f"expected a JSON object with '{id_field}' and '{text_field}' ({e})",
                                 path=path, line=lineno) from None


class DocText:
    """``doc_text(ids) -> {docno: text}`` for RM3 feedback documents, from ir_datasets' docstore or a JSONL file."""

    def __init__(self, dataset_id: str | None = None, jsonl: str | None = None):
        self._store = None
        self._texts = None
        if jsonl:
            self._texts = {d["docno"]: d["text"] for d in read_jsonl_docs(jsonl)}
        else:
            ds = load(dataset_id)
            build_docstore(ds, dataset_id)  # under the store lock: no two jobs build it at once
            self._store = ds.docs_store()

    def __call__(self, ids):
        if self._texts is not None:
            return {i: self._texts[i] for i in ids if i in self._texts}
        return {d.doc_id: d.default_text() for d in self._store.get_many_iter(ids)}

    def close(self):
        self._store = None
        self._texts = None


def select_topics(topics: pd.DataFrame, qrels: pd.DataFrame, which: str, dataset_id: str = "", log=None):
    """The topics to retrieve for: ``all``, or ``judged`` (those with at least one judgment). What ``judged`` drops
    is logged (count and ids); no topic left is an error naming the collection."""
    if which == "judged":
        judged = set(qrels["query_id"])
        dropped = [q for q in topics["query_id"] if q not in judged]
        topics = topics[topics["query_id"].isin(judged)]
        if dropped and log is not None:
            log.info("%s: %d topic(s) without judgments dropped (topics: judged): %s%s", dataset_id, len(dropped),
                     dropped[:20], " ..." if len(dropped) > 20 else "")
    if topics.empty:
        raise InputError(f"{dataset_id}: no topics" + (" with judgments" if which == "judged" else ""))
    return topics
