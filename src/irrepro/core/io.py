"""Writers every workflow script uses: tables (CSV + Markdown) and value files (JSON), files always closed; the
digest of a file (:func:`file_digest`, :func:`md5sum`), the one every checksum of the project is computed by."""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

import pandas as pd

from irrepro.core.verify import to_markdown


def file_digest(path, algorithm: str = "sha256") -> str:
    """Hex digest of a file by ``hashlib``'s ``algorithm``, read in 1 MiB blocks."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def md5sum(path) -> str:
    """Hex md5 of a file (:func:`file_digest`): the checksum ir_datasets and the declared artifacts use."""
    return file_digest(path, "md5")


def write_values(values: Mapping[str, Any], path, *, sort_keys: bool = True, indent: int = 1) -> None:
    """Write a values file: ``item -> value`` as JSON (numpy scalars as floats), the input of the verify rule."""
    with open(path, "w") as f:
        json.dump(values, f, indent=indent, sort_keys=sort_keys, default=float)


def read_values(paths) -> dict:
    """Merge value files in order (a later file's item replaces an earlier one's)."""
    values: dict = {}
    for p in paths:
        with open(p) as f:
            values.update(json.load(f))
    return values


def write_table(df: pd.DataFrame, csv=None, md=None, *, float_format=None, index: bool = False,
                md_float: str = "{:.4g}") -> None:
    """Write a table as CSV (``float_format`` as in :meth:`pandas.DataFrame.to_csv`) and/or Markdown."""
    if csv is not None:
        df.to_csv(csv, index=index, float_format=float_format)
    if md is not None:
        with open(md, "w") as f:
            f.write(to_markdown(df.reset_index() if index else df, md_float))
