"""The label stage's steps around :func:`~irrepro.labels.run.label_pairs` (rule ``labels``): the labeler of a
config entry, the pairs with their query and document texts, and the canonical labels table."""
from __future__ import annotations

import json
import os

import pandas as pd

from irrepro.errors import InputError
from irrepro.labels.base import Labeler
from irrepro.labels.factory import make_labeler

#: torch threads of the local labelers (not the job's cores): float sums, hence the labels' last digits, depend on it
LOCAL_THREADS = 2


def resolve_device(device: str | None) -> str | None:
    """``"auto"``: ``"cuda"`` when torch sees a GPU (a job given one, e.g. ``--gpus=1`` under SLURM), else ``"cpu"``;
    any other value as it is. The device is not part of a labeler's cache identity (``hf:<model>[@dtype]``)."""
    if device != "auto":
        return device
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def labeler_spec(spec_json: str, files=()) -> dict:
    """The :func:`make_labeler` spec of a ``labels.labelers.<name>`` config entry (canonical JSON): ``artifact``
    dropped, backend ``file`` reading the rule's input file, local models with :data:`LOCAL_THREADS` threads unless
    configured and ``device: auto`` resolved (:func:`resolve_device`)."""
    spec = json.loads(spec_json)
    spec.pop("artifact", None)
    if spec["backend"] == "file":
        spec["path"] = files[0]
    if spec["backend"] in ("smollm2", "hf"):
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
