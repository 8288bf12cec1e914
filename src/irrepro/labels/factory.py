"""A labeler from a config mapping such as ``{"backend": "smollm2"}`` (:func:`make_labeler`)."""
from __future__ import annotations

import re

from irrepro.errors import InputError
from irrepro.labels.base import Labeler
from irrepro.labels.encoder import BiEncoderLabeler
from irrepro.labels.file import FileLabeler
from irrepro.labels.hash import HashLabeler
from irrepro.labels.hf import HFLabeler
from irrepro.labels.openai import OpenAILabeler
from irrepro.labels.smollm2 import smollm2_labeler

_SPEC_KEYS = {
    "smollm2": {"device", "dtype", "batch_size", "threads", "max_doc_tokens", "name", "share_prefix", "convert"},
    "hf": {"model", "kind", "device", "dtype", "batch_size", "threads", "max_doc_tokens", "name", "chat_template",
           "raw_suffix_prefix", "gguf_file", "revision", "trust_remote_code", "share_prefix"},
    "openai": {"model", "base_url", "api_key_env", "endpoint", "top_logprobs", "max_tokens", "missing_logprob",
               "timeout", "max_retries", "retry_delay", "concurrency", "batch_size", "name", "extra_body", "mode",
               "chat_template", "raw_suffix_prefix", "tokenize_url", "serve"},
    "file": {"path", "smoothing", "missing", "name", "batch_size"},
    "hash": {"seed", "delay", "batch_size", "name"},
    "biencoder": {"model", "device", "dtype", "batch_size", "threads", "max_tokens", "name", "similarity", "folds",
                  "calibration_seed"},
}
#: keys of the score-to-grade mapping (irrepro.labels.calibrate), read by the label stage, not by the labeler
CALIBRATION_KEYS = {"biencoder": {"folds": 5, "calibration_seed": 0}}
_REQUIRED = {"hf": ["model"], "openai": ["model"], "file": ["path"]}


def make_labeler(spec: dict) -> Labeler:
    """A labeler from a config mapping with a ``backend`` key (see :data:`_SPEC_KEYS` for each backend's keys).

    ``{backend: smollm2[, device, dtype, batch_size, threads]}`` · ``{backend: hf, model: google/flan-t5-large,
    kind: seq2seq, device: cpu, dtype: float32, batch_size: 8}`` · ``{backend: openai, base_url: …, model: …,
    api_key_env: OPENAI_API_KEY}`` · ``{backend: file, path: …, smoothing: 0.1}`` · ``{backend: hash, seed: 0}``.
    Unknown backends or keys, and missing required keys, raise :class:`~irrepro.errors.InputError` naming them;
    missing packages raise :class:`MissingPackageError` saying what to install.
    """
    if not isinstance(spec, dict):
        raise InputError(f"labeler spec: expected a mapping with a 'backend' key, got {type(spec).__name__}")
    spec = dict(spec)
    backend = spec.pop("backend", None)
    if backend not in _SPEC_KEYS:
        raise InputError(f"labeler backend {backend!r}: expected one of {sorted(_SPEC_KEYS)}")
    unknown = sorted(set(spec) - _SPEC_KEYS[backend])
    if unknown:
        raise InputError(f"labeler spec for backend {backend!r}: unknown key(s) {unknown}; allowed: "
                         f"{sorted(_SPEC_KEYS[backend])}")
    absent = [k for k in _REQUIRED.get(backend, []) if spec.get(k) in (None, "")]
    if absent:
        raise InputError(f"labeler spec for backend {backend!r}: missing required key(s) {absent}")
    if backend == "smollm2":
        return smollm2_labeler(**spec)
    if backend == "hf":
        return HFLabeler(spec.pop("model"), **spec)
    if backend == "openai":
        return OpenAILabeler(spec.pop("model"), **spec)
    if backend == "file":
        return FileLabeler(spec.pop("path"), **spec)
    if backend == "biencoder":
        for k in CALIBRATION_KEYS[backend]:
            spec.pop(k, None)
        return BiEncoderLabeler(**spec)
    return HashLabeler(**spec)


def calibration_of(spec: dict) -> dict | None:
    """The score-to-grade mapping settings of a labeler spec whose backend returns a score (``biencoder``:
    ``{"folds": …, "calibration_seed": …}`` with their defaults), else None (the backend's output is the label)."""
    defaults = CALIBRATION_KEYS.get(spec.get("backend"))
    if defaults is None:
        return None
    return {k: spec.get(k, v) for k, v in defaults.items()}


#: a labeler backend's model -> the neural retrieval models (``irrepro.retrieval.neural.MODELS``) that are that model
LABELER_MODELS = {("biencoder", "minilm"): ("minilm-l6-v2",)}

#: words of labeler names and models too common to identify a model
GENERIC_WORDS = {"file", "openai", "biencoder", "encoder", "vllm", "labels", "labeler", "model", "large", "small",
                 "base", "instruct", "serve", "score"}


def labeler_models(spec: dict) -> tuple:
    """The neural retrieval models a labeler config entry shares its weights with (none for file labels)."""
    return LABELER_MODELS.get((spec.get("backend"), spec.get("model", "minilm" if spec.get("backend") == "biencoder"
                                                                     else None)), ())


def model_words(labeler: str, spec: dict) -> set:
    """The words that identify the labeler's model: its name and its ``model`` (a path's last part), whole and
    split at non-alphanumerics, lowercased, at least 4 characters, generic words (:data:`GENERIC_WORDS`) left out."""
    out = set()
    for text in (labeler, str(spec.get("model") or "").rstrip("/").split("/")[-1], spec.get("backend") or ""):
        text = str(text).lower()
        for w in [text, *re.split(r"[^a-z0-9]+", text)]:
            if len(w) >= 4 and w not in GENERIC_WORDS:
                out.add(w)
    return out
