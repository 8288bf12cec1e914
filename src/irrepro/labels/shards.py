"""Scatter/gather labelling (rules ``labels_shard_plan``, ``labels_shard``, ``labels_gather``): the distinct pairs of a
collection's ``pairs.tsv`` cut into contiguous shards of ``size`` pairs in their stable (file) order, each labelled
by its own job into its own SQLite cache shard, and gathered into the canonical labels table and the central cache.

- :func:`shard_count` / :func:`shard_pairs`: which pairs shard ``i`` of ``n`` labels (pure).
- :func:`label_shard`: one shard through its own cache file: pairs already in the central cache are copied into it
  (never relabelled), pairs already in the shard file (a killed job) are resumed, the rest labelled by
  :func:`~irrepro.labels.labelling.label_pairs`. Only this job writes its shard file; the central cache is only read.
- :func:`gather_shards`: the shards' rows in ``pairs.tsv`` order, the same table :func:`label_pairs` returns for the
  whole file (so the labels table is byte-identical whatever the shard size or the order the shards finished);
  :func:`merge_into_cache` adds them to the central cache sorted by (query id, document id), each keyed by the hash
  of its query and document texts (:func:`~irrepro.labels.cache.input_hash`).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from irrepro.errors import InputError
from irrepro.labels.base import Labeler, label_columns
from irrepro.labels.cache import LabelCache, input_hashes
from irrepro.labels.prompts import get_prompt
from irrepro.labels.labelling import label_pairs


def shard_count(n_pairs: int, size: int | None) -> int:
    """Shards of ``size`` pairs for ``n_pairs`` distinct pairs: ceil(n / size), at least 1 (``size`` None: 1)."""
    if size is None:
        return 1
    if int(size) < 1:
        raise InputError(f"shard size {size!r}: expected a positive integer")
    return max(1, math.ceil(n_pairs / int(size)))


def shard_plan(pairs: pd.DataFrame, size: int | None) -> dict:
    """``{"pairs": distinct pairs, "shard_size": size, "shards": shard count}`` of a pairs table (the checkpoint
    ``labels/<collection>/shards.json`` the gather's inputs are read from)."""
    n = len(pair_keys(pairs))
    return {"pairs": n, "shard_size": size, "shards": shard_count(n, size)}


def pair_keys(pairs: pd.DataFrame) -> list[tuple[str, str]]:
    """The distinct ``(query_id, doc_id)`` pairs (as strings) in order of first appearance."""
    return list(dict.fromkeys(zip(pairs["query_id"].astype(str), pairs["doc_id"].astype(str))))


def cache_keys(pairs: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The distinct ``(query_id, doc_id, input_hash)`` cache keys of a pairs table (``query_id, doc_id, query,
    text``) in order of first appearance (:func:`~irrepro.labels.cache.input_hash`)."""
    qids, dids = pairs["query_id"].astype(str).tolist(), pairs["doc_id"].astype(str).tolist()
    hashes = input_hashes(pairs["query"].astype(str).tolist(), pairs["text"].astype(str).tolist())
    return list(dict.fromkeys(zip(qids, dids, hashes)))


def shard_pairs(pairs: pd.DataFrame, shard: int, shards: int, size: int | None) -> pd.DataFrame:
    """The rows (first occurrence of each distinct pair) of shard ``shard`` of ``shards``: distinct pairs
    ``[shard * size, (shard + 1) * size)`` in file order (``size`` None: all). ``shards`` must be
    :func:`shard_count` of the table (else the shard plan is stale: an :class:`InputError`)."""
    keys = pair_keys(pairs)
    want = shard_count(len(keys), size)
    if shards != want or not 0 <= shard < shards:
        raise InputError(f"shard {shard} of {shards}: {len(keys)} pairs in shards of {size} make {want} shards")
    lo, hi = (0, len(keys)) if size is None else (shard * size, (shard + 1) * size)
    mine = set(keys[lo:hi])
    k = list(zip(pairs["query_id"].astype(str), pairs["doc_id"].astype(str)))
    first = ~pd.Series(k, index=pairs.index).duplicated().to_numpy()
    sel = first & np.array([x in mine for x in k], dtype=bool)
    return pairs[sel].reset_index(drop=True)


def label_shard(labeler: Labeler, prompt, pairs: pd.DataFrame, shard_cache, central_cache=None,
                **kw) -> tuple[pd.DataFrame, dict]:
    """Label one shard's ``pairs`` (``label_pairs`` columns) through its own cache file ``shard_cache``.

    Pairs of the central cache ``central_cache`` (read only) are first copied, exactly, into the shard file; pairs
    already there (an earlier, killed run of this shard) are resumed. Returns ``(table, counts)``: the
    :func:`label_pairs` table and ``{"pairs", "resumed", "central", "labelled"}`` (distinct pairs; resumed: already
    in the shard file; central: copied from the central cache; labelled: by the labeler now).
    """
    prompt = get_prompt(prompt)
    keys = cache_keys(pairs)
    with LabelCache(shard_cache) as sc:
        resumed = len(sc.rows(labeler.cache_key, prompt.hash, keys))
        central = 0
        if central_cache is not None and (central_cache == ":memory:" or Path(central_cache).exists()):
            with LabelCache(central_cache) as cc:
                have = {r[:3] for r in sc.rows(labeler.cache_key, prompt.hash, keys)}
                central = sc.put_rows(labeler.cache_key, prompt.hash,
                                      cc.rows(labeler.cache_key, prompt.hash, [k for k in keys if k not in have]))
    counts = {"pairs": len(keys), "resumed": resumed, "central": central,
              "labelled": len(keys) - resumed - central}
    return label_pairs(labeler, prompt, pairs, cache_path=shard_cache, **kw), counts


def write_shard(table: pd.DataFrame, path) -> None:
    """A shard's :func:`label_pairs` table as TSV with round-trip floats (``%.17g``; NaN: empty)."""
    table.to_csv(path, sep="\t", index=False, float_format="%.17g")


def read_shard(path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype={"query_id": str, "doc_id": str, "input_hash": str, "labeler": str,
                                              "prompt_id": str}, keep_default_na=False, na_values=[""])


def gather_shards(pairs: pd.DataFrame, shards: list[pd.DataFrame]) -> pd.DataFrame:
    """The :func:`label_pairs` table of all of ``pairs`` from its shards' tables (any order): one row per row of
    ``pairs``, in its order. Every distinct pair must be in exactly one shard, all by one labeler and prompt."""
    if not shards:
        raise InputError("no shard tables to gather")
    t = pd.concat(shards, ignore_index=True)
    if pairs.empty:  # one empty shard: the empty table label_pairs returns
        return t.reset_index(drop=True)
    for col in ("labeler", "prompt_id"):
        if t[col].nunique() != 1:
            raise InputError(f"shards disagree on {col}: {sorted(t[col].unique())}")
    t = t.set_index(["query_id", "doc_id"])
    if t.index.duplicated().any():
        raise InputError(f"pairs in two shards, e.g. {list(t.index[t.index.duplicated()][:3])}")
    qids = pairs["query_id"].astype(str).tolist()
    dids = pairs["doc_id"].astype(str).tolist()
    missing = sorted(set(zip(qids, dids)) - set(t.index))
    if missing:
        raise InputError(f"{len(missing)} pairs in no shard, e.g. {missing[:3]}")
    cols = [c for c in t.columns if c.startswith("p_")]
    G = len(cols)
    p = t.loc[list(zip(qids, dids)), label_columns(G)].to_numpy(dtype=float)
    out = pd.DataFrame({"query_id": qids, "doc_id": dids, "labeler": t.labeler.iloc[0],
                        "prompt_id": t.prompt_id.iloc[0]})
    for r, c in enumerate(label_columns(G)):
        out[c] = p[:, r]
    return out


def with_input_hashes(table: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """A shard's :func:`label_pairs` table of ``pairs`` (one row per row, in its order) with the column
    ``input_hash`` after ``doc_id``: the :func:`~irrepro.labels.cache.input_hash` of each pair's query and document
    texts, which the gather needs to key the labels in the central cache (it reads no texts itself)."""
    if len(table) != len(pairs) or not (
            (table.query_id.astype(str).to_numpy() == pairs.query_id.astype(str).to_numpy()).all()
            and (table.doc_id.astype(str).to_numpy() == pairs.doc_id.astype(str).to_numpy()).all()):
        raise InputError("the labels table is not row for row the pairs table it was labelled from")
    out = table.copy()
    out.insert(2, "input_hash", input_hashes(pairs["query"].astype(str).tolist(), pairs["text"].astype(str).tolist()))
    return out


def shard_hashes(shards: list[pd.DataFrame]) -> dict:
    """``{(query_id, doc_id): input_hash}`` of the shards' tables (written by :func:`with_input_hashes`)."""
    out = {}
    for t in shards:
        if "input_hash" not in t.columns:
            raise InputError("a shard table without the input_hash column (written before the cache keyed labels by "
                             "their texts): delete the shard files and run the shards again")
        out.update(zip(zip(t.query_id.astype(str), t.doc_id.astype(str)), t.input_hash.astype(str)))
    return out


def merge_into_cache(table: pd.DataFrame, hashes: dict, prompt, cache_path) -> int:
    """Add a labels table's distinct pairs (NaN rows left out, as :func:`label_pairs` does) to the cache at
    ``cache_path``, each keyed by its input hash from ``hashes`` (``{(query_id, doc_id): input_hash}``,
    :func:`shard_hashes`), sorted by (query id, document id), one transaction; returns how many were new."""
    prompt = get_prompt(prompt)
    cols = label_columns(prompt.n_grades)
    t = table.drop_duplicates(["query_id", "doc_id"]).sort_values(["query_id", "doc_id"])
    keys = list(zip(t.query_id.astype(str), t.doc_id.astype(str)))
    missing = [k for k in keys if k not in hashes]
    if missing:
        raise InputError(f"{len(missing)} labelled pairs without an input hash, e.g. {missing[:3]}")
    p = t[cols].to_numpy(dtype=float)
    ok = ~np.isnan(p).any(axis=1)
    rows = [(q, d, hashes[(q, d)], prompt.id, json.dumps([float(x) for x in row]))
            for (q, d), row, o in zip(keys, p, ok) if o]
    names = t.labeler.unique()
    if len(names) != 1:
        raise InputError(f"one labeler per table expected, got {sorted(names)}")
    with LabelCache(cache_path) as cache:
        return cache.put_rows(str(names[0]), prompt.hash, rows)
