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
from irrepro.labels.base import Labeler, _check_lengths, check_log_scores, softmax
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
    before that position (``"["``, a space) are taken as given (the greedy prefix). **Floor:** a grade absent
    from the top-k gets ``missing_logprob`` if set, else the lowest log-probability among that position's top-k
    alternatives (an upper bound on its true value). If no position shows any grade, the row is uniform and a
    warning is logged.

    **Scoring mode** (``mode="score"``; vLLM's OpenAI server): no generation. The prompt is tokenised by the
    server's own tokenizer (``POST {root}/tokenize``, ``root`` = ``base_url`` without its ``/v1``: with the chat
    template and its generation prompt when ``chat_template``, else the raw text), each grade suffix once per prompt
    (without special tokens; after ``raw_suffix_prefix`` without a chat template), and one ``/completions`` request
    per pair sends the G token sequences prompt + suffix_r with ``echo``, ``max_tokens=0`` and ``logprobs=0``: the
    server returns the log-probability of every prompt token, and log P(s_r | prompt) is the sum over suffix r's
    tokens — the exact score of every grade (as :class:`~irrepro.labels.hf.HFLabeler` computes it), no top-k floor.
    Two requests per pair (``tokenize`` is cheap); ``max_tokens``, ``top_logprobs`` and ``missing_logprob`` do not
    apply.

    ``serve``: settings of a vLLM server that the label job starts for its own use and stops at its end
    (:func:`irrepro.labels.vllm.serving`; ``base_url`` is then that server's); without it ``base_url`` reaches a
    running server.

    ``api_key``: passed directly, or read from the environment variable ``api_key_env`` (default
    ``OPENAI_API_KEY``); none → no ``Authorization`` header (local servers). Transient errors (HTTP 429/5xx,
    connection errors) are retried ``max_retries`` times with exponential back-off from ``retry_delay`` seconds.
    ``concurrency`` requests run at a time. ``name`` (cache key) defaults to ``openai:<model>``
    (``openai-score:<model>`` in scoring mode, ``@raw`` appended without the chat template).
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
        self.missing_logprob = missing_logprob
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

    def _post(self, body: dict, url: str | None = None) -> dict:
        url = url or f"{self.base_url}/{'chat/completions' if self.endpoint == 'chat' else 'completions'}"
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

    # ------------------------------------------------------------------ scoring mode
    def _tokens(self, body: dict) -> list[int]:
        resp = self._post({"model": self.model, **body}, self.tokenize_url)
        toks = resp.get("tokens") if isinstance(resp, dict) else None
        if not isinstance(toks, list) or not all(isinstance(t, int) for t in toks):
            raise RuntimeError(f"{self.tokenize_url}: no token ids in the reply (scoring mode needs a vLLM server's "
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
            raise RuntimeError(f"{self.base_url}: echoed completion without logprobs.token_logprobs (does the server "
                               f"return prompt log-probabilities with echo?): {json.dumps(response)[:300]}") from None
        if len(lps) != len(suffixes):
            raise RuntimeError(f"{self.base_url}: {len(lps)} choices for {len(suffixes)} grade prompts")
        out = np.empty(len(suffixes))
        for r, (lp, s) in enumerate(zip(lps, suffixes)):
            if lp is None or len(lp) != n_prompt + len(s):
                raise RuntimeError(f"{self.base_url}: grade {r}: {0 if lp is None else len(lp)} echoed token "
                                   f"log-probabilities, expected {n_prompt + len(s)} (prompt {n_prompt} + suffix "
                                   f"{len(s)}, max_tokens=0)")
            tail = lp[n_prompt:]
            if any(v is None for v in tail):
                raise RuntimeError(f"{self.base_url}: grade {r}: the suffix tokens have no log-probability")
            out[r] = float(sum(tail))
        return out

    def log_scores(self, prompt, queries, docs) -> np.ndarray:
        prompt = get_prompt(prompt)

        def one(qd):
            if self.mode == "score":
                suffixes = self.suffix_tokens(prompt)
                ids = self.prompt_tokens(prompt, *qd)
                return self.parse_scores(self._post(self.score_body(ids, suffixes), f"{self.base_url}/completions"), len(ids), suffixes)
            return self.parse(prompt, self._post(self.request_body(prompt, *qd)))

        pairs = list(zip(queries, docs))
        if self.mode == "score" and pairs:
            self.suffix_tokens(prompt)  # once, before the threads
        if self.concurrency == 1 or len(pairs) <= 1:
            rows = [one(p) for p in pairs]
        else:
            with ThreadPoolExecutor(self.concurrency) as ex:
                rows = list(ex.map(one, pairs))
        return np.array(rows, dtype=float).reshape(len(pairs), prompt.n_grades)

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        _check_lengths(queries, docs)
        return softmax(check_log_scores(self.name, self.log_scores(prompt, queries, docs), query_ids or queries,
                                        doc_ids or [d[:40] for d in docs]))
