"""Readers and writers for the TREC file formats users bring: runs, qrels, ``trec_eval -q`` output and
topic-by-system score matrices.

Every reader validates line by line and raises :class:`irrepro.errors.InputError` naming the file, the line
number and what was expected. Gzipped files (``.gz``) are read transparently.
"""
from __future__ import annotations

import gzip
import io
import math
import os
import re
from pathlib import Path

import pandas as pd

from irrepro.errors import InputError
from irrepro.core.scores import normalise_scores, topic_key

RUN_COLUMNS = ["query_id", "doc_id", "rank", "score", "system"]
QRELS_COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]


def _open(path):
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError("file not found", path=path)
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", errors="replace")
    return open(path, encoding="utf-8-sig", errors="replace")  # -sig: a byte-order mark is not part of the first id


def _float(tok, path, lineno, what):
    try:
        v = float(tok)
    except ValueError:
        raise InputError(f"{what} {tok!r} is not a number", path=path, line=lineno) from None
    if math.isnan(v):
        raise InputError(f"{what} is NaN", path=path, line=lineno)
    if math.isinf(v):
        raise InputError(f"{what} {tok!r} is not finite", path=path, line=lineno)
    return v


def _grade(tok, path, lineno):
    """A relevance grade: an integer (``2``, ``-1``; ``2.0`` is read as 2). ``1.5``, ``inf`` or text is an error,
    never a silent truncation."""
    try:
        v = float(tok)
    except ValueError:
        raise InputError(f"relevance {tok!r} is not an integer grade", path=path, line=lineno) from None
    if not math.isfinite(v) or v != int(v):
        raise InputError(f"relevance {tok!r} is not an integer grade (fractional or non-finite grades are not "
                         f"supported)", path=path, line=lineno)
    return int(v)


def read_run(path, system: str | None = None) -> pd.DataFrame:
    """Read a TREC run file (``qid Q0 docno rank score tag``; whitespace-separated).

    The ranking used downstream is by descending score with ties broken by docno descending (trec_eval's
    convention), not by the rank column. ``system`` overrides the run tag; a file with several tags is an error.
    """
    rows = []
    tags = set()
    seen = set()
    with _open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 6:
                raise InputError(f"expected 6 fields 'qid Q0 docno rank score tag', got {len(parts)}: {line.strip()[:80]!r}",
                                 path=path, line=lineno)
            qid, _, doc, rank, score, tag = parts
            try:
                rank = int(rank)
            except ValueError:
                raise InputError(f"rank {rank!r} is not an integer", path=path, line=lineno) from None
            score = _float(score, path, lineno, "score")
            if (qid, doc) in seen:
                raise InputError(f"document {doc!r} appears twice for query {qid!r}", path=path, line=lineno)
            seen.add((qid, doc))
            tags.add(tag)
            rows.append((qid, doc, rank, score))
    if not rows:
        raise InputError("run file is empty", path=path)
    if system is None:
        if len(tags) > 1:
            raise InputError(f"run file has several run tags {sorted(tags)[:5]}; pass a system name", path=path)
        system = tags.pop()
    df = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])
    df["system"] = system
    return sort_run(df)


def sort_run(df: pd.DataFrame) -> pd.DataFrame:
    """Order a run by query, then descending score, ties by descending docno (as trec_eval), and re-rank 1..n."""
    df = df.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False], kind="mergesort")
    df = df.reset_index(drop=True)
    df["rank"] = df.groupby("query_id").cumcount() + 1
    return df


def write_run(df: pd.DataFrame, path, system: str | None = None, depth: int | None = None) -> None:
    """Write a run in TREC format, ranked as :func:`sort_run` ranks it; scores with 6 decimals."""
    df = sort_run(df[["query_id", "doc_id", "score"]].assign(query_id=lambda d: d.query_id.astype(str)))
    if depth is not None:
        df = df[df["rank"] <= depth]
    tag = system or "irrepro"
    qorder = sorted(df["query_id"].unique(), key=topic_key)
    df["_q"] = df["query_id"].map({q: i for i, q in enumerate(qorder)})
    df = df.sort_values(["_q", "rank"], kind="mergesort")
    with open(path, "w") as f:
        for q, d, r, s in zip(df.query_id, df.doc_id, df["rank"], df.score):
            f.write(f"{q} Q0 {d} {r} {s:.6f} {tag}\n")


def read_qrels(path, subtopics: bool = False) -> pd.DataFrame:
    """Read TREC qrels (``qid iteration docno rel``).

    A (query, document) pair judged on two lines is an error naming both lines, whatever their iteration column
    says (the iteration column of ad-hoc qrels is not a key: keeping either judgment would be a silent choice).
    ``subtopics=True`` reads diversity qrels, whose iteration column holds the subtopic: there a pair may repeat
    with different subtopics, and only the same (query, subtopic, document) twice is an error."""
    rows = []
    seen = {}
    with _open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 4:
                raise InputError(f"expected 4 fields 'qid iteration docno relevance', got {len(parts)}: "
                                 f"{line.strip()[:80]!r}", path=path, line=lineno)
            qid, it, doc, rel = parts
            rel = _grade(rel, path, lineno)
            key = (qid, it, doc) if subtopics else (qid, doc)
            if key in seen:
                raise InputError(f"judgment for query {qid!r}, document {doc!r} repeats line {seen[key]} "
                                 f"({path}:{seen[key]}); a pair is judged once", path=path, line=lineno)
            seen[key] = lineno
            rows.append((qid, it, doc, rel))
    if not rows:
        raise InputError("qrels file is empty", path=path)
    return pd.DataFrame(rows, columns=QRELS_COLUMNS)


def write_qrels(df: pd.DataFrame, path) -> None:
    """Write qrels in TREC format, sorted by query (numeric where possible), iteration, document."""
    df = df.copy()
    if "iteration" not in df.columns:
        df["iteration"] = "0"
    df["_q"] = df["query_id"].astype(str).map(topic_key)
    df = df.sort_values(["_q", "iteration", "doc_id"], kind="mergesort")
    with open(path, "w") as f:
        for q, it, d, r in zip(df.query_id, df.iteration, df.doc_id, df.relevance):
            f.write(f"{q} {it} {d} {int(r)}\n")


def check_run_topics(run: pd.DataFrame, qrels: pd.DataFrame, run_path=None, qrels_path=None) -> None:
    """Raise if the run has topics that the qrels do not judge (their scores would be silently undefined)."""
    extra = sorted(set(run["query_id"]) - set(qrels["query_id"]), key=topic_key)
    if extra:
        raise InputError(f"{len(extra)} topic(s) of the run are not in the qrels {qrels_path or ''}: "
                         f"{extra[:10]}{' ...' if len(extra) > 10 else ''}; restrict the run to judged topics "
                         f"or set 'topics: judged' for this import", path=run_path)


# trec_eval measure names -> ir_measures-style names used in the canonical table.
TREC_EVAL_NAMES = {
    "map": "AP", "P_10": "P@10", "P_20": "P@20", "P_5": "P@5", "P_30": "P@30", "P_100": "P@100",
    "recip_rank": "RR", "ndcg": "nDCG", "ndcg_cut_10": "nDCG@10", "ndcg_cut_20": "nDCG@20", "Rprec": "Rprec",
    "bpref": "Bpref", "recall_100": "R@100", "recall_1000": "R@1000",
}


def read_trec_eval_q(path, collection: str, measures=None) -> pd.DataFrame:
    """Read ``trec_eval -q`` output (``measure topic value``, or ``run measure topic value`` for concatenated files)
    into the canonical long table. The ``all`` rows (aggregates) are dropped. Measures are renamed with
    :data:`TREC_EVAL_NAMES`; ``measures`` (canonical names) restricts the result."""
    rows = []
    with _open(path) as f:
        current_run = os.path.basename(os.fspath(path))
        width = None  # (fields, line) of the first data line
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.split()
            if width is None and len(parts) in (3, 4):
                width = (len(parts), lineno)
            elif width is not None and len(parts) != width[0] and len(parts) in (3, 4):
                raise InputError(f"{len(parts)} fields, but line {width[1]} has {width[0]}: a file is either "
                                 f"'measure topic value' or 'run measure topic value' throughout", path=path,
                                 line=lineno)
            if len(parts) == 3:
                m, topic, val = parts
                run = current_run
            elif len(parts) == 4:
                run, m, topic, val = parts
            else:
                raise InputError(f"expected 'measure topic value' or 'run measure topic value', got {len(parts)} "
                                 f"fields: {line.strip()[:80]!r}", path=path, line=lineno)
            if not m[:1].isalpha():
                raise InputError(f"{m!r} is not a measure name (expected 'measure topic value' or "
                                 f"'run measure topic value')", path=path, line=lineno)
            if m == "runid":
                if len(parts) == 3:
                    current_run = val
                continue
            if topic == "all":
                continue
            name = TREC_EVAL_NAMES.get(m, m)
            value = _float(val, path, lineno, "value")  # every line is checked, also those filtered out below
            if measures is not None and name not in measures:
                continue
            rows.append((run, topic, name, value))
    if not rows:
        raise InputError("no per-topic rows found (was trec_eval run with -q?)", path=path)
    df = pd.DataFrame(rows, columns=["system", "topic", "measure", "value"])
    df["collection"] = collection
    dup = df.duplicated(["system", "topic", "measure"])
    if dup.any():
        r = df[dup].iloc[0]
        raise InputError(f"duplicate value for run {r.system!r}, measure {r.measure!r}, topic {r.topic!r}", path=path)
    return normalise_scores(df)


def read_matrix_csv(path, collection: str, measure: str, topics=None) -> pd.DataFrame:
    """Read a topic-by-system score matrix CSV (header = system names, one row per topic, values in [0, 1] or any
    real) into the canonical long table. If the first column is named ``topic`` (or ``qid``/``query_id``) it gives
    the topic ids; otherwise topics are numbered 1..n in file order (Urbano's matrices are anonymised that way) or
    taken from ``topics``."""
    with _open(path) as f:
        numbered = [(i, ln.rstrip("\r\n")) for i, ln in enumerate(f, 1)]
    numbered = [(i, ln) for i, ln in numbered if ln.strip()]  # blank lines are skipped, line numbers kept
    if len(numbered) < 2:
        raise InputError("matrix needs a header line and at least one topic row", path=path)
    header_line, header = numbered[0][0], [h.strip().strip('"').lstrip("\ufeff") for h in numbered[0][1].split(",")]
    has_topic_col = header[0].lower() in ("topic", "qid", "query_id", "")
    systems = header[1:] if has_topic_col else header
    if len(set(systems)) != len(systems):
        raise InputError("duplicate system names in header", path=path, line=header_line)
    rows = []
    seen = {}
    for n, (i, ln) in enumerate(numbered[1:]):
        parts = [p.strip().strip('"') for p in ln.split(",")]
        if len(parts) != len(header):
            raise InputError(f"expected {len(header)} comma-separated fields like the header, got {len(parts)}",
                             path=path, line=i)
        if has_topic_col:
            topic, vals = parts[0], parts[1:]
        else:
            topic, vals = (str(topics[n]) if topics is not None else str(n + 1)), parts
        if topic in seen:
            raise InputError(f"topic {topic!r} appears twice (first on line {seen[topic]})", path=path, line=i)
        seen[topic] = i
        for s, v in zip(systems, vals):
            if v in ("NA", "NaN", "nan", ""):
                raise InputError(f"missing value for system {s!r}", path=path, line=i)
            rows.append((s, topic, _float(v, path, i, f"value for system {s!r}")))
    df = pd.DataFrame(rows, columns=["system", "topic", "value"])
    df["collection"], df["measure"] = collection, measure
    return normalise_scores(df)


def run_files(directory) -> list[Path]:
    """The run files of a directory: every regular file not hidden (name starting with '.'), sorted by name."""
    return sorted(p for p in Path(directory).iterdir() if p.is_file() and not p.name.startswith("."))


#: file-name endings stripped from a run file's name, in this order: a compression, then a run-file extension
RUN_COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst")
RUN_EXTENSIONS = (".run", ".trec", ".txt", ".res", ".tsv", ".out")
SYSTEM_NAME = re.compile(r"[A-Za-z0-9._+-]+")   # the workflow's `system` wildcard


def run_name(path) -> str:
    """A run's system name from its file name: the name without one compression suffix (``.gz``, ``.bz2``, ``.xz``,
    ``.zst``) and then one run-file extension (``.run``, ``.trec``, ``.txt``, ``.res``, ``.tsv``, ``.out``), and
    without TREC's ``input.`` prefix (``input.uogTrA44xu.gz`` -> ``uogTrA44xu``; ``bm25_k1-0.9_b-0.5.run`` ->
    ``bm25_k1-0.9_b-0.5``). A name that cannot be a system name (letters, digits and ``._+-`` only) is an
    ``InputError`` naming the file."""
    name = Path(path).name
    for suffixes in (RUN_COMPRESSIONS, RUN_EXTENSIONS):
        for suf in suffixes:
            if name.lower().endswith(suf) and len(name) > len(suf):
                name = name[:-len(suf)]
                break
    if name.startswith("input.") and len(name) > len("input."):
        name = name[len("input."):]
    if not SYSTEM_NAME.fullmatch(name):
        raise InputError(f"cannot name a system {name!r}: a run file's name (without its extension) may hold only "
                         "letters, digits and . _ + -; rename the file", path=path)
    return name


def run_systems(paths) -> list[tuple[str, Path]]:
    """``(system name, path)`` of run files (:func:`run_name`); two files that would give one system are an
    ``InputError`` naming both."""
    seen, out = {}, []
    for p in paths:
        name = run_name(p)
        if name in seen:
            raise InputError(f"run files {seen[name]} and {p} both give system {name!r}: rename one", path=p)
        seen[name] = p
        out.append((name, Path(p)))
    return out
