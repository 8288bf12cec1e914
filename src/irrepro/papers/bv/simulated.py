"""BV-Test (Zhang et al., IP&M 2022) Tables 10–11: per-topic bias–variance over simulated document collections.

:func:`simulate_collection` reads a collection's run files (with scores) and qrels and applies the Sec. 3.4
simulation (``irrepro.papers.bv.simulation``) and Eq. 12 per (system, topic); :func:`table10` correlates the
per-topic Bias² and Var averaged over topics (Eqs. 13–14) across systems, one row per collection;
:func:`table11` correlates them per topic. Topics without a relevant retrieved document are left out (the paper
leaves out Ad-hoc 1995's topic 201); a topic with an undefined correlation is listed with the reason, never as NaN.
"""
from __future__ import annotations

import logging
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from irrepro.core.trec import read_qrels
from irrepro.core.verify import to_markdown
from irrepro.errors import InputError
from irrepro.papers.bv.biasvariance import averaged_tradeoff, per_topic_tradeoff
from irrepro.papers.bv.simulation import per_topic_table, read_scored_run, relevance_profile

log = logging.getLogger(__name__)


def run_name(path) -> str:
    """System name of a run file: the file name without .gz, a leading NIST 'input.' and a trailing .run."""
    n = Path(path).name
    n = n[:-3] if n.endswith(".gz") else n
    n = n[6:] if n.startswith("input.") else n
    return n[:-4] if n.endswith(".run") else n


def simulate_collection(collection: str, run_paths, qrels_path, k: int, seed: int, unretrieved: str = "poisson",
                        rel_threshold: int = 1, depth: int | None = None, shared: bool = False) -> pd.DataFrame:
    """BV-Test Sec. 3.4 on one collection: ``k`` simulated collections per topic from the run files (with scores),
    then Eq. 12 per (system, topic): the long table of ``simulation.per_topic_table``. The random stream is
    ``default_rng([seed, crc32(collection)])``, one per collection. Two run files giving one system name are an
    ``InputError``."""
    t0 = time.perf_counter()
    runs = {}
    for p in run_paths:
        name = run_name(p)
        if name in runs:
            raise InputError(f"two run files give the system name {name!r}", path=p)
        runs[name] = read_scored_run(p, name)
    qrels = read_qrels(qrels_path)
    t1 = time.perf_counter()
    prof = relevance_profile(runs, qrels, rel_threshold=rel_threshold, depth=depth)
    t2 = time.perf_counter()
    # one stream per collection: the seed from config and the collection's name
    rng = np.random.default_rng([seed, zlib.crc32(collection.encode())])
    c0 = time.process_time()
    df = per_topic_table(prof, k, rng, unretrieved, bool(shared))
    t3, c1 = time.perf_counter(), time.process_time()
    log.info("%s: %d systems x %d topics (%d useful), %d relevant retrieved in all, k=%d, unretrieved=%s, "
             "shared=%s", collection, len(prof.systems), len(prof.topics), int(prof.useful.sum()), int(prof.r.sum()),
             k, unretrieved, shared)
    log.info("timing: read %.2f s, profile %.2f s, simulate + Eq. 12 %.2f s wall (%.2f s CPU)",
             t1 - t0, t2 - t1, t3 - t2, c1 - c0)
    if not prof.useful.all():
        log.warning("topics without any relevant retrieved document (left out of Tables 10-11): %s",
                    [t for t, u in zip(prof.topics, prof.useful) if not u])
    return df


def write_per_topic(df: pd.DataFrame, path) -> None:
    """Write :func:`simulate_collection`'s table (tab-separated, 8 significant digits)."""
    df.to_csv(path, sep="\t", index=False, float_format="%.8g")


def read_per_topic(path) -> pd.DataFrame:
    """Read a table written by :func:`write_per_topic` (topics and systems as strings)."""
    return pd.read_csv(path, sep="\t", dtype={"topic": str, "system": str})


def _matrices(df: pd.DataFrame):
    systems = list(dict.fromkeys(df["system"]))
    topics = list(dict.fromkeys(df["topic"]))
    b = df.pivot(index="system", columns="topic", values="bias2").loc[systems, topics].to_numpy()
    v = df.pivot(index="system", columns="topic", values="var").loc[systems, topics].to_numpy()
    useful = df.groupby("topic", sort=False)["useful"].first().loc[topics].to_numpy(bool)
    return systems, topics, b, v, useful


def table10_row(df: pd.DataFrame) -> dict:
    """BV-Test Table 10 for one collection from :func:`per_topic_table`: the Pearson correlation across systems of
    the averaged per-topic Bias² (Eq. 13) and Var (Eq. 14) over the useful topics. ``InputError`` when undefined
    (a single system, no useful topic, or constant averages)."""
    systems, topics, b, v, useful = _matrices(df)
    return {"systems": len(systems), "topics": len(topics), "useful_topics": int(useful.sum()),
            "pearson": averaged_tradeoff(b, v, useful),
            "mean_bias2": float(b[:, useful].mean()), "mean_var": float(v[:, useful].mean())}


def table11_rows(df: pd.DataFrame) -> pd.DataFrame:
    """BV-Test Table 11 for one collection: per useful topic, the Pearson correlation across systems of Bias² and
    Var (``pearson``; None with a ``note`` where undefined). Topics without a relevant retrieved document are left
    out, as the paper leaves out Ad-hoc 1995's topic 201."""
    systems, topics, b, v, useful = _matrices(df)
    t = per_topic_tradeoff(b[:, useful], v[:, useful])
    R = df.groupby("topic", sort=False)["R"].first().loc[topics].to_numpy()[useful]
    nsys = (df.pivot(index="system", columns="topic", values="r").loc[systems, topics].to_numpy() > 0).sum(axis=0)
    t.insert(0, "topic", np.asarray(topics, dtype=object)[useful])
    t.insert(1, "R", R)
    t.insert(2, "systems_with_relevant", nsys[useful])
    return t


def table11_summary(t: pd.DataFrame) -> dict:
    """Share of topics with a negative and with a strong (< −0.8, bold in the paper) correlation, and the median,
    over the topics where the correlation is defined."""
    p = t["pearson"].dropna().astype(float).to_numpy()
    if p.size == 0:
        raise InputError("no topic with a defined Bias²–Var correlation")
    return {"topics": int(len(t)), "defined": int(p.size), "share_negative": float((p < 0).mean()),
            "share_strong": float((p < -0.8).mean()), "median": float(np.median(p)),
            "min": float(p.min()), "max": float(p.max())}


def table10(frames):
    """BV-Test Table 10 on ``frames`` (a list of ``(collection, per-topic table)``): ``(table, values)`` with one
    row per collection (:func:`table10_row`) and the values ``table10/<c>/pearson``, ``negative`` (r < 0) and
    ``strong`` (r < −0.8, bold in the paper)."""
    rows, values = [], {}
    for c, df in frames:
        r = table10_row(df)
        rows.append({"collection": c, **r})
        values[f"table10/{c}/pearson"] = {"value": r["pearson"], "data": c}
        values[f"table10/{c}/negative"] = bool(r["pearson"] < 0)
        values[f"table10/{c}/strong"] = bool(r["pearson"] < -0.8)
        log.info("%s: %s", c, r)
    return pd.DataFrame(rows), values


def _pearson_cell(v):
    return "" if v is None or pd.isna(v) else f"{v:.4f}"


def table11(frames):
    """BV-Test Table 11 on ``frames`` (a list of ``(collection, per-topic table)``): ``(table, summary, markdown,
    values)``: one row per (collection, useful topic) (:func:`table11_rows`, correlations to 6 decimals, None where
    undefined), one summary row per collection (:func:`table11_summary`), the Markdown text (the summary, then one
    block per collection) and the values ``table11/<c>/{share_negative, share_strong, median, all_negative,
    mostly_strong}``."""
    blocks, summaries, values = [], [], {}
    for c, df in frames:
        t = table11_rows(df)
        t.insert(0, "collection", c)
        blocks.append(t)
        s = table11_summary(t)
        summaries.append({"collection": c, **s})
        for k in ("share_negative", "share_strong", "median"):
            values[f"table11/{c}/{k}"] = {"value": s[k], "data": c}
        values[f"table11/{c}/all_negative"] = bool(s["share_negative"] == 1.0)
        values[f"table11/{c}/mostly_strong"] = bool(s["share_strong"] > 0.5)
        log.info("%s: %s", c, s)
    t = pd.concat(blocks, ignore_index=True)
    t["pearson"] = pd.Series([None if v is None or pd.isna(v) else round(float(v), 6) for v in t["pearson"]],
                             dtype=object)
    summary = pd.DataFrame(summaries)
    md = ["Summary (share of topics with r < 0 and with r < -0.8, over topics with a defined correlation)\n\n",
          to_markdown(summary.round(4))]
    for (c, _), b in zip(frames, blocks):
        md.append(f"\n{c}\n\n")
        md.append(to_markdown(b.drop(columns="collection").assign(pearson=lambda d: d["pearson"].map(_pearson_cell))))
    return t, summary, "".join(md), values
