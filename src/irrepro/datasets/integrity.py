"""md5 checks of every input a person could have edited: the ir_datasets cache (``IR_DATASETS_HOME``) and the local
artifact cache (``<resources_dir>/artifacts``).

A file is hashed once; its size and modification time are memoised beside the cache (``.irrepro-md5.json``), so a
later check costs one ``stat`` per file and rehashes only files that changed. Expected md5s: for artifacts, the
declaration in ``irrepro/data/artifacts.tsv``; for ir_datasets files, ir_datasets' own download registry
(``ir_datasets/etc/downloads.json``), plus the documented alternates of ``irrepro/data/ir_datasets_md5.tsv``
(files of the offline mirror rebuilt from the original sources). Files neither declares (e.g. what ir_datasets
extracts from an archive) are not checked.
"""
from __future__ import annotations

import csv
import functools
import json
import os
from importlib import resources
from pathlib import Path

from irrepro.core.io import md5sum
from irrepro.errors import MissingDataError

MEMO = ".irrepro-md5.json"


md5_file = md5sum  # the one md5 of a file (irrepro.core.io.md5sum), under the name this module's callers use


class Md5Memo:
    """``relative path -> (size, mtime_ns, md5)`` of a cache directory, kept in ``<root>/.irrepro-md5.json``."""

    def __init__(self, root):
        self.root = Path(root)
        self.path = self.root / MEMO
        try:
            self.data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.data = {}
        self.changed = False

    def md5(self, rel: str) -> str:
        st = (self.root / rel).stat()
        hit = self.data.get(rel)
        if hit and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
            return hit[2]
        got = md5_file(self.root / rel)
        self.data[rel] = [st.st_size, st.st_mtime_ns, got]
        self.changed = True
        return got

    def save(self):
        if self.changed:
            tmp = self.path.with_name(self.path.name + f".{os.getpid()}")
            tmp.write_text(json.dumps(self.data, sort_keys=True))
            os.replace(tmp, self.path)
            self.changed = False


@functools.lru_cache(maxsize=1)
def _registry() -> dict:
    import importlib.util

    # located without importing ir_datasets: it fixes IR_DATASETS_HOME when imported
    pkg = Path(importlib.util.find_spec("ir_datasets").origin).parent
    return json.loads((pkg / "etc" / "downloads.json").read_text())


def _entries():
    """``(top directory, cache_path, url, md5)`` of every ir_datasets download."""
    out = []

    def walk(top, node):
        if isinstance(node, dict):
            if "cache_path" in node and "expected_md5" in node:
                out.append((top, node["cache_path"], node.get("url", ""), node["expected_md5"]))
            else:
                for v in node.values():
                    walk(top, v)

    for top, node in _registry().items():
        walk(top, node)
    return out


def files_for_urls(text: str) -> list:
    """``(path relative to IR_DATASETS_HOME, url, md5)`` of the downloads whose URL (or ir_datasets mirror URL, named
    by the md5) appears in ``text`` (e.g. the message of a failed download)."""
    import re

    found = []
    for top, cache_path, url, md5 in _entries():
        if (url and url in text) or re.search(rf"/{md5}\b", text):
            item = (f"{top}/{cache_path}", url, md5)
            if item not in found:
                found.append(item)
    return found


@functools.lru_cache(maxsize=1)
def ir_datasets_expected() -> dict:
    """``path relative to IR_DATASETS_HOME -> set of accepted md5s``."""
    out: dict = {}
    for top, cache_path, _url, md5 in _entries():
        out.setdefault(f"{top}/{cache_path}", set()).add(md5)
    text = resources.files("irrepro").joinpath("data/ir_datasets_md5.tsv").read_text()
    for row in csv.DictReader(text.splitlines(), delimiter="\t"):
        out.setdefault(row["path"], set()).add(row["md5"])
    return out


def _check_tree(root, expected: dict, what: str) -> int:
    root = Path(root)
    if not root.is_dir():
        return 0
    memo = Md5Memo(root)
    n = 0
    try:
        for dirpath, _dirs, files in os.walk(root):
            for fn in files:
                rel = str((Path(dirpath) / fn).relative_to(root))
                if rel not in expected:
                    continue
                got = memo.md5(rel)
                n += 1
                if got not in expected[rel]:
                    raise MissingDataError(
                        f"{root / rel}: md5 {got}, expected {' or '.join(sorted(expected[rel]))} ({what}). The "
                        f"file was changed or corrupted after it arrived: delete it and rerun to fetch it again.")
    finally:
        memo.save()
    return n


def verify_ir_datasets_home(home) -> int:
    """Check every declared file of an ``IR_DATASETS_HOME``; returns how many were checked."""
    return _check_tree(home, ir_datasets_expected(), "ir_datasets' download registry / irrepro/data/ir_datasets_md5.tsv")


def verify_artifact_cache(cache_dir) -> int:
    """Check every declared artifact present in the local artifact cache; returns how many were checked."""
    from irrepro.datasets.mirror import ARTIFACTS

    return _check_tree(cache_dir, {name: {a.md5} for name, a in ARTIFACTS.items()}, "irrepro/data/artifacts.tsv")
