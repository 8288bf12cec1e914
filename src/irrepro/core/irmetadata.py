"""``ir_metadata`` for a run file (Breuer et al., SIGIR 2022; https://www.ir-metadata.org, schema 0.1): the PRIMAD
fields the workflow knows — platform (hardware, operating system, software), implementation (the command, the
repository's commit), method (each ranking stage with its parameters, parsed from the system's name), data (the
test collection with its ir_datasets id and the md5 of its topics, qrels and the run itself) — and the two it cannot
know, research goal and actor, left for the user to fill in. CLEF LongEval asks for such a file beside each run.
"""
from __future__ import annotations

import os
import platform
import re

from irrepro.core.provenance import SOURCE, git_commit, package_versions
from irrepro.core.io import md5sum

SCHEMA_VERSION = "0.1"
#: what a stage of a population system is computed by, per kind
TOOLKITS = {"classic": "PISA through pyterrier-pisa", "neural": "PyTorch and transformers (irrepro.retrieval.neural)"}
#: the long names of the population's retrieval models
METHODS = {"bm25": "BM25", "dph": "DPH (divergence from randomness)", "pl2": "PL2 (divergence from randomness)",
           "qld": "query likelihood, Dirichlet smoothing", "rm3": "RM3 pseudo-relevance feedback",
           "minilm-l6-v2": "dense retrieval, all-MiniLM-L6-v2 (cosine of mean-pooled encodings)",
           "splade-tiny": "learned sparse retrieval, SPLADE-tiny", "e5-small": "dense retrieval, multilingual-e5-small",
           "e5-small-lc": "dense retrieval, multilingual-e5-small (lower-cased)"}


def _number(v: str):
    try:
        f = float(v)
    except ValueError:
        return v
    return int(f) if f.is_integer() and "." not in v else f


def stages(system: str, neural_models=()) -> list[dict]:
    """The ranking stages of a population system's name (``bm25_k1-0.9_b-0.4``, ``...+rm3_fb-10_terms-20_lambda-0.5``,
    ``...+minilm-l6-v2-rerank_k-100``): ``name``, ``method``, ``params`` and, after the first, ``reranks`` (or, for
    feedback, ``expands``) naming the stage before."""
    out = []
    for i, part in enumerate(system.split("+")):
        model = next((m for m in sorted(neural_models, key=len, reverse=True) if part.startswith(m)), None)
        if model is not None:
            rest = part[len(model):].lstrip("-")
            name, params = model, dict(re.findall(r"([a-z]+)-([^_]+)", rest.removeprefix("rerank_")))
        else:
            name, *kv = part.split("_")
            params = dict(p.split("-", 1) for p in kv)
        stage = {"name": part, "method": METHODS.get(name, name), "params": {k: _number(v) for k, v in params.items()}}
        if i:
            stage["expands" if name == "rm3" else "reranks"] = out[-1]["name"]
        out.append(stage)
    return out


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        return platform.processor()


def ir_metadata(system: str, collection: str, *, run, topics, qrels, dataset: str | None, depth: int,
                neural_models=(), command: str = "snakemake") -> dict:
    """The ir_metadata mapping of one run file (see the module docstring); ``neural_models``: the names of the
    neural models (their stages are computed by torch, the others by PISA)."""
    first = stages(system, neural_models)
    # each stage's toolkit, in the pipeline's order, once each
    toolkits = list(dict.fromkeys(TOOLKITS["neural" if s["name"].startswith(tuple(neural_models)) else "classic"]
                                  for s in first))
    packages = package_versions()
    git = git_commit()
    try:
        memory = f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2 ** 30:.0f} GB"
    except (ValueError, OSError, AttributeError):
        memory = None
    return {
        "schema-version": SCHEMA_VERSION,
        "run-version": 1,
        "tag": system,
        "platform": {
            "hardware": {"cpu": {"model": _cpu_model(), "architecture": platform.machine(),
                                 "number of cores": os.cpu_count()}, "ram": memory},
            "operating system": {"kernel": f"{platform.system()} {platform.release()}",
                                 "distribution": platform.platform()},
            "software": {"libraries": {"python": [f"{k}=={v}" for k, v in sorted(packages.items())]},
                         "retrieval toolkit": toolkits},
        },
        "research goal": {"description": None},  # for the user: what the run was made to find out
        "implementation": {
            "executable": {"cmd": command},
            "source": {"lang": ["python"], "repository": git["origin"] or SOURCE, "commit": git["commit"],
                       "uncommitted changes": git["dirty"]},
        },
        "method": {"automatic": True, "score ties": "trec_eval's order (by score, equal scores by document id)",
                   "retrieval": first, "depth": int(depth)},
        "actor": {"team": None},  # for the user
        "data": {"test collection": {"name": collection, "ir_datasets": dataset, "topics md5": md5sum(topics),
                                     "qrels md5": md5sum(qrels)},
                 "run md5": md5sum(run)},
    }
