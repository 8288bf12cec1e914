"""A deterministic pseudo-labeler, no model (:class:`HashLabeler`): tests, dry runs, timing the pipeline."""
from __future__ import annotations

import hashlib
import time

import numpy as np

from irrepro.labels.base import Labeler, check_lengths, softmax
from irrepro.labels.prompts import get_prompt


class HashLabeler(Labeler):
    """Deterministic pseudo-labels from sha256(seed, query id, document id): NOT a relevance model.

    For tests, dry runs of the pipeline and timing it; ``delay`` seconds of sleep per pair imitate a slow model.
    """

    check_degenerate = False  # labels by ids, not texts

    def __init__(self, seed: int = 0, delay: float = 0.0, batch_size: int = 8, name: str | None = None):
        self.seed = int(seed)
        self.delay = float(delay)
        self.batch_size = int(batch_size)
        self.name = name or f"hash:{self.seed}"

    def settings(self) -> dict:
        """The seed, when ``name`` is not the default ``hash:<seed>`` that carries it."""
        return {} if self.name == f"hash:{self.seed}" else {"seed": self.seed}

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        prompt = get_prompt(prompt)
        if query_ids is None or doc_ids is None:
            query_ids, doc_ids = queries, docs
        n = check_lengths(queries, docs, query_ids, doc_ids)
        G = prompt.n_grades
        out = np.empty((n, G))
        for i, (q, d) in enumerate(zip(query_ids, doc_ids)):
            if self.delay:
                time.sleep(self.delay)
            h = hashlib.sha256(f"{self.seed}\x00{prompt.hash}\x00{q}\x00{d}".encode()).digest()
            out[i] = [(h[r] + 1) / 257.0 for r in range(G)]
            out[i] = softmax(np.log(out[i]) * 4.0)
        return out


# the backend's declaration (irrepro.labels.backends): its config keys, those it requires, and its labeler
KEYS = frozenset({
    "seed", "delay", "batch_size", "name",
})
REQUIRED = ()


def make(spec: dict) -> HashLabeler:
    spec = dict(spec)
    return HashLabeler(**spec)
