"""Precomputed hard labels in qrels format as (optionally smoothed) one-hot distributions (:class:`FileLabeler`)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from irrepro.errors import InputError
from irrepro.labels.base import Labeler, check_lengths
from irrepro.labels.prompts import get_prompt


class FileLabeler(Labeler):
    """Precomputed hard labels in qrels format (``qid iteration docid grade``) as distributions.

    p = (1 − ε)·onehot(grade) + ε/G, with ε = ``smoothing`` in [0, 1) (default 0: one-hot). G is the prompt's number
    of grades; a grade outside 0..G-1 is an error naming the file. Pairs absent from the file raise
    :class:`~irrepro.errors.InputError` naming the file (``missing="error"``) or get a row of NaN
    (``missing="nan"``). The prompt's text is not used (the file's labels came from their own prompts), only G.
    ``name`` defaults to ``file:<file stem>`` (``@eps<ε>`` appended when ε > 0). The cache key adds a hash of
    :meth:`settings`: the file's labels themselves and ε, never the file's folder: an edited file is read again,
    two files of one name in different folders keep their own labels.
    """

    check_degenerate = False  # labels by ids, not texts

    def __init__(self, path, smoothing: float = 0.0, missing: str = "error", name: str | None = None,
                 batch_size: int = 1024):
        from irrepro.core.trec import read_qrels
        self.path = Path(path)
        if not self.path.exists():
            raise InputError("label file not found", path=self.path)
        if not (0.0 <= float(smoothing) < 1.0):
            raise InputError(f"smoothing {smoothing!r}: expected 0 <= smoothing < 1", path=self.path)
        if missing not in ("error", "nan"):
            raise InputError(f"missing={missing!r}: expected 'error' or 'nan'")
        self.smoothing = float(smoothing)
        self.missing = missing
        self.batch_size = int(batch_size)
        q = read_qrels(self.path)  # refuses a (query, document) labelled twice, naming both lines
        self.grades = dict(zip(zip(q.query_id.astype(str), q.doc_id.astype(str)), q.relevance.astype(int)))
        stem = self.path.name
        for ext in (".gz", ".txt", ".qrels", ".tsv"):
            stem = stem[: -len(ext)] if stem.endswith(ext) else stem
        self.name = name or (f"file:{stem}" + (f"@eps{self.smoothing:g}" if self.smoothing else ""))
        rows = sorted(f"{q}\t{d}\t{g}\n" for (q, d), g in self.grades.items())
        #: sha256 of the file's labels, one sorted ``query \t document \t grade`` line per pair (whatever the file's
        #: name, compression, line order, spacing or iteration column)
        self.content_id = hashlib.sha256("".join(rows).encode("utf-8")).hexdigest()

    def settings(self) -> dict:
        """The labels' content hash and the smoothing: all a label file's labels depend on besides the prompt."""
        return {"backend": "file", "labels_sha256": self.content_id, "smoothing": self.smoothing}

    def __len__(self):
        return len(self.grades)

    def pairs(self) -> pd.DataFrame:
        """The file's (query_id, doc_id, grade) rows."""
        return pd.DataFrame([(q, d, g) for (q, d), g in self.grades.items()], columns=["query_id", "doc_id", "grade"])

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        prompt = get_prompt(prompt)
        if query_ids is None or doc_ids is None:
            raise ValueError("FileLabeler.score needs query_ids and doc_ids")
        n = check_lengths(queries, docs, query_ids, doc_ids)
        G = prompt.n_grades
        out = np.full((n, G), self.smoothing / G)
        absent = []
        for i, (q, d) in enumerate(zip(query_ids, doc_ids)):
            g = self.grades.get((str(q), str(d)))
            if g is None:
                absent.append((q, d))
                out[i] = np.nan
                continue
            if not 0 <= g < G:
                raise InputError(f"grade {g} for query {q!r}, document {d!r} is outside 0..{G - 1} (prompt "
                                 f"{prompt.id!r} has {G} grades)", path=self.path)
            out[i, g] += 1.0 - self.smoothing
        if absent and self.missing == "error":
            raise InputError(f"{len(absent)} pair(s) have no label in this file, e.g. query {absent[0][0]!r}, "
                             f"document {absent[0][1]!r} (pass missing='nan' to get NaN rows)", path=self.path)
        return out


# the backend's declaration (irrepro.labels.backends): its config keys, those it requires, and its labeler
KEYS = frozenset({
    "path", "smoothing", "missing", "name", "batch_size",
})
REQUIRED = ("path",)


def make(spec: dict) -> FileLabeler:
    spec = dict(spec)
    return FileLabeler(spec.pop("path"), **spec)
