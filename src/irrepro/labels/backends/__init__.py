"""Labeler backends, one module each, found by name in :data:`BACKENDS` (the ``backend`` key of a labeler's config).

A backend module declares what :func:`irrepro.labels.factory.make_labeler` needs, and nothing else ties it to the
rest of the package:

* ``KEYS`` — the config keys it accepts (any other is an error naming it);
* ``REQUIRED`` — the keys that must be given;
* ``make(spec) -> Labeler`` — the labeler from a validated spec (the mapping without ``backend``);
* optionally ``CALIBRATION`` — for a backend whose output is a score rather than a grade distribution, the keys of
  its score-to-grade mapping with their defaults (:mod:`irrepro.labels.calibrate`), read by the label stage.

A new backend is a module here and a line in :data:`BACKENDS` (and the name in the config schema's ``backend``
enum). A module imports its optional packages (``transformers``, ``torch``) when a labeler of it is made, so a
missing one only matters to the backends that need it.
"""
from __future__ import annotations

import importlib
from types import ModuleType

#: backend name (the config's ``backend``) -> its module
BACKENDS = {
    "smollm2": "irrepro.labels.backends.smollm2",  # SmolLM2-135M-Instruct, packaged: the offline default
    "hf": "irrepro.labels.backends.hf",  # any local Hugging Face model (seq2seq or causal) in scoring mode
    "openai": "irrepro.labels.backends.openai",  # an OpenAI-compatible server (vLLM, llama.cpp, OpenAI)
    "biencoder": "irrepro.labels.backends.biencoder",  # a bi-encoder's similarity, calibrated to grades
    "file": "irrepro.labels.backends.file",  # precomputed labels in qrels format
    "hash": "irrepro.labels.backends.hash",  # deterministic pseudo-labels: tests and timing, not relevance
}


def backend(name: str) -> ModuleType:
    """The module of backend ``name`` (KeyError for an unknown one: the caller names the config key)."""
    return importlib.import_module(BACKENDS[name])
