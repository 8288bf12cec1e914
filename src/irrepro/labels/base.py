"""The labeler interface and what every backend shares (Oosterhuis et al., KDD 2024, Sec. 5).

A labeler maps a (query q, document d) pair and a prompt with grade suffixes s_0..s_{G-1} to the distribution

    P(r | q, d) = softmax_r( log P_LLM(s_r | prompt(q, d)) ),    r = 0..G-1

(:func:`softmax`); label tables hold it in the columns :func:`label_columns`; :func:`expected_grade` is
E[r] = Σ_r r · p_r. Optional packages a backend needs are imported through
:func:`irrepro.models.optional.require`, which raises :class:`~irrepro.models.optional.MissingPackageError` saying
how to install them.
"""
from __future__ import annotations

import abc
import hashlib
import json
from typing import Sequence

import numpy as np
import pandas as pd

from irrepro.labels.prompts import Prompt


def softmax(logp: np.ndarray) -> np.ndarray:
    """Row-wise softmax of log-scores (numerically stable). Rows of all ``-inf`` become uniform."""
    x = np.asarray(logp, dtype=np.float64)
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    s = e.sum(axis=-1, keepdims=True)
    out = np.divide(e, s, out=np.full_like(e, 1.0 / x.shape[-1]), where=s > 0)
    return out


class LabelerError(RuntimeError):
    """A labeler produced numbers that are not labels (NaN or infinite log-probabilities), or a server's reply from
    which no distribution over the grades can be read."""


def settings_hash(settings: dict) -> str:
    """The first 16 hex digits of the sha256 of ``settings`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def check_log_scores(name: str, logp: np.ndarray, query_ids: Sequence, doc_ids: Sequence) -> np.ndarray:
    """``logp`` (n, G) unchanged when every row holds log-probabilities: no NaN, no +inf, at least one finite
    value (−inf alone is probability 0). Otherwise :class:`LabelerError` naming the labeler, how many pairs and the
    first of them — the softmax would turn such a row into the uniform distribution, a label nobody gave."""
    x = np.asarray(logp, dtype=np.float64)
    bad = np.isnan(x).any(axis=1) | np.isposinf(x).any(axis=1) | ~np.isfinite(x).any(axis=1) if x.size else \
        np.zeros(len(x), dtype=bool)
    if bad.any():
        idx = np.flatnonzero(bad)
        shown = ", ".join(f"({query_ids[i]!r}, {doc_ids[i]!r}): {x[i].tolist()}" for i in idx[:3])
        raise LabelerError(f"labeler {name!r}: {len(idx)} of {len(x)} pair(s) got non-finite log-probabilities "
                           f"(NaN or inf), e.g. {shown}; no label is written. A damaged model file, a float16 "
                           "overflow (try dtype float32 or bfloat16) or a server error gives this")
    return x


def label_columns(n_grades: int) -> list[str]:
    """``["p_0", …, "p_{G-1}"]``."""
    return [f"p_{r}" for r in range(n_grades)]


def expected_grade(labels: pd.DataFrame) -> pd.Series:
    """E[r] = Σ_r r · p_r for each row of a labels table."""
    cols = [c for c in labels.columns if c.startswith("p_") and c[2:].isdigit()]
    cols.sort(key=lambda c: int(c[2:]))
    p = labels[cols].to_numpy(dtype=float)
    return pd.Series(p @ np.arange(len(cols)), index=labels.index, name="expected_grade")


# ==================================================================================================== interface
class Labeler(abc.ABC):
    """Maps (query, document) pairs to distributions over a prompt's G grades.

    ``name`` is the labeler's readable name; its identity in the cache is :attr:`cache_key`, which adds a hash of
    the weights (``weights_id``) and a hash of every other input that determines its labels (:meth:`settings`), so
    that two labelers with the same key give the same labels. ``batch_size`` is the number of pairs
    :func:`label_pairs` hands to :meth:`score` at a time (and commits to the cache together).
    """

    name: str = "labeler"
    batch_size: int = 8
    #: a hash of the weights a local model was loaded from (None: a remote model or no model)
    weights_id: str | None = None
    #: whether :func:`~irrepro.labels.labelling.label_pairs` refuses the labeler when pairs of different texts all get the
    #: same distribution (:class:`~irrepro.labels.labelling.DegeneracyCheck`); False for labelers that read ids, not texts
    #: (a label file may give every pair the same grade)
    check_degenerate: bool = True

    def settings(self) -> dict:
        """What determines the labels beyond ``name``, ``weights_id`` and the prompt (cached apart by its hash): a
        label file's content, a server's URL and request, a setting that changes a local model's input. A local
        backend lists a setting only where it is not at the value that leaves the model's input as it is (so the keys
        of labels cached before it was listed stay the same); ``{}``: nothing."""
        return {}

    @property
    def cache_key(self) -> str:
        """The labeler's full identity in the label cache: ``name``; then ``#`` and the first 16 hex digits of the
        weights' hash, for a local model; then ``#`` and :func:`settings_hash` of :meth:`settings`, when they are
        not empty. Labels made from other weights, another label file, another server or other settings are never
        served."""
        key = self.name if not self.weights_id else f"{self.name}#{self.weights_id[:16]}"
        settings = self.settings()
        return f"{key}#{settings_hash(settings)}" if settings else key

    def order_key(self, query: str, doc: str):
        """Where :func:`~irrepro.labels.labelling.label_pairs` puts a pair in its labelling order (ascending): shortest
        texts first, less padding in a batch."""
        return len(query) + len(doc)

    @abc.abstractmethod
    def score(self, prompt: Prompt, queries: Sequence[str], docs: Sequence[str], *,
              query_ids: Sequence[str] | None = None, doc_ids: Sequence[str] | None = None) -> np.ndarray:
        """Distributions, an array (n, G) whose rows sum to 1, for the pairs (queries[i], docs[i]).

        Text-based labelers use ``queries``/``docs``; :class:`FileLabeler` and :class:`HashLabeler` use the ids.
        """

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


def check_lengths(queries, docs, query_ids=None, doc_ids=None):
    n = len(queries)
    if len(docs) != n or (query_ids is not None and len(query_ids) != n) or (doc_ids is not None and len(doc_ids) != n):
        raise ValueError("queries, docs (and query_ids, doc_ids) must have the same length")
    return n
