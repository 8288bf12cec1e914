"""A local Hugging Face model in scoring mode (:class:`HFLabeler`): log P(s_r | prompt(q, d)) of each grade
suffix, summed over the suffix's tokens (chain rule), then the softmax over grades."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from irrepro.core.arithmetic import model_arithmetic
from irrepro.errors import InputError
from irrepro.labels.base import Labeler, check_lengths, check_log_scores, softmax
from irrepro.models.device import torch_device
from irrepro.models.optional import HINTS, require
from irrepro.labels.prefix import SENTINELS, PrefixStore, TokenStats, group_by_prefix
from irrepro.labels.prompts import Prompt, get_prompt


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


WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")


def local_weights_id(model: str, gguf_file: str | None = None) -> str | None:
    """sha256 over the weight files of a local model folder (``gguf_file`` alone when given; the name and content of
    every ``*.safetensors``, ``*.bin``, ``*.gguf``, ``*.pt``, ``*.pth`` file otherwise), or None for a hub id (the
    hub's revision pins those). Reads every weight byte once per load."""
    import hashlib

    folder = Path(model)
    if not folder.is_dir():
        return None
    files = [folder / gguf_file] if gguf_file else sorted(p for p in folder.iterdir()
                                                           if p.is_file() and p.suffix in WEIGHT_SUFFIXES)
    if not files:
        return None
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


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
    Shared prefixes (causal, ``share_prefix``): the tokens before the document (chat header, instructions, query)
    are the same for every document of a query, and the tokens before the query (chat header, instructions) the
    same for every pair of a prompt. ``share_prefix=True`` (default) runs the instruction prefix once per prompt
    and the query's tokens once per query (extending the instruction prefix's KV cache), then only each pair's
    document and answer tokens (:mod:`irrepro.labels.prefix` finds the token boundaries and keeps the KV caches);
    ``"batch"`` shares only the token prefix common to all prompts of one call;
    ``False`` runs every prompt in full. Rows of different queries share a batch (their prefix caches stacked),
    sorted by the tokens left to run; models whose cache holds more than keys and values batch one prefix at a
    time. A row is left-padded with attention mask 0 and explicit position ids, so a padded row gives the same
    log-probabilities as the row alone, up to float rounding; :attr:`stats` counts the tokens computed. When
    suffixes have more than one token, the grade continuations reuse the prompt's KV cache. ``max_doc_tokens``
    truncates the document (never the instructions) to that many tokens.

    ``device``: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or ``"auto"`` (CUDA when available). ``dtype``:
    ``"float32"``, ``"float64"``, ``"bfloat16"``, ``"float16"`` or ``"auto"`` (the checkpoint's). ``threads`` sets
    torch's CPU threads. ``model_obj``/``tokenizer`` accept already-built objects (then ``model`` is only a name).
    ``name`` names the labeler; the default is ``hf:<model>``, with ``@<dtype>`` appended unless float32; a
    dtype other than float32 adds its arithmetic (device kind, native or emulated on a CPU:
    :func:`irrepro.core.arithmetic.arithmetic`) to :meth:`settings`. Its cache
    key (:attr:`~irrepro.labels.base.Labeler.cache_key`) appends the hash of a local model's weight files
    (:func:`local_weights_id`, or ``weights_id`` when given).
    """

    def __init__(self, model: str, kind: str = "auto", device: str = "cpu", dtype: str = "float32",
                 batch_size: int = 8, *, name: str | None = None, chat_template: bool | None = None,
                 max_doc_tokens: int | None = None, raw_suffix_prefix: str = " ", gguf_file: str | None = None,
                 threads: int | None = None, share_prefix: bool | str = True, revision: str | None = None,
                 trust_remote_code: bool = False, weights_id: str | None = None,
                 model_obj=None, tokenizer=None):
        transformers = require("transformers", HINTS["transformers"])
        torch = require("torch", HINTS["torch"])
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
        self.device = torch_device(torch, device)
        self.dtype_name = str(dtype)
        torch_dtype = "auto" if dtype == "auto" else getattr(torch, str(dtype), None)
        if torch_dtype is None or (torch_dtype != "auto" and not isinstance(torch_dtype, torch.dtype)):
            raise InputError(f"labeler dtype {dtype!r}: expected float32, float64, bfloat16, float16 or auto")

        load_kw = {}
        if gguf_file:
            require("gguf", HINTS["gguf"])
            require("accelerate", HINTS["accelerate"])
            load_kw["gguf_file"] = gguf_file
        if revision:
            load_kw["revision"] = revision
        if trust_remote_code:
            load_kw["trust_remote_code"] = True
        if tokenizer is None:
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_id, **load_kw)
        self.tokenizer = tokenizer
        model_obj_given = model_obj is not None
        if model_obj is None:
            config = transformers.AutoConfig.from_pretrained(self.model_id, **load_kw)
            if kind == "auto":
                kind = "seq2seq" if getattr(config, "is_encoder_decoder", False) else "causal"
            cls = transformers.AutoModelForSeq2SeqLM if kind == "seq2seq" else transformers.AutoModelForCausalLM
            try:
                model_obj = cls.from_pretrained(self.model_id, dtype=torch_dtype, **load_kw)
            except Exception as e:  # noqa: BLE001 - safetensors, torch and transformers each raise their own
                weights = [str(p) for p in sorted(Path(self.model_id).glob("*"))
                           if p.suffix in WEIGHT_SUFFIXES] if Path(self.model_id).is_dir() else []
                if not weights:
                    raise
                raise InputError(f"the weights of {self.model_id} could not be loaded ({type(e).__name__}: {e}): "
                                 f"{', '.join(weights)} is damaged or truncated; copy or download it again (a "
                                 "converted SmolLM2 folder is converted again when deleted)") from e
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
        auto_chat_template = kind == "causal" and bool(getattr(self.tokenizer, "chat_template", None))
        if chat_template is None:
            chat_template = auto_chat_template
        if chat_template and kind == "seq2seq":
            raise InputError("chat_template=True applies to causal models only")
        if chat_template and not getattr(self.tokenizer, "chat_template", None):
            raise InputError(f"the tokenizer of {self.model_id!r} has no chat template (pass chat_template=False)")
        self.chat_template = bool(chat_template)
        import inspect
        self._logits_to_keep = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        default_name = f"hf:{self.model_id}" + ("" if self.dtype_name == "float32" else f"@{self.dtype_name}")
        self.name = name or default_name
        #: the settings that change what the model reads or how it is loaded, at other than their defaults
        #: (:meth:`settings`); the dtype and the model's id where a given ``name`` replaces the default that holds them
        self.input_settings = {k: v for k, v in {
            "max_doc_tokens": int(max_doc_tokens) if max_doc_tokens else None,
            "chat_template": self.chat_template if self.chat_template != auto_chat_template else None,
            "raw_suffix_prefix": raw_suffix_prefix if kind == "causal" and not self.chat_template
            and raw_suffix_prefix != " " else None,
            "revision": revision or None,
        }.items() if v is not None}
        if name is not None and name != default_name:
            self.input_settings["dtype"] = self.dtype_name
        #: what a dtype other than float32 computes in (irrepro.core.arithmetic): part of the cache key
        self.arithmetic = model_arithmetic(self.device, str(self.model.dtype), f"labeler {self.name}")
        if self.arithmetic is not None:
            self.input_settings["arithmetic"] = self.arithmetic
        self.weights_id = weights_id if weights_id or model_obj_given else local_weights_id(self.model_id, gguf_file)
        self._suffix_cache: dict = {}
        if share_prefix not in (True, False, "batch", "query"):
            raise InputError(f"labeler share_prefix {share_prefix!r}: expected true, false or 'batch'")
        self.share_prefix = share_prefix
        self.prefixes = PrefixStore(self._extend_cache)
        self.stats = TokenStats()

    def settings(self) -> dict:
        """:attr:`input_settings` (document truncation, a chat template other than the tokenizer's choice, the raw
        suffix prefix, the revision, the dtype under a given name), plus the model's id for a model without local
        weights to hash; ``{}`` at the defaults (the key stays ``name#<weights>``)."""
        s = dict(self.input_settings)
        if s and not self.weights_id:
            s["model"] = self.model_id
        return s

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
        n = check_lengths(queries, docs)
        if not n:
            return np.zeros((0, prompt.n_grades))
        return softmax(check_log_scores(self.name, self.log_scores(prompt, queries, docs), query_ids or queries,
                                        doc_ids or [d[:40] for d in docs]))

    def log_scores(self, prompt: Prompt, queries: Sequence[str], docs: Sequence[str]) -> np.ndarray:
        """log P(s_r | prompt(q, d)) for every pair and grade: an array (n, G) (before the softmax)."""
        prompt = get_prompt(prompt)
        texts = [self.prompt_text(prompt, q, d) for q, d in zip(queries, docs)]
        suffix_ids = self.suffix_token_ids(prompt)
        special = not self.chat_template  # a chat template writes its own special tokens (e.g. BOS)
        enc = [self.tokenizer(t, add_special_tokens=special).input_ids for t in texts]
        out = np.empty((len(texts), len(suffix_ids)))
        if self.kind == "seq2seq":
            order = np.argsort([len(e) for e in enc], kind="stable")
            for i in range(0, len(order), self.batch_size):
                idx = order[i:i + self.batch_size]
                out[idx] = self._score_seq2seq([enc[j] for j in idx], suffix_ids)
            return out
        if self.share_prefix in (True, "query"):
            prefixes = [self.prefixes.split(e, self._query_prefix(prompt, q), self._instruction_prefix(prompt))
                        for q, e in zip(queries, enc)]
        elif self.share_prefix == "batch":
            P = min(_common_prefix_len(enc), min(len(e) for e in enc) - 1)
            prefixes = [tuple(enc[0][:P]) if P >= 8 else ()] * len(enc)
        else:
            prefixes = [()] * len(enc)
        rest = [len(e) - len(p) for e, p in zip(enc, prefixes)]
        if self.share_prefix in (True, "query") and self.prefixes.stackable(prefixes):
            # rows of different queries in one batch (their prefix caches stacked): sorted by the tokens left to run
            groups = [((), sorted(range(len(enc)), key=lambda i: rest[i]))]
        else:
            groups = group_by_prefix(prefixes, rest)
        for prefix, idx in groups:
            for i in range(0, len(idx), self.batch_size):
                b = idx[i:i + self.batch_size]
                out[b] = self._score_causal([enc[j][len(prefixes[j]):] for j in b], suffix_ids,
                                            [prefixes[j] for j in b])
        self.stats.pairs += len(enc)
        self.stats.prompt_tokens += sum(len(e) for e in enc)
        return out

    def _sentinel_prefix(self, prompt: Prompt, pairs) -> tuple:
        """Common token prefix of the prompts of two (query, doc) pairs that differ in one field only."""
        special = not self.chat_template
        a, b = (self.tokenizer(self.prompt_text(prompt, q, d), add_special_tokens=special).input_ids
                for q, d in pairs)
        return tuple(a[:_common_prefix_len([a, b])])

    def _instruction_prefix(self, prompt: Prompt) -> tuple:
        """Tokens every prompt of ``prompt`` starts with (chat header, instructions up to the query)."""
        key = ("instructions", prompt.hash, self.chat_template)
        if key not in self._suffix_cache:
            self._suffix_cache[key] = self._sentinel_prefix(prompt, [(s, "a") for s in SENTINELS])
        return self._suffix_cache[key]

    def _query_prefix(self, prompt: Prompt, query: str) -> tuple:
        """Tokens every prompt of (``prompt``, ``query``) starts with (up to the document)."""
        key = ("query", prompt.hash, self.chat_template, query)
        if key not in self._suffix_cache:
            self._suffix_cache[key] = self._sentinel_prefix(prompt, [(query, s) for s in SENTINELS])
        return self._suffix_cache[key]

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

    def _extend_cache(self, cache, tokens: tuple):
        """Run ``tokens`` (one row) after ``cache`` (a DynamicCache of the preceding tokens, or None) and return the
        grown cache; counted in :attr:`stats` as prefix tokens."""
        torch = self._torch
        from transformers import DynamicCache
        cache = DynamicCache() if cache is None else cache
        ids = torch.tensor([tokens], dtype=torch.long, device=self.device)
        with torch.inference_mode():
            out = self.model(input_ids=ids, past_key_values=cache, use_cache=True,
                             **({"logits_to_keep": 1} if self._logits_to_keep else {}))
        self.stats.prefix_tokens += len(tokens)
        return out.past_key_values

    def _score_causal(self, batch, suffix_ids, prefixes=()):
        """Rows ``prefixes[i] + batch[i]`` (each prefix's KV cache computed once, :attr:`prefixes`), then the grade
        continuations. ``prefixes``: one tuple of token ids per row, or one tuple shared by all rows.

        Layout: [left padding | prefix_i | left padding | rest_i | continuation c]; padding has attention mask 0 and
        the position ids are explicit, so every row sees exactly its own tokens at their unpadded positions.
        """
        torch = self._torch
        contexts, which = _suffix_plan(suffix_ids)
        B = len(batch)
        if isinstance(prefixes, tuple):
            prefixes = [prefixes] * B
        ids, rmask = self._pad(batch, "left")
        plen = torch.tensor([len(p) for p in prefixes], dtype=torch.long, device=self.device)
        pos = plen[:, None] + (rmask.cumsum(-1) - 1).clamp(min=0)
        mask = rmask
        multi = any(len(c) for c in contexts)
        kw = {"logits_to_keep": 1} if self._logits_to_keep else {}
        cache = None
        if any(prefixes):
            cache, pmask = self.prefixes.rows(prefixes)
            mask = torch.cat([pmask.to(self.device), rmask], dim=1)
        elif multi:
            from transformers import DynamicCache
            cache = DynamicCache()
        self.stats.row_tokens += ids.numel()
        self.stats.real_tokens += int(rmask.sum())
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
                cpos = (plen + rmask.sum(-1)).repeat_interleave(C)[:, None] + torch.arange(Lc, device=self.device)
                self.stats.row_tokens += cids.numel()
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


# the backend's declaration (irrepro.labels.backends): its config keys, those it requires, and its labeler
KEYS = frozenset({
    "model", "kind", "device", "dtype", "batch_size", "threads", "max_doc_tokens", "name", "chat_template",
    "raw_suffix_prefix", "gguf_file", "revision", "trust_remote_code", "share_prefix",
})
REQUIRED = ("model",)


def make(spec: dict) -> HFLabeler:
    spec = dict(spec)
    return HFLabeler(spec.pop("model"), **spec)
