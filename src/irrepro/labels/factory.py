"""A labeler from a config mapping such as ``{"backend": "smollm2"}`` (:func:`make_labeler`)."""
from __future__ import annotations

import re

from irrepro.errors import InputError
from irrepro.labels.backends import BACKENDS, backend
from irrepro.labels.base import Labeler


def make_labeler(spec: dict) -> Labeler:
    """A labeler from a config mapping with a ``backend`` key (a name of :data:`irrepro.labels.backends.BACKENDS`;
    each backend module declares its keys).

    ``{backend: smollm2[, device, dtype, batch_size, threads]}`` · ``{backend: hf, model: google/flan-t5-large,
    kind: seq2seq, device: cpu, dtype: float32, batch_size: 8}`` · ``{backend: openai, base_url: …, model: …,
    api_key_env: OPENAI_API_KEY}`` · ``{backend: file, path: …, smoothing: 0.1}`` · ``{backend: hash, seed: 0}``.
    Unknown backends or keys, and missing required keys, raise :class:`~irrepro.errors.InputError` naming them;
    missing packages raise :class:`MissingPackageError` saying what to install.
    """
    if not isinstance(spec, dict):
        raise InputError(f"labeler spec: expected a mapping with a 'backend' key, got {type(spec).__name__}")
    spec = dict(spec)
    name = spec.pop("backend", None)
    if name not in BACKENDS:
        raise InputError(f"labeler backend {name!r}: expected one of {sorted(BACKENDS)}")
    module = backend(name)
    unknown = sorted(set(spec) - module.KEYS)
    if unknown:
        raise InputError(f"labeler spec for backend {name!r}: unknown key(s) {unknown}; allowed: "
                         f"{sorted(module.KEYS)}")
    absent = [k for k in module.REQUIRED if spec.get(k) in (None, "")]
    if absent:
        raise InputError(f"labeler spec for backend {name!r}: missing required key(s) {absent}")
    return module.make(spec)


def calibration_of(spec: dict) -> dict | None:
    """The score-to-grade mapping settings of a labeler spec whose backend returns a score (its module's
    ``CALIBRATION``, e.g. ``biencoder``: ``{"folds": …, "calibration_seed": …}`` with their defaults), else None (the
    backend's output is the label)."""
    defaults = getattr(backend(spec["backend"]), "CALIBRATION", None) if spec.get("backend") in BACKENDS else None
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
