"""Test collections through ir_datasets: topics, qrels and documents, in irrepro's frames.

``topics``: ``query_id, text``; ``qrels``: ``query_id, iteration, doc_id, relevance`` (for diversity qrels the
subtopic id goes into ``iteration``, as ir_measures expects).
"""
from __future__ import annotations

import pandas as pd

from .errors import InputError
from .mirror import ir_datasets_error


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


def docs_iter(ds, dataset_id: str = ""):
    """Yield ``{'docno', 'text'}`` dicts, the form PISA indexes."""
    try:
        for d in ds.docs_iter():
            yield {"docno": d.doc_id, "text": d.default_text()}
    except Exception as e:  # noqa: BLE001
        raise ir_datasets_error(dataset_id + " (documents)", e) from e
