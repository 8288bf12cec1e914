"""BV-Test (Zhang et al., IP&M 2022) Sec. 5.4: Table 12 and Figs 2–3 on TREC Session-track runs.

Every run is evaluated per session (:func:`session_scores`); per condition (RL1..RL4) the Bias²–Var correlation
across systems (Eq. 7) on the scores and on max–min normalised scores (Eq. 11) is Table 12, and Bias² + Var per
system and condition against a track-wide target is Figs 2–3 (:func:`session_tradeoffs`; several tracks from their
files: :func:`table12`; the figure is ``irrepro.papers.bv.plots.session_figs``).
"""
from __future__ import annotations

import logging
import re
from typing import Mapping

import numpy as np
import pandas as pd

from irrepro.core.trec import read_qrels, read_run, run_files
from irrepro.core.verify import to_markdown
from irrepro.errors import InputError
from irrepro.papers.bv.biasvariance import bias_variance, complete_matrix, maxmin_normalise, tradeoff, try_value

log = logging.getLogger(__name__)

SESSION_RUN_PATTERN = r"^(?:input\.)?(?P<system>.+)\.(?P<condition>RL\d+)$"


def session_run_name(name: str, pattern: str = SESSION_RUN_PATTERN) -> tuple[str, str]:
    """``(system, condition)`` of a Session-track run from its file name (``.gz`` stripped), e.g. NIST's
    ``input.CWIpostRW.RL1`` -> ``("CWIpostRW", "RL1")``. ``pattern`` is a regular expression with the named groups
    ``system`` and ``condition``; a name it does not match raises ``InputError``."""
    base = name[:-3] if name.endswith(".gz") else name
    m = re.match(pattern, base)
    if not m or "system" not in m.groupdict() or "condition" not in m.groupdict():
        raise InputError(f"run file {name!r} does not match the Session-track pattern {pattern!r} "
                         f"(named groups 'system' and 'condition' expected)")
    return m.group("system"), m.group("condition")


def session_scores(runs, qrels: pd.DataFrame, measure: str = "nDCG@10", pattern: str = SESSION_RUN_PATTERN,
                   topic_map: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Per-session scores of Session-track runs: ``condition, system, topic, value``.

    ``runs``: run name (file name) -> run frame (``trec.read_run``); the name gives system and condition
    (:func:`session_run_name`). ``topic_map``: session -> topic of the qrels (2011/2012 sessions share topics);
    without it the run's query id is the qrels' topic. Sessions are the judged ones (after mapping); a session a run
    did not answer scores 0 (``evaluation.evaluate_run``). Two runs with the same system and condition are an error.
    """
    from irrepro.core.evaluation import evaluate_run
    q = qrels.copy()
    q["query_id"] = q["query_id"].astype(str)
    if topic_map:
        m = pd.DataFrame({"session": [str(k) for k in topic_map], "query_id": [str(v) for v in topic_map.values()]})
        q = m.merge(q, on="query_id").drop(columns="query_id").rename(columns={"session": "query_id"})
        if q.empty:
            raise InputError("no session of the topic map has judged documents: check the map's topic ids")
    q = q.groupby(["query_id", "doc_id"], as_index=False)["relevance"].max()  # subtopic qrels: best grade
    frames, seen = [], {}
    for name, run in runs.items():
        system, cond = session_run_name(name, pattern)
        if (system, cond) in seen:
            raise InputError(f"runs {seen[system, cond]!r} and {name!r} are both system {system!r}, condition {cond!r}")
        seen[system, cond] = name
        e = evaluate_run(run, q, [measure])
        frames.append(e.assign(condition=cond, system=system)[["condition", "system", "topic", "value"]])
    if not frames:
        raise InputError("no Session-track runs given")
    return pd.concat(frames, ignore_index=True)


def session_tradeoffs(scores: pd.DataFrame, conditions, target: str = "condition"):
    """BV-Test Table 12 and Figs 2–3 for one Session track from ``scores`` (``condition, system, topic, value``,
    e.g. NDCG@10 per session).

    Per condition (in the order of ``conditions``): the Pearson correlation across systems of Bias² and Var (Eq. 7)
    on the scores (``pearson``) and on max–min normalised scores (Eq. 11, ``pearson_norm``), with the target
    system the per-session maximum. ``target="condition"``: the maximum and the normalisation are taken within the
    condition (each condition is a Table 9-style matrix); ``"track"``: over every run of every condition, so Bias²
    of different conditions share one ``c``. Sessions missing from some run of a condition are dropped for that
    condition (:func:`complete_matrix`); an undefined correlation is None with the reason in ``note``.

    Returns ``(table, systems)``: ``table`` one row per condition; ``systems`` one row per (condition, system) with
    ``mean, bias2, var, total`` and the normalised ``*_norm`` against the track-wide target (so that conditions
    compare, as Figs 2–3 do), and ``best``: whether the condition has the system's lowest Bias² + Var.
    """
    if target not in ("condition", "track"):
        raise InputError(f"unknown Session-track target {target!r}; expected 'condition' or 'track'")
    conditions = list(conditions)
    missing = [c for c in conditions if c not in set(scores["condition"])]
    if missing:
        raise InputError(f"no runs for condition(s) {missing}; found {sorted(set(scores['condition']))}")
    wide = scores.pivot_table(index="topic", columns=["condition", "system"], values="value", aggfunc="first")
    # track-wide target and normalisation: per session over every run of every condition
    full = wide.dropna(axis=0)
    rows = []
    for cond in conditions:
        M = wide[cond].dropna(axis=1, how="all")
        X, systems, topics, dropped = complete_matrix(M)
        if target == "track":
            sub = full.loc[[t for t in topics if t in full.index]]
            lo, hi = sub.min(axis=1).to_numpy(), sub.max(axis=1).to_numpy()
            X = sub[cond][systems].to_numpy().T
            span = hi - lo
            Xn = np.divide(X - lo, span, out=np.zeros_like(X), where=span > 0)
            c, cn = float(hi.mean()), float(np.where(span > 0, 1.0, 0.0).mean())
        else:
            Xn = maxmin_normalise(X)
            c, cn = "target", "target"
        p, note = try_value(tradeoff, X, c)
        pn, note_n = try_value(tradeoff, Xn, cn)
        rows.append({"condition": cond, "systems": len(systems), "sessions": X.shape[1], "pearson": p,
                     "pearson_norm": pn, "note": "; ".join(sorted({n for n in (note, note_n) if n}))
                     + (f"; dropped sessions with missing scores: {len(dropped['topics'])}"
                        if dropped["topics"] else "")})
    table = pd.DataFrame(rows)
    for col in ("pearson", "pearson_norm"):
        table[col] = pd.Series([r[col] for r in rows], dtype=object)
    # per system and condition against the track-wide target (Figs 2–3)
    if full.shape[0] == 0:
        raise InputError("no session is scored by every run of the track")
    hi, lo = full.max(axis=1).to_numpy(), full.min(axis=1).to_numpy()
    span = hi - lo
    fn = full.sub(lo, axis=0).div(np.where(span > 0, span, 1.0), axis=0)
    fn = fn.where(np.broadcast_to((span > 0)[:, None], fn.shape), 0.0)
    c, cn = float(hi.mean()), float(np.where(span > 0, 1.0, 0.0).mean())
    recs = []
    for cond in conditions:
        for s in full[cond].columns:
            b = bias_variance(full[cond][s].to_numpy()[None, :], c=c).iloc[0]
            bn = bias_variance(fn[cond][s].to_numpy()[None, :], c=cn).iloc[0]
            recs.append({"condition": cond, "system": s, "mean": b["mean"], "bias2": b["bias2"], "var": b["var"],
                         "total": b["total"], "mean_norm": bn["mean"], "bias2_norm": bn["bias2"],
                         "var_norm": bn["var"], "total_norm": bn["total"]})
    per = pd.DataFrame(recs)
    for col in ("total", "total_norm"):
        flag = "best" if col == "total" else "best_norm"
        per[flag] = False
        both = per.groupby("system")["condition"].transform("nunique") == len(conditions)
        idx = per[both].groupby("system")[col].idxmin()
        per.loc[idx.to_numpy(), flag] = True
    return table, per


def read_topic_map(path) -> dict[str, str]:
    """A Session track's ``session topic`` lines (2011/2012 sessions share topics); ``#`` comments and blank lines
    are skipped; a line with one field is an ``InputError`` naming the file and line."""
    m = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) < 2:
                raise InputError("expected 'session topic' on each line", path=path, line=lineno)
            m[parts[0]] = parts[1]
    return m


def _cell(v):
    return None if v is None or pd.isna(v) else round(float(v), 6)


def _md_cell(v):
    return "" if v is None or pd.isna(v) else f"{v:.4f}"


def table12(tracks: Mapping[str, Mapping], measure: str = "nDCG@10", target: str = "condition",
            pattern: str = SESSION_RUN_PATTERN):
    """BV-Test Table 12 and Figs 2–3 on several Session tracks (config ``bv.table12``): ``tracks`` maps a track
    name to ``qrels``, ``runs`` (a directory), ``conditions``, optional ``topic_map`` and ``pattern``.

    Returns ``(table, systems, markdown, values)``: one row per (track, condition) with the correlations (6
    decimals, None where undefined); one row per (track, condition, system) (:func:`session_tradeoffs`); the
    Markdown text; and the values: per condition the correlations, per condition how many systems have their
    lowest Bias² + Var there (Fig 2), and how many do better on a later condition than on the first (Fig 3)."""
    tables, systems, values = [], [], {}
    for name in sorted(tracks):
        spec = tracks[name]
        runs = {p.name: read_run(p, system=p.name) for p in run_files(spec["runs"])}
        qrels = read_qrels(spec["qrels"])
        tmap = read_topic_map(spec["topic_map"]) if spec.get("topic_map") else None
        scores = session_scores(runs, qrels, measure, spec.get("pattern") or pattern, tmap)
        t, per = session_tradeoffs(scores, spec["conditions"], target)
        log.info("%s: %d runs, %d sessions\n%s", name, len(runs), scores["topic"].nunique(), t)
        tables.append(t.assign(track=name, measure=measure))
        systems.append(per.assign(track=name))
        for _, r in t.iterrows():
            for col, key in (("pearson", "score"), ("pearson_norm", "score_norm")):
                undefined = r[col] is None or pd.isna(r[col])  # a row with its reason, never a silence
                values[f"table12/{name}/{r['condition']}/{key}"] = (
                    {"value": None, "note": f"undefined: {r.get('note') or 'correlation not computable'}"}
                    if undefined else float(r[col]))
        first = spec["conditions"][0]
        for col, key in (("best", "best"), ("best_norm", "best_norm")):
            for cond in spec["conditions"]:
                values[f"fig_session/{name}/{key}/{cond}"] = int(per.loc[per["condition"] == cond, col].sum())
        # systems whose Bias² + Var on a later condition is below the one on the first (initial-query) condition
        wide = per.pivot(index="system", columns="condition", values="total").dropna()
        later = [c for c in spec["conditions"][1:] if c in wide]
        if later:
            values[f"fig_session/{name}/better_than_{first}"] = int((wide[later].min(axis=1) < wide[first]).sum())
    table = pd.concat(tables, ignore_index=True)[["track", "condition", "measure", "systems", "sessions", "pearson",
                                                  "pearson_norm", "note"]]
    for col in ("pearson", "pearson_norm"):
        table[col] = pd.Series([_cell(v) for v in table[col]], dtype=object)
    per = pd.concat(systems, ignore_index=True)
    md = (f"{measure} and {measure}' (max-min normalised); target = per-session maximum within the {target}\n\n"
          + to_markdown(table.assign(pearson=table["pearson"].map(_md_cell),
                                     pearson_norm=table["pearson_norm"].map(_md_cell))))
    return table, per, md, values
