"""The label stage's steps around :func:`~irrepro.labels.labelling.label_pairs` (rule ``labels``): the labeler of a
config entry, the pairs with their query and document texts, and the canonical labels table."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import pandas as pd

from irrepro.errors import InputError
from irrepro.labels.base import Labeler
from irrepro.labels.factory import calibration_of, make_labeler
from irrepro.models.device import resolve_device

#: torch threads of the local labelers (not the job's cores): float sums, hence the labels' last digits, depend on it
LOCAL_THREADS = 2

#: backends that run a model in the job's process (their torch threads are the job's cores)
LOCAL_BACKENDS = ("smollm2", "hf", "biencoder")


def job_threads(spec_json: str) -> int:
    """Cores a label job of this labeler uses: a local model's torch threads (``threads``, default
    :data:`LOCAL_THREADS`), 1 for a labeler that reads a file or asks a server. The rules declare it as ``threads``,
    so that a job reading a label file does not wait for two free cores (nor hold them)."""
    spec = json.loads(spec_json)
    if spec["backend"] in LOCAL_BACKENDS:
        return int(spec.get("threads", LOCAL_THREADS))
    return 1


def labeler_spec(spec_json: str, files=()) -> dict:
    """The :func:`make_labeler` spec of a ``labels.labelers.<name>`` config entry (canonical JSON): ``artifact``
    dropped, backend ``file`` reading the rule's input file, local models with :data:`LOCAL_THREADS` threads unless
    configured and ``device: auto`` resolved (:func:`resolve_device`)."""
    spec = json.loads(spec_json)
    spec.pop("artifact", None)
    if spec["backend"] == "file":
        spec["path"] = files[0]
    if spec["backend"] in LOCAL_BACKENDS:
        spec.setdefault("threads", LOCAL_THREADS)
        if "device" in spec:
            spec["device"] = resolve_device(spec["device"])
    return spec


def configured_labeler(spec_json: str, files=()) -> tuple[Labeler, dict]:
    """``(labeler, spec)`` of a config entry (see :func:`labeler_spec`)."""
    spec = labeler_spec(spec_json, files)
    return make_labeler(spec), spec


def read_pairs(pairs_path) -> pd.DataFrame:
    """The pairs table ``labels/<collection>/pairs.tsv`` (ids as strings)."""
    return pd.read_csv(pairs_path, sep="\t", dtype={"query_id": str, "doc_id": str})


def read_labels(path) -> pd.DataFrame:
    """A labels table (``labels/<collection>/<labeler>.tsv``, as :func:`write_labels` writes it; ids as strings)."""
    return pd.read_csv(path, sep="\t", dtype={"query_id": str, "doc_id": str})


def pairs_with_texts(pairs_path, topics_path, *, texts: bool, dataset: str | None = None, home=None,
                     jsonl=None, subset=None) -> pd.DataFrame:
    """The pairs table (``labels/<collection>/pairs.tsv``) with columns ``query`` (the topic text) and ``text``
    (the document's text from ir_datasets ``dataset`` or the ``jsonl`` documents; empty when ``texts`` is False:
    labels looked up by id need none). ``subset``: a function of the pairs table returning the rows to keep (one
    shard's: only their texts are read). A ranked document without a text is an error."""
    pairs = read_pairs(pairs_path)
    if subset is not None:
        pairs = subset(pairs)
    topics = pd.read_csv(topics_path, sep="\t", dtype=str, keep_default_na=False)
    pairs["query"] = pairs.query_id.map(dict(zip(topics.query_id, topics.text))).fillna("")
    if not texts:
        pairs["text"] = ""
        return pairs
    os.environ["IR_DATASETS_HOME"] = os.path.abspath(home)
    from irrepro.datasets.collections import DocText
    doc_text = DocText(dataset, jsonl=jsonl)
    found = doc_text(sorted(set(pairs.doc_id)))
    doc_text.close()
    missing = sorted(set(pairs.doc_id) - set(found))
    if missing:
        raise InputError(f"{len(missing)} ranked documents have no text, e.g. {missing[:3]}")
    pairs["text"] = pairs.doc_id.map(found)
    return pairs


def write_labels(table: pd.DataFrame, collection: str, labeler: str, path) -> None:
    """The canonical labels table ``collection, query_id, doc_id, labeler, prompt_id, p_0 …`` (TSV, 10 digits):
    ``labeler`` is the config's name (the cache keys on the labeler's full identity). A local writer:
    irrepro.core.io.write_table writes no TSV."""
    out = table.copy()
    out["labeler"] = labeler
    out.insert(0, "collection", collection)
    out.to_csv(path, sep="\t", index=False, float_format="%.10g")


def scored_prompt(spec: dict, prompt):
    """The prompt a labeler is run (and cached) under: :data:`~irrepro.labels.backends.biencoder.COSINE` for a backend that
    returns a score to be mapped to grades (:func:`~irrepro.labels.factory.calibration_of`), else ``prompt``."""
    from irrepro.labels.backends.biencoder import COSINE

    return COSINE if calibration_of(spec) is not None else prompt


def finish_labels(table: pd.DataFrame, pairs: pd.DataFrame, spec: dict, prompt, log=None,
                  fit_queries=None) -> pd.DataFrame:
    """The labels table of ``prompt``'s grades: ``table`` itself, or for a scoring backend (a bi-encoder) the
    distributions of :func:`irrepro.labels.calibrate.crossfit` from its similarity and the human ``relevance`` of
    ``pairs`` — each query's labels from a mapping fitted on the other query folds only. The ``labeler`` column
    gets ``+ordinal-cv<folds>s<seed>`` appended (the table's provenance; the canonical writer replaces it by the
    config's name). ``fit_queries``: only these queries' human grades fit the mapping (``crossfit``'s argument;
    the other pairs need no human grade)."""
    cal = calibration_of(spec)
    if cal is None:
        return table
    from irrepro.labels.base import label_columns
    from irrepro.labels.calibrate import crossfit
    from irrepro.labels.backends.biencoder import cosine_of

    keys = ["query_id", "doc_id"]
    human = pairs.assign(query_id=pairs.query_id.astype(str), doc_id=pairs.doc_id.astype(str))
    human = human.drop_duplicates(keys).set_index(keys)["relevance"]
    idx = pd.MultiIndex.from_arrays([table.query_id.astype(str), table.doc_id.astype(str)])
    grades = human.reindex(idx)
    need = grades.isna() if fit_queries is None else grades.isna() & idx.get_level_values(0).isin(
        [str(x) for x in fit_queries])
    if need.any():
        raise InputError(f"{int(need.sum())} labelled pairs have no human grade in the pairs table: the "
                         "score-to-grade mapping is fitted on the human grades of the other queries' pairs")
    s = cosine_of(table[["p_0", "p_1"]].to_numpy())
    G = prompt.n_grades
    probs, models = crossfit(s, grades.to_numpy(), table.query_id.astype(str), G, folds=cal["folds"],
                             seed=cal["calibration_seed"], fit_queries=fit_queries)
    if log is not None:
        for m in models:
            log.info("calibration fold %d: fitted on %d pairs of %d queries: a = %.4g, theta = %s (z = (s - %.4g) / "
                     "%.4g)", m["fold"], m["train_pairs"], m["train_queries"], m["a"],
                     ", ".join(f"{t:.4g}" for t in m["theta"]), m["mean"], m["sd"])
    out = table[["query_id", "doc_id"]].copy()
    out["labeler"] = table["labeler"].astype(str) + f"+ordinal-cv{cal['folds']}s{cal['calibration_seed']}"
    out["prompt_id"] = prompt.id
    for r, c in enumerate(label_columns(G)):
        out[c] = probs[:, r]
    return out


def sampled(pairs: pd.DataFrame, max_queries: int | None, seed: int) -> pd.DataFrame:
    """The pairs a labeler with a query sample labels (``labels.collections.<c>.sample.<labeler>``): those of
    ``max_queries`` queries of the pairs table drawn with ``seed`` (:func:`~irrepro.labels.agreement.sample_queries`);
    all of them when ``max_queries`` is None."""
    from irrepro.labels.agreement import sample_queries

    return sample_queries(pairs, max_queries, seed)


def write_timing(path, stats: dict, seconds: float, computed: bool = True) -> None:
    """``benchmarks/labels_timing/<collection>/<labeler>.json``: the label job's ``pairs`` (distinct), ``cached``, ``labelled``
    (by the labeler in this job), ``seconds`` (the job's script from before the model load to the last label) and
    ``pairs_per_s`` = labelled / seconds, model load included (null when nothing was labelled: all cached, or
    ``computed`` is False: labels looked up in a label file)."""
    labelled = int(stats.get("labelled") or 0) if computed else 0
    rec = {"pairs": int(stats.get("pairs") or 0), "cached": int(stats.get("cached") or 0), "labelled": labelled,
           "seconds": round(float(seconds), 3),
           "pairs_per_s": round(labelled / seconds, 3) if labelled and seconds > 0 else None}
    with open(path, "w") as f:
        json.dump(rec, f, indent=1)
        f.write("\n")


@dataclass
class LabelJob:
    """What :func:`labelling_job` did: ``out`` (what ``label`` returned), the ``pairs`` with their texts, the labeler's
    ``spec``, the ``prompt`` and the labelling ``stats`` (``pairs``, ``cached``, ``labelled``, ``seconds``)."""
    out: object
    pairs: pd.DataFrame
    spec: dict
    prompt: object
    stats: dict


def labelling_job(spec_json: str, files, prompt_name: str, pairs_path, topics_path, *, dataset=None, home=None,
                  docs=None, cache=None, what: str = "", log=None, subset=None, label=None) -> LabelJob:
    """The one sequence of every labelling job (the label stage, its shards, self-preference, ci.systems): the
    configured labeler (``spec_json`` and its ``files``), the prompt, the pairs with their texts (only what the
    labeler reads; ``subset``: a function of the pairs table), a log line naming ``what`` is labelled (and one with
    the cached and labelled counts after), and the labelling itself inside :func:`irrepro.labels.vllm.serving` — a vLLM server for the job when the labeler's config
    has ``serve``, whichever stage runs it. ``label(labeler, prompt, pairs, stats)`` does the labelling (default:
    :func:`irrepro.labels.labelling.label_pairs` through the cache at ``cache``)."""
    from irrepro.labels.prompts import get_prompt
    from irrepro.labels.labelling import label_pairs
    from irrepro.labels.vllm import serving

    labeler, spec = configured_labeler(spec_json, files)
    prompt = get_prompt(prompt_name)
    pairs = pairs_with_texts(pairs_path, topics_path, texts=spec["backend"] != "file", dataset=dataset, home=home,
                             jsonl=docs, subset=subset)
    if log is not None:
        log.info("%s: %d pairs, prompt %s (%s), device %s, cache %s", what, len(pairs), prompt.id, prompt.hash,
                 spec.get("device", "-"), cache)
    if label is None:
        def label(lab, p, prs, stats):
            return label_pairs(lab, p, prs, cache_path=cache, stats=stats)
    stats: dict = {}
    with serving(labeler, log):
        out = label(labeler, scored_prompt(spec, prompt), pairs, stats)
    if log is not None and stats:
        log.info("%s pairs: %s cached, %s labelled now", stats.get("pairs"), stats.get("cached"), stats.get("labelled"))
    return LabelJob(out, pairs, spec, prompt, stats)
