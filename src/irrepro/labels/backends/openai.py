"""An OpenAI-compatible server (vLLM, llama.cpp server, OpenAI) with ``logprobs`` (:class:`OpenAILabeler`)."""
from __future__ import annotations

import http.client
import json
import logging
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from irrepro.errors import InputError
from irrepro.labels.base import Labeler, LabelerError, check_lengths, check_log_scores, softmax
from irrepro.labels.prompts import Prompt, get_prompt

log = logging.getLogger("irrepro.labels")


class OpenAILabeler(Labeler):
    """An OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, …) through plain HTTP (``urllib``).

    One request per pair, ``temperature=0``, ``logprobs`` with ``top_logprobs`` alternatives per position:
    ``endpoint="chat"`` posts to ``{base_url}/chat/completions`` with the prompt as the user message;
    ``endpoint="completions"`` posts the raw prompt to ``{base_url}/completions`` (base models).

    Servers give log-probabilities only for the top-k tokens of the generated positions, so a grade's score is
    read at the first generated position whose alternatives contain a grade: the *core* of suffix r (the suffix
    without whitespace and brackets, e.g. ``"[1]"`` → ``"1"``) is matched against the alternatives (stripped the
    same way); alternatives matching the same grade (``"1"``, ``" 1"``) are combined with log-sum-exp. Tokens
    before that position (``"["``, a space) are taken as given (the greedy prefix).

    **A reply is a label only when it gives every grade a log-probability.** Otherwise :class:`LabelerError` names
    the URL and the pair, and nothing of the batch is cached: a reply that is not JSON, has no ``logprobs`` or no
    generated position, shows no grade among any position's alternatives, or lists fewer alternatives than
    ``top_logprobs`` asks at the grade position while a grade is absent (an incomplete reply: the absent grade may
    rank anywhere). A grade absent from a full top-k list is an error too, unless ``missing_logprob`` says what it
    gets: a log-probability (a number <= 0), or ``"floor"``, the lowest log-probability among the position's
    alternatives (an upper bound on the absent grade's). Each batch's log line counts the pairs and grades it filled;
    ``missing_logprob`` is part of the cache identity.

    **Scoring mode** (``mode="score"``; vLLM's OpenAI server): no generation. The prompt is tokenised by the
    server's own tokenizer (``POST {root}/tokenize``, ``root`` = ``base_url`` without its ``/v1``: with the chat
    template and its generation prompt when ``chat_template``, else the raw text), each grade suffix once per prompt
    (without special tokens; after ``raw_suffix_prefix`` without a chat template), and one ``/completions`` request
    per pair sends the G token sequences prompt + suffix_r with ``echo``, ``max_tokens=0`` and ``logprobs=0``: the
    server returns the log-probability of every prompt token, and log P(s_r | prompt) is the sum over suffix r's
    tokens — the exact score of every grade (as :class:`~irrepro.labels.backends.hf.HFLabeler` computes it), no top-k floor.
    Two requests per pair (``tokenize`` is cheap); ``max_tokens``, ``top_logprobs`` and ``missing_logprob`` do not
    apply. A reply without every grade's echoed log-probabilities is an error naming the URL and the pair.

    ``serve``: settings of a vLLM server that the label job starts for its own use and stops at its end
    (:func:`irrepro.labels.vllm.serving`; ``base_url`` is then that server's); without it ``base_url`` reaches a
    running server.

    ``api_key``: passed directly, or read from the environment variable ``api_key_env`` (default
    ``OPENAI_API_KEY``); none → no ``Authorization`` header (local servers). Transient errors (HTTP 429/5xx,
    connection errors) are retried ``max_retries`` times with exponential back-off from ``retry_delay`` seconds.
    ``concurrency`` requests run at a time. ``name`` defaults to ``openai:<model>`` (``openai-score:<model>`` in
    scoring mode, ``@raw`` appended without the chat template); the cache key appends the hash of :meth:`settings`:
    the server (``base_url``, or the ``serve`` settings with the served model's weights hash), the request (URL,
    model, every body parameter, ``extra_body`` included) and how the reply is read.
    """

    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1", *, api_key: str | None = None,
                 api_key_env: str | None = "OPENAI_API_KEY", endpoint: str = "chat", top_logprobs: int = 20,
                 max_tokens: int = 4, missing_logprob: float | None = None, timeout: float = 60.0,
                 max_retries: int = 5, retry_delay: float = 1.0, concurrency: int = 4, batch_size: int = 16,
                 name: str | None = None, extra_body: dict | None = None, mode: str = "generate",
                 chat_template: bool = True, raw_suffix_prefix: str = " ", tokenize_url: str | None = None,
                 serve: dict | None = None):
        if endpoint not in ("chat", "completions"):
            raise InputError(f"openai endpoint {endpoint!r}: expected chat or completions")
        if mode not in ("generate", "score"):
            raise InputError(f"openai mode {mode!r}: expected generate or score")
        self.mode = mode
        self.chat_template = bool(chat_template)
        self.raw_suffix_prefix = str(raw_suffix_prefix)
        self.model = str(model)
        self.base_url = str(base_url).rstrip("/")
        if api_key is None and api_key_env:
            api_key = os.environ.get(api_key_env) or None
        if api_key is None and "api.openai.com" in self.base_url and not serve:  # `serve`: a local server
            raise InputError(f"no API key for {self.base_url}: set the environment variable "
                             f"{api_key_env or 'OPENAI_API_KEY'} or pass api_key")
        self._api_key = api_key
        self.endpoint = endpoint
        self.top_logprobs = int(top_logprobs)
        self.max_tokens = int(max_tokens)
        if missing_logprob is not None and missing_logprob != "floor":
            try:
                ok = -np.inf < float(missing_logprob) <= 0 and not isinstance(missing_logprob, bool)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise InputError(f"openai missing_logprob {missing_logprob!r}: expected null (a grade absent from the "
                                 "top alternatives is an error), a finite log-probability <= 0, or 'floor' (the "
                                 "lowest alternative's)")
            missing_logprob = float(missing_logprob)
        self.missing_logprob = missing_logprob
        #: pairs (and grades) given ``missing_logprob`` because a grade was absent from the top alternatives
        self.filled = {"pairs": 0, "grades": 0}
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.retry_delay = float(retry_delay)
        self.concurrency = max(1, int(concurrency))
        self.batch_size = int(batch_size)
        self.extra_body = dict(extra_body or {})
        self.name = name or (f"openai:{self.model}" if mode == "generate" else
                             f"openai-score:{self.model}" + ("" if self.chat_template else "@raw"))
        root = self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url
        self.tokenize_url = str(tokenize_url or f"{root}/tokenize")
        self._suffix_ids: dict = {}
        #: a vLLM server to start for the labelling job (:func:`irrepro.labels.vllm.serving`), or None
        self.serve = dict(serve) if serve else None
        self._served_weights: str | None = None

    # ------------------------------------------------------------------ identity
    def _served(self) -> dict:
        """The identity of the server ``serve`` starts (its port is not): the served model's weights hash (the
        packaged SmolLM2's GGUF md5, a folder's :func:`~irrepro.labels.backends.hf.local_weights_id`, else the model as
        given), its dtype, compilation and extra arguments, and the vLLM it runs (``python``, else ``requirement``);
        for vLLM's CPU build in a dtype other than float32, the CPU's arithmetic (:mod:`irrepro.core.arithmetic`)."""
        from irrepro.labels.vllm import VLLM_CPU

        spec = self.serve
        if self._served_weights is None:
            model = str(spec.get("model"))
            if model == "smollm2":
                from irrepro.core.io import md5sum
                from irrepro.models.packaged import smollm2_gguf_path

                self._served_weights = md5sum(smollm2_gguf_path())
            else:
                from irrepro.labels.backends.hf import local_weights_id

                self._served_weights = local_weights_id(model) or model
        vllm = {"python": str(spec["python"])} if spec.get("python") else {
            "requirement": spec.get("requirement", VLLM_CPU)}
        dtype = spec.get("dtype", "float32")
        out = {"weights": self._served_weights, "dtype": dtype, "eager": bool(spec.get("eager", True)),
               "extra": list(spec.get("extra") or ()), **vllm}
        if str(vllm.get("requirement", "")).startswith("vllm-cpu"):
            from irrepro.core.arithmetic import arithmetic

            # vLLM's CPU build on this machine: a half-precision dtype's numbers depend on native bfloat16
            arith = arithmetic("cpu", dtype)
            if arith is not None:
                out["arithmetic"] = arith
        return out

    def settings(self) -> dict:
        """Everything the labels depend on besides the prompt: the server (``base_url``, or :meth:`_served` with
        ``serve``, whose port changes from job to job), the requests as sent (URL and body with the prompt's text
        left out: model, temperature, ``max_tokens``, ``top_logprobs``, ``extra_body``, ...) and how a reply is read
        (``missing_logprob``; in scoring mode the tokenizer URL, the chat template and the raw suffix prefix)."""
        server = {"serve": self._served()} if self.serve else {"base_url": self.base_url}
        if self.mode == "score":
            read = {"chat_template": self.chat_template,
                    "raw_suffix_prefix": None if self.chat_template else self.raw_suffix_prefix}
            if not self.serve:
                read["tokenize_url"] = self.tokenize_url
            return {"backend": "openai", "mode": "score", **server, "path": "/completions",
                    "body": self.score_body([], []), **read}
        return {"backend": "openai", "mode": "generate", **server, "path": self._path(),
                "body": self._body(None), "missing_logprob": self.missing_logprob}

    def _path(self) -> str:
        return "/chat/completions" if self.endpoint == "chat" else "/completions"

    def request_body(self, prompt: Prompt, query: str, doc: str) -> dict:
        """The JSON body sent for one pair."""
        return self._body(prompt.format(query, doc))

    def _body(self, text: str | None) -> dict:
        body = {"model": self.model, "temperature": 0, "max_tokens": self.max_tokens, "n": 1}
        if self.endpoint == "chat":
            body.update(messages=[{"role": "user", "content": text}], logprobs=True,
                        top_logprobs=self.top_logprobs)
        else:
            body.update(prompt=text, logprobs=self.top_logprobs)
        body.update(self.extra_body)
        return body

    def _post(self, body: dict, url: str | None = None) -> dict:
        url = url or f"{self.base_url}{self._path()}"
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        delay = self.retry_delay
        for attempt in range(self.max_retries + 1):
            req = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    status, raw = resp.status, resp.read()
                try:
                    return json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as e:
                    raise LabelerError(f"{url}: the reply (HTTP {status}, {len(raw)} bytes) is not JSON ({e}): "
                                       f"{raw[:200]!r}") from None
            except urllib.error.HTTPError as e:
                detail = e.read().decode("utf-8", "replace")[:500]
                if e.code in (408, 409, 429) or e.code >= 500:
                    if attempt < self.max_retries:
                        log.warning("%s: HTTP %s, retrying in %.0f s: %s", url, e.code, delay, detail)
                        time.sleep(delay)
                        delay = min(delay * 2, 60)
                        continue
                raise RuntimeError(f"{url}: HTTP {e.code}: {detail}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException) as e:
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
        """The (token, logprob) alternatives of each generated position of an OpenAI-format response; a response
        without any is a :class:`LabelerError` naming the URL."""
        try:
            lp = response["choices"][0]["logprobs"]
        except (KeyError, IndexError, TypeError):
            raise LabelerError(f"{self.base_url}: the reply has no choices[0].logprobs (does the server support "
                               f"logprobs?): {json.dumps(response)[:300]}") from None
        if lp is None:
            raise LabelerError(f"{self.base_url}: the reply's logprobs are null (model {self.model!r})")
        out = []
        try:
            if "content" in lp:  # chat format
                for pos in lp["content"] or []:
                    alts = [(a["token"], float(a["logprob"])) for a in (pos.get("top_logprobs") or [])]
                    if not alts:
                        alts = [(pos["token"], float(pos["logprob"]))]
                    out.append(alts)
            else:  # legacy completions format
                for alts in lp.get("top_logprobs") or []:
                    out.append([(t, float(v)) for t, v in (alts or {}).items()])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise LabelerError(f"{self.base_url}: the reply's logprobs cannot be read ({type(e).__name__}: {e}): "
                               f"{json.dumps(lp)[:300]}") from None
        if not out:
            raise LabelerError(f"{self.base_url}: the reply has no generated position with log-probabilities "
                               f"(empty logprobs): {json.dumps(lp)[:300]}")
        return out

    def parse(self, prompt: Prompt, response: dict) -> np.ndarray:
        """log-scores (G,) of one response (see the class docstring for the rule and ``missing_logprob``)."""
        return self._parse(prompt, response)[0]

    def _parse(self, prompt: Prompt, response: dict) -> tuple[np.ndarray, int]:
        """``(log-scores (G,), how many grades got missing_logprob)``."""
        cores = [self._core(s) for s in prompt.suffixes]
        if len(set(cores)) != len(cores) or not all(cores):
            raise InputError(f"prompt {prompt.id!r}: suffixes {prompt.suffixes} do not have distinct cores for "
                             "the OpenAI backend")
        positions = self.positions(response)
        for i, alts in enumerate(positions):
            hits = {}
            for tok, v in alts:
                c = self._core(tok)
                if c in cores:
                    r = cores.index(c)
                    hits[r] = np.logaddexp(hits[r], v) if r in hits else v
            if not hits:
                continue
            absent = [prompt.suffixes[r] for r in range(len(cores)) if r not in hits]
            if not absent:
                return np.array([hits[r] for r in range(len(cores))], dtype=float), 0
            where = (f"generated position {i} lists {len(alts)} alternative(s) {[t for t, _ in alts][:8]}, without "
                     f"grade(s) {absent}")
            if len(alts) < self.top_logprobs:
                raise LabelerError(f"{self.base_url}: the reply is incomplete: {where}, where top_logprobs asks "
                                   f"{self.top_logprobs}")
            if self.missing_logprob is None:
                raise LabelerError(f"{self.base_url}: {where} (the top {self.top_logprobs}); set missing_logprob (a "
                                   "log-probability, or floor: the lowest alternative's) to give an absent grade one, "
                                   "raise top_logprobs, or use mode: score (vLLM: every grade's exact score)")
            floor = min(v for _, v in alts) if self.missing_logprob == "floor" else self.missing_logprob
            return np.array([hits.get(r, floor) for r in range(len(cores))], dtype=float), len(absent)
        first = [t for t, _ in positions[0]][:8]
        raise LabelerError(f"{self.base_url}: none of the {len(positions)} generated position(s) lists a grade "
                           f"{list(prompt.suffixes)} among its alternatives (the first lists {first}); raise "
                           "top_logprobs or max_tokens, or use mode: score (vLLM)")

    # ------------------------------------------------------------------ scoring mode
    def _tokens(self, body: dict) -> list[int]:
        resp = self._post({"model": self.model, **body}, self.tokenize_url)
        toks = resp.get("tokens") if isinstance(resp, dict) else None
        if not isinstance(toks, list) or not all(isinstance(t, int) for t in toks):
            raise LabelerError(f"{self.tokenize_url}: no token ids in the reply (scoring mode needs a vLLM server's "
                               f"/tokenize; use mode generate elsewhere): {json.dumps(resp)[:300]}")
        return toks

    def prompt_tokens(self, prompt: Prompt, query: str, doc: str) -> list[int]:
        """The server's token ids of the prompt for one pair (chat template and generation prompt applied when
        ``chat_template``)."""
        text = prompt.format(query, doc)
        if self.chat_template:
            return self._tokens({"messages": [{"role": "user", "content": text}], "add_generation_prompt": True})
        return self._tokens({"prompt": text, "add_special_tokens": True})

    def suffix_tokens(self, prompt: Prompt) -> list[list[int]]:
        """The server's token ids of each grade suffix (fetched once per prompt)."""
        if prompt.hash not in self._suffix_ids:
            pre = "" if self.chat_template else self.raw_suffix_prefix
            ids = [self._tokens({"prompt": pre + s, "add_special_tokens": False}) for s in prompt.suffixes]
            if any(not i for i in ids) or len({tuple(i) for i in ids}) != len(ids):
                raise InputError(f"prompt {prompt.id!r}: the grade suffixes {prompt.suffixes} tokenize to {ids} on "
                                 f"{self.base_url}: empty or not distinct")
            self._suffix_ids[prompt.hash] = ids
        return self._suffix_ids[prompt.hash]

    def score_body(self, ids: list[int], suffixes: list[list[int]]) -> dict:
        """The ``/completions`` body scoring all grade suffixes of one pair: G token prompts, echoed, nothing
        generated."""
        body = {"model": self.model, "prompt": [ids + s for s in suffixes], "echo": True, "max_tokens": 0,
                "logprobs": 0, "temperature": 0}
        body.update(self.extra_body)
        return body

    def parse_scores(self, response: dict, n_prompt: int, suffixes: list[list[int]]) -> np.ndarray:
        """log P(s_r | prompt) (G,) from an echoed ``/completions`` response: the sum of the log-probabilities of
        suffix r's tokens (the last ``len(s_r)`` of choice r's ``n_prompt + len(s_r)`` tokens)."""
        try:
            choices = sorted(response["choices"], key=lambda c: c["index"])
            lps = [c["logprobs"]["token_logprobs"] for c in choices]
        except (KeyError, TypeError):
            raise LabelerError(f"{self.base_url}: echoed completion without logprobs.token_logprobs (does the server "
                               f"return prompt log-probabilities with echo?): {json.dumps(response)[:300]}") from None
        if len(lps) != len(suffixes):
            raise LabelerError(f"{self.base_url}: {len(lps)} choices for {len(suffixes)} grade prompts")
        out = np.empty(len(suffixes))
        for r, (lp, s) in enumerate(zip(lps, suffixes)):
            if lp is None or len(lp) != n_prompt + len(s):
                raise LabelerError(f"{self.base_url}: grade {r}: {0 if lp is None else len(lp)} echoed token "
                                   f"log-probabilities, expected {n_prompt + len(s)} (prompt {n_prompt} + suffix "
                                   f"{len(s)}, max_tokens=0)")
            tail = lp[n_prompt:]
            if any(v is None for v in tail):
                raise LabelerError(f"{self.base_url}: grade {r}: the suffix tokens have no log-probability")
            out[r] = float(sum(tail))
        return out

    def log_scores(self, prompt, queries, docs, *, query_ids=None, doc_ids=None) -> np.ndarray:
        """log-scores (n, G) of the pairs; a reply that gives no full distribution over the grades is a
        :class:`LabelerError` naming the labeler, the URL and the pair (``query_ids``/``doc_ids``, else the texts)."""
        prompt = get_prompt(prompt)
        ids = list(zip(query_ids if query_ids is not None else queries,
                       doc_ids if doc_ids is not None else [d[:40] for d in docs]))

        def one(i):
            q, d = queries[i], docs[i]
            try:
                if self.mode == "score":
                    suffixes = self.suffix_tokens(prompt)
                    tok = self.prompt_tokens(prompt, q, d)
                    reply = self._post(self.score_body(tok, suffixes), f"{self.base_url}/completions")
                    return self.parse_scores(reply, len(tok), suffixes), 0
                return self._parse(prompt, self._post(self.request_body(prompt, q, d)))
            except LabelerError as e:
                raise LabelerError(f"labeler {self.name!r}, pair (query {ids[i][0]!r}, document {ids[i][1]!r}): {e}; "
                                   "no label is written") from None

        n = len(queries)
        if self.mode == "score" and n:
            self.suffix_tokens(prompt)  # once, before the threads
        if self.concurrency == 1 or n <= 1:
            rows = [one(i) for i in range(n)]
        else:
            with ThreadPoolExecutor(self.concurrency) as ex:
                rows = list(ex.map(one, range(n)))
        filled = [k for _, k in rows]
        if any(filled):
            self.filled["pairs"] += sum(1 for k in filled if k)
            self.filled["grades"] += sum(filled)
            log.info("%s: %d of %d pair(s) had %d grade(s) absent from the top-%d alternatives, given missing_logprob "
                     "%s (%d pair(s), %d grade(s) so far)", self.name, sum(1 for k in filled if k), n, sum(filled),
                     self.top_logprobs, self.missing_logprob, self.filled["pairs"], self.filled["grades"])
        return np.array([r for r, _ in rows], dtype=float).reshape(n, prompt.n_grades)

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        check_lengths(queries, docs)
        logp = self.log_scores(prompt, queries, docs, query_ids=query_ids, doc_ids=doc_ids)
        return softmax(check_log_scores(self.name, logp, query_ids or queries, doc_ids or [d[:40] for d in docs]))


# the backend's declaration (irrepro.labels.backends): its config keys, those it requires, and its labeler
KEYS = frozenset({
    "model", "base_url", "api_key_env", "endpoint", "top_logprobs", "max_tokens", "missing_logprob", "timeout",
    "max_retries", "retry_delay", "concurrency", "batch_size", "name", "extra_body", "mode", "chat_template",
    "raw_suffix_prefix", "tokenize_url", "serve",
})
REQUIRED = ("model",)


def make(spec: dict) -> OpenAILabeler:
    spec = dict(spec)
    return OpenAILabeler(spec.pop("model"), **spec)
