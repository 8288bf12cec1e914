"""The canonical per-topic score table: ``collection, system, topic, measure, value``.

Every analysis in irrepro reads this long table, whether the scores were computed from our own runs, imported from
``trec_eval -q`` output, or from a topic-by-system matrix. It is stored as TSV (sorted, so that the same content
gives the same bytes).
"""
from __future__ import annotations

import pandas as pd

from irrepro.errors import InputError

SCORE_COLUMNS = ["collection", "system", "topic", "measure", "value"]


def normalise_scores(df: pd.DataFrame) -> pd.DataFrame:
    """Return ``df`` with the canonical columns, dtypes and a deterministic row order."""
    missing = [c for c in SCORE_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"score table lacks columns {missing}; expected {SCORE_COLUMNS}")
    out = df[SCORE_COLUMNS].copy()
    for c in ("collection", "system", "topic", "measure"):
        out[c] = out[c].astype(str)
    out["value"] = pd.to_numeric(out["value"], errors="raise").astype(float)
    out = out.sort_values(["collection", "measure", "system", "topic"], kind="mergesort").reset_index(drop=True)
    return out


def write_scores(df: pd.DataFrame, path) -> None:
    """Write the canonical table as TSV with 6 significant decimals (stable bytes across runs)."""
    normalise_scores(df).to_csv(path, sep="\t", index=False, float_format="%.6f")


def read_scores(path) -> pd.DataFrame:
    """Read a canonical per-topic score table (TSV or parquet)."""
    path = str(path)
    if path.endswith(".parquet"):
        df = pd.read_parquet(path)
    else:
        df = pd.read_csv(path, sep="\t", dtype={"collection": str, "system": str, "topic": str, "measure": str})
    try:
        return normalise_scores(df)
    except InputError as e:
        raise InputError(str(e), path=path) from None


def to_matrix(df: pd.DataFrame, measure: str, collection: str | None = None) -> pd.DataFrame:
    """Pivot the long table into a topic-by-system matrix (index = topic, columns = system).

    Raises ``InputError`` if the measure is absent or a (system, topic) cell appears twice. Missing cells stay NaN:
    the analyses decide how to treat them, explicitly.
    """
    sub = df[df["measure"] == measure]
    if collection is not None:
        sub = sub[sub["collection"] == collection]
    if sub.empty:
        have = sorted(df["measure"].unique())
        raise InputError(f"no scores for measure {measure!r}" + (f" in collection {collection!r}" if collection else "")
                         + f"; measures present: {have}")
    if collection is None and sub["collection"].nunique() > 1:
        raise InputError(f"several collections hold measure {measure!r}; pass collection=")
    dup = sub.duplicated(["system", "topic"])
    if dup.any():
        row = sub[dup].iloc[0]
        raise InputError(f"duplicate score for system {row.system!r}, topic {row.topic!r}, measure {measure!r}")
    mat = sub.pivot(index="topic", columns="system", values="value")
    mat = mat.reindex(index=sorted(mat.index, key=topic_key), columns=sorted(mat.columns))
    mat.index.name, mat.columns.name = "topic", "system"
    return mat.astype(float)


def from_matrix(mat: pd.DataFrame, collection: str, measure: str) -> pd.DataFrame:
    """Inverse of :func:`to_matrix`: a topic-by-system matrix to the long table."""
    long = mat.rename_axis(index="topic", columns="system").stack(future_stack=True).rename("value").reset_index()
    long = long.dropna(subset=["value"])
    long["collection"], long["measure"] = collection, measure
    return normalise_scores(long)


def topic_key(t):
    """Sort key of topic ids: numeric ids numerically (2 before 10), then the others as text."""
    s = str(t)
    return (0, int(s), "") if s.isdigit() else (1, 0, s)
