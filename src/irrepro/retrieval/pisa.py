"""Retrieval with PyTerrier + pyterrier-pisa: indexing, the system population, and RM3 expansion on PISA.

A *system* is a first-stage model with its parameters, optionally followed by RM3 expansion. Systems are named
deterministically (``bm25_k1-1.2_b-0.75``, ``qld_mu-1000+rm3_fb-10_terms-20_lambda-0.5``) so every run file and
score row can be traced back to its parameters.

Models (PISA scorers): ``bm25(k1, b)``, ``dph()``, ``pl2(c)``, ``qld(mu)`` (Dirichlet query likelihood).
PISA stems with Porter2 and removes Terrier's stopwords at query time. RM3 is computed in :mod:`irrepro.retrieval.rm3` on
the same analysis (PISA's own tokenizer) and sent back to PISA as a weighted query; because PISA stems query terms
again, every expansion stem is sent as its most frequent surface form in the feedback documents.
"""
from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import pandas as pd

from irrepro.errors import InputError
from irrepro.retrieval import rm3 as rm3lib

MODELS = {"bm25": ("k1", "b"), "dph": (), "pl2": ("c",), "qld": ("mu",)}


def _fmt(v) -> str:
    """A parameter value in a system name: Python's shortest repr that reads back as the same float, with a whole
    number written without ``.0`` (``2.0`` and ``2`` are one value, so one system, ``bm25_k1-2_b-0.75``). Distinct
    values never share a name, and :func:`parse_system` reads every name back to its values."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


@dataclass(frozen=True)
class System:
    """A retrieval system: model + parameters (+ optional RM3)."""
    model: str
    params: tuple = ()          # ((name, value), ...) in MODELS order
    rm3: tuple | None = None    # (fb_docs, fb_terms, lambda)

    @property
    def name(self) -> str:
        s = self.model + "".join(f"_{k}-{_fmt(v)}" for k, v in self.params)
        if self.rm3 is not None:
            fb, terms, lam = self.rm3
            s += f"+rm3_fb-{fb}_terms-{terms}_lambda-{_fmt(lam)}"
        return s

    def to_dict(self) -> dict:
        return {"model": self.model, "params": dict(self.params),
                "rm3": None if self.rm3 is None else dict(zip(("fb_docs", "fb_terms", "lambda"), self.rm3))}


def parse_system(name: str) -> System:
    """Inverse of :attr:`System.name`."""
    base, _, rm = name.partition("+rm3")
    parts = base.split("_")
    model = parts[0]
    if model not in MODELS:
        raise InputError(f"unknown model in system name {name!r}; models: {sorted(MODELS)}")
    params = []
    for p in parts[1:]:
        k, _, v = p.partition("-")
        params.append((k, float(v)))
    r = None
    if rm:
        kv = dict(p.split("-", 1) for p in rm.strip("_").split("_"))
        r = (int(kv["fb"]), int(kv["terms"]), float(kv["lambda"]))
    return System(model, tuple(params), r)


def population(spec: Mapping) -> list[System]:
    """Expand the config's population into systems (deterministic order).

    ``spec`` has one key per model with a mapping of parameter -> list of values, the grid (``{}`` for DPH), and
    optionally ``systems``, a list of single systems, each a mapping of every parameter -> one value, appended after
    the grid in their order (``bm25: {k1: [0.9], b: [0.4], systems: [{k1: 1.2, b: 0.3}]}`` is two systems, not the
    four of a grid over both k1 and both b); a model may give the list alone. An ``rm3`` key with ``fb_docs``,
    ``fb_terms`` and a list ``lambda``: every first-stage system is run with and without RM3 for each λ (when
    ``rm3.enabled``). A system given twice (a grid value repeated, a listed system inside the grid) is an error.
    """
    systems = []
    for model in ("bm25", "dph", "pl2", "qld"):
        if model not in spec or spec[model] is None:
            continue
        names = MODELS[model]
        given = spec[model]
        grid = [n for n in names if n in given]
        if names and grid and len(grid) < len(names):
            raise InputError(f"config key population.{model}: a grid needs every parameter {list(names)}; "
                             f"missing {[n for n in names if n not in given]} (or give single systems in "
                             f"population.{model}.systems)")
        if not names and given.get("systems"):
            raise InputError(f"config key population.{model}.systems: {model} has no parameters; {{}} includes it")
        found = []
        if grid or not names:
            for combo in itertools.product(*[given[n] for n in names]):
                found.append((f"population.{model}", System(model, tuple((n, float(v)) for n, v in zip(names, combo)))))
        for i, one in enumerate(given.get("systems") or []):
            key = f"population.{model}.systems[{i}]"
            if set(one) != set(names):
                raise InputError(f"config key {key}: a {model} system names exactly {list(names)}; got {sorted(one)}")
            found.append((key, System(model, tuple((n, float(one[n])) for n in names))))
        seen = {}
        for key, sy in found:
            if sy.name in seen:
                raise InputError(f"config key {key}: system {sy.name} is already given by {seen[sy.name]}")
            seen[sy.name] = key
        systems += [sy for _, sy in found]
    out = list(systems)
    r = spec.get("rm3") or {}
    if r.get("enabled", True) and r.get("lambda"):
        for s in systems:
            for lam in r["lambda"]:
                out.append(System(s.model, s.params, (int(r["fb_docs"]), int(r["fb_terms"]), float(lam))))
    return out


# ---------------------------------------------------------------- indexing and retrieval (I/O on an index path)

def build_index(docs: Iterable[Mapping[str, str]], path, stemmer="porter2", stopwords="terrier", threads=1):
    """Index ``{'docno', 'text'}`` dicts with PISA at ``path`` (overwritten)."""
    from pyterrier_pisa import PisaIndex
    idx = PisaIndex(str(path), text_field="text", stemmer=stemmer, stops=stopwords, threads=threads, overwrite=True)
    idx.index(iter(docs))
    return idx


def _scorer(index, system: System, depth: int, weighted: bool = False):
    p = dict(system.params)
    kw = dict(num_results=depth, query_weighted=weighted) if weighted else dict(num_results=depth)
    if system.model == "bm25":
        return index.bm25(k1=p["k1"], b=p["b"], **kw)
    if system.model == "dph":
        return index.dph(**kw)
    if system.model == "pl2":
        return index.pl2(c=p["c"], **kw)
    if system.model == "qld":
        return index.qld(mu=p["mu"], **kw)
    raise InputError(f"unknown model {system.model!r}")


_STEMMED_STOPS: dict = {}


def stemmed_stopwords(stemmer="porter2") -> frozenset:
    """Terrier's stopword list as PISA applies it: stemmed, compared with stemmed query terms."""
    if stemmer not in _STEMMED_STOPS:
        from pyterrier_pisa import tokenize
        from pyterrier_pisa.stopwords import _STOPWORDS
        out = set()
        for w in _STOPWORDS["terrier"]:
            out.update(tokenize(w, stemmer))
        _STEMMED_STOPS[stemmer] = frozenset(out)
    return _STEMMED_STOPS[stemmer]


def analyze(text: str, stemmer="porter2") -> tuple[list[str], list[str]]:
    """PISA's own analysis of ``text``: (stems, surface tokens), aligned, stopwords removed as PISA removes them
    from queries (the stemmed Terrier list, so 'using' -> 'use' is a stopword)."""
    from pyterrier_pisa import tokenize
    stop = stemmed_stopwords(stemmer)
    stems, surf = tokenize(text, stemmer), tokenize(text, "none")
    if len(stems) != len(surf):  # should not happen; fall back to stems as surface forms
        surf = stems
    keep = [i for i, s in enumerate(stems) if s not in stop]
    return [stems[i] for i in keep], [surf[i] for i in keep]


def run_system(index, system: System, topics: pd.DataFrame, depth: int,
               doc_text: Callable[[list[str]], Mapping[str, str]] | None = None,
               fb_weighting: str = "score") -> pd.DataFrame:
    """Run ``system`` on ``topics`` (``query_id, text``); returns ``query_id, doc_id, score``.

    For RM3 systems ``doc_text`` maps a list of docnos to their texts (the feedback documents).
    """
    q = topics.rename(columns={"query_id": "qid", "text": "query"})[["qid", "query"]]
    if system.rm3 is None:
        res = _scorer(index, system, depth)(q)
    else:
        if doc_text is None:
            raise ValueError("RM3 needs doc_text to read feedback documents")
        fb_docs, fb_terms, lam = system.rm3
        first = _scorer(index, System(system.model, system.params), fb_docs)(q)
        expanded = expand_queries(topics, first, doc_text, fb_docs, fb_terms, lam, fb_weighting)
        res = _scorer(index, system, depth, weighted=True)(expanded)
    res = res.rename(columns={"qid": "query_id", "docno": "doc_id"})[["query_id", "doc_id", "score"]]
    return res.reset_index(drop=True)


def expand_queries(topics: pd.DataFrame, first_pass: pd.DataFrame, doc_text, fb_docs: int, fb_terms: int,
                   lam: float, fb_weighting: str = "score") -> pd.DataFrame:
    """Build RM3 weighted queries (``qid, query_toks``) from a first-pass ranking (``qid, docno, score``)."""
    first_pass = first_pass.sort_values(["qid", "score", "docno"], ascending=[True, False, False])
    texts = doc_text(sorted(set(first_pass["docno"])))
    rows = []
    for qid, qtext in zip(topics["query_id"], topics["text"]):
        qstems, qsurf = analyze(qtext)
        fb = first_pass[first_pass["qid"] == qid].head(fb_docs)
        toks, surface = [], defaultdict(Counter)
        for st, sf in zip(qstems, qsurf):
            surface[st][sf] += 1
        for d in fb["docno"]:
            st, sf = analyze(texts.get(d, ""))
            toks.append(st)
            for a, b in zip(st, sf):
                surface[a][b] += 1
        w = rm3lib.feedback_weights(fb["score"].to_numpy(), fb_weighting)
        model = rm3lib.interpolate(rm3lib.query_model(qstems), rm3lib.relevance_model(toks, w, fb_terms), lam)
        if not model:  # nothing to expand with: keep the original query terms
            model = rm3lib.query_model(qstems) or {"": 1.0}
        qt = {}
        for stem, wt in model.items():
            form = min(surface[stem].items(), key=lambda kv: (-kv[1], kv[0]))[0] if surface[stem] else stem
            qt[form] = qt.get(form, 0.0) + wt
        rows.append({"qid": qid, "query_toks": qt})
    return pd.DataFrame(rows)
