"""Build and check an offline mirror (``irrepro mirror build DIR`` / ``irrepro mirror check DIR``).

A mirror holds ``artifacts/<name>`` for declared artifacts, ``ir_datasets/<top>/<cache_path>`` laid out like an
``IR_DATASETS_HOME``, and ``MD5SUMS`` (``<md5>  <relative path>`` lines, sorted by path) listing every file.

Which ir_datasets files an id needs is read from ir_datasets' own objects: ``ir_datasets.load(id)``'s queries and
qrels handlers (and the docs handler for a collection that takes its documents from ir_datasets) are walked
attribute by attribute down to their ``Download`` objects (``dlc[...]``). A download with a ``cache_path`` is
needed as is (ir_datasets derives its own caches from it); a streamed download that ir_datasets caches through
``Cache(GzipExtract(...))`` is needed as that cache file, which the builder gunzips from the verified download.
The walk runs in a subprocess (importing ir_datasets fixes ``IR_DATASETS_HOME``). Closures (e.g. the judged-topic
sets of ``*/judged`` subsets) are not followed: their inputs are the qrels, which are walked anyway. A corpus that
ir_datasets only reads from a local copy (ClueWeb) or streams on every use is an error: no mirror can hold it.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from irrepro.datasets import mirror as _mirror
from irrepro.datasets.integrity import ir_datasets_expected, md5_file
from irrepro.errors import InputError, MissingDataError

SUMS = "MD5SUMS"


@dataclass(frozen=True)
class IrdsFile:
    path: str                # relative to the mirror's ir_datasets/ (= to an IR_DATASETS_HOME)
    urls: tuple              # where the download comes from, tried in order
    md5: str                 # ir_datasets' expected md5 of the download
    gunzip: bool = False     # the file is the gunzipped download (an ir_datasets Cache of a streamed download)


@dataclass
class Report:
    fetched: list = field(default_factory=list)
    present: list = field(default_factory=list)
    refused: list = field(default_factory=list)   # (relative path, reason)
    nbytes: int = 0


def _walk_config(node, out_art: set, out_ids: dict, docs: bool):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("artifact", "docs_artifact") and isinstance(v, str):
                if v not in _mirror.ARTIFACTS:
                    raise InputError(f"config key {k}: {v!r} is not a declared artifact (irrepro/data/artifacts.tsv)")
                out_art.add(v)
            elif k == "ir_datasets" and isinstance(v, str):
                kinds = out_ids.setdefault(v, {"queries", "qrels"})
                if docs and "docs_artifact" not in node:
                    kinds.add("docs")
            else:
                _walk_config(v, out_art, out_ids, docs)
    elif isinstance(node, list):
        for v in node:
            _walk_config(v, out_art, out_ids, docs)


def needed(config: dict) -> tuple[list, list]:
    """``(artifact names, [IrdsFile])`` a validated config needs, both sorted. Artifacts: every ``artifact`` /
    ``docs_artifact`` value anywhere. ir_datasets: topics and qrels of every ``ir_datasets`` id, plus documents for
    ``collections.*`` without ``docs_artifact`` (the other sections use only topics and qrels)."""
    arts, ids = set(), {}
    _walk_config(config.get("collections") or {}, arts, ids, docs=True)
    _walk_config({k: v for k, v in config.items() if k != "collections"}, arts, ids, docs=False)
    return sorted(arts), ir_datasets_files(ids)


def ir_datasets_files(ids: dict) -> list:
    """``[IrdsFile]`` for ``{dataset id: {"queries", "qrels", "docs"}}`` (ir_datasets walked in a subprocess)."""
    if not ids:
        return []
    src = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryDirectory() as home:
        env["IR_DATASETS_HOME"] = home
        p = subprocess.run([sys.executable, "-c", "from irrepro.datasets.mirrorbuild import _probe; _probe()"],
                           input=json.dumps({k: sorted(v) for k, v in ids.items()}), capture_output=True,
                           text=True, env=env, timeout=600)
    if p.returncode != 0:
        raise InputError(f"could not list the ir_datasets downloads: {p.stderr.strip()[-2000:]}")
    res = json.loads(p.stdout.splitlines()[-1])
    if res["errors"]:
        raise InputError("; ".join(res["errors"]))
    files = {f["path"]: IrdsFile(f["path"], tuple(f["urls"]), f["md5"], f["gunzip"]) for f in res["files"]}
    return [files[k] for k in sorted(files)]


def _probe():  # runs in the subprocess of ir_datasets_files(): json {id: kinds} on stdin, json on stdout
    import types

    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.util import Cache, Download

    home = str(ir_datasets.util.home_path())
    skip = (Dataset, types.FunctionType, types.MethodType, type, types.ModuleType, str, bytes, int, float)

    def walk(obj, chain, out, seen):
        if obj is None or id(obj) in seen or isinstance(obj, skip):
            return
        seen.add(id(obj))
        if isinstance(obj, (Download, Cache)):
            out.append((chain, obj))
        elif isinstance(obj, (list, tuple, set, frozenset, dict)):
            for x in obj.values() if isinstance(obj, dict) else obj:
                walk(x, chain, out, seen)
        elif hasattr(obj, "__dict__"):
            for x in vars(obj).values():
                walk(x, chain + [type(obj).__name__], out, seen)

    files, errors = [], []

    def add(dl, did, path=None, gunzip=False):
        urls = [m.url for m in dl.mirrors if getattr(m, "url", None)]
        if not urls or not dl.expected_md5:
            errors.append(f"{did}: ir_datasets reads {dl._cache_path or '?'} from a local copy; no mirror can fetch it")
            return
        rel = os.path.relpath(path or dl._cache_path, home)
        files.append({"path": rel, "urls": urls, "md5": dl.expected_md5, "gunzip": gunzip})

    for did, kinds in json.loads(sys.stdin.read()).items():
        if did not in ir_datasets.registry:
            errors.append(f"unknown ir_datasets id {did!r}")
            continue
        ds = ir_datasets.load(did)
        for kind in [k for k in kinds if getattr(ds, f"has_{k}")()]:
            found: list = []
            walk(getattr(ds, f"{kind}_handler")(), [], found, set())
            for _chain, obj in found:
                if isinstance(obj, Download):
                    if obj._cache_path:
                        add(obj, did)
                    else:
                        errors.append(f"{did} ({kind}): ir_datasets streams {obj.mirrors} on every use; not mirrorable")
                    continue
                inner: list = []
                walk(obj._streamer, [], inner, set())
                for chain, dl in inner:
                    if isinstance(dl, Download) and dl._cache_path:
                        add(dl, did)
                    elif isinstance(dl, Download) and chain in ([], ["GzipExtract"]):
                        add(dl, did, path=str(obj._path), gunzip=chain == ["GzipExtract"])
                    else:
                        errors.append(f"{did} ({kind}): cannot rebuild ir_datasets' cache {obj._path} ({chain})")
    print(json.dumps({"files": files, "errors": errors}))


def urllib_fetch(url: str, dest, timeout: float = 60) -> None:
    """Download ``url`` to ``dest`` (the default ``fetch`` of :func:`build`)."""
    req = urllib.request.Request(url, headers={"User-Agent": "irrepro-mirror"})
    with urllib.request.urlopen(req, timeout=timeout) as r, open(dest, "wb") as f:
        shutil.copyfileobj(r, f, 1 << 20)


def read_sums(root) -> dict:
    p, out = Path(root) / SUMS, {}
    for n, line in enumerate(p.read_text().splitlines() if p.exists() else [], 1):
        if line.strip():
            md5, sep, rel = line.partition("  ")
            if not sep or len(md5) != 32:
                raise InputError("expected '<md5>  <relative path>'", path=p, line=n)
            out[rel] = md5
    return out


def write_sums(root, sums: dict) -> None:
    tmp = Path(root) / (SUMS + ".part")
    tmp.write_text("".join(f"{sums[k]}  {k}\n" for k in sorted(sums)))
    os.replace(tmp, Path(root) / SUMS)


def _files(root) -> set:
    return {str(p.relative_to(root)) for p in Path(root).rglob("*") if p.is_file()} - {SUMS}


def _accepted() -> dict:
    """``mirror-relative path -> md5s accepted``: artifacts.tsv, ir_datasets' registry and its alternates."""
    return ({f"ir_datasets/{k}": v for k, v in ir_datasets_expected().items()}
            | {f"artifacts/{n}": {a.md5} for n, a in _mirror.ARTIFACTS.items()})


def build(root, config: dict | None = None, *, names=None, irds=None, fetch=urllib_fetch, urls=None,
          log=print) -> Report:
    """Fetch every file ``config`` needs (or the artifact ``names`` and ``[IrdsFile]`` given) into the mirror
    ``root``, md5-verified; update ``MD5SUMS``. ``urls`` maps a mirror-relative path to a URL to use instead of the
    declared one. Raises :class:`MissingDataError` (with ``.report``) if anything was refused."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    if config is not None:
        names, irds = needed(config)
    urls = urls or {}
    accepted = ir_datasets_expected()
    todo = []  # (relative path, urls, accepted md5s, md5 of the download, gunzip)
    for name in names or []:
        if name not in _mirror.ARTIFACTS:
            raise InputError(f"unknown artifact {name!r}; declared artifacts are listed in irrepro/data/artifacts.tsv")
        a = _mirror.ARTIFACTS[name]
        todo.append((f"artifacts/{name}", [a.url], {a.md5}, a.md5, False))
    for f in irds or []:
        ok = set(accepted.get(f.path, ())) | (set() if f.gunzip else {f.md5})
        todo.append((f"ir_datasets/{f.path}", list(f.urls), ok, f.md5, f.gunzip))
    sums = {k: v for k, v in read_sums(root).items() if (root / k).is_file()}
    rep = Report()
    for i, (rel, srcs, ok, dl_md5, gunzip) in enumerate(todo, 1):
        dest = root / rel
        tag = f"[{i}/{len(todo)}] {rel}"
        if dest.is_file():
            got = md5_file(dest)
            if got in ok or (not ok and sums.get(rel) == got):
                sums[rel] = got
                rep.present.append(rel)
                log(f"{tag}: already there ({dest.stat().st_size / 1e6:.1f} MB)")
                continue
            log(f"{tag}: present with md5 {got}, expected {' or '.join(sorted(ok))}: fetching again")
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        errors = []
        for url in [urls[rel]] if rel in urls else srcs:
            try:
                fetch(url, part)
                got = md5_file(part)
                if got != dl_md5 and not (got in ok and not gunzip):
                    errors.append(f"{url}: md5 {got}, expected {dl_md5}")
                    continue
                if gunzip:
                    with gzip.open(part, "rb") as z, open(str(part) + "2", "wb") as out:
                        shutil.copyfileobj(z, out, 1 << 20)
                    os.replace(str(part) + "2", part)
                    got = md5_file(part)
                    if ok and got not in ok:
                        errors.append(f"{url}: gunzipped md5 {got}, expected {' or '.join(sorted(ok))}")
                        continue
                os.replace(part, dest)
                break
            except (OSError, EOFError, ValueError) as e:
                errors.append(f"{url}: {e.__class__.__name__}: {e}")
            finally:
                part.unlink(missing_ok=True)
                Path(str(part) + "2").unlink(missing_ok=True)
        else:  # a wrong copy already there is left for the user to look at, but no longer listed
            sums.pop(rel, None)
            rep.refused.append((rel, "; ".join(errors) or "no URL"))
            log(f"{tag}: REFUSED ({'; '.join(errors)})")
            continue
        sums[rel] = got
        rep.fetched.append(rel)
        rep.nbytes += (size := dest.stat().st_size)
        log(f"{tag}: fetched {size / 1e6:.1f} MB")
    for rel in sorted(_files(root) - set(sums)):  # other files of the mirror: listed when the registries accept them
        if (got := md5_file(root / rel)) in _accepted().get(rel, ()):
            sums[rel] = got
            log(f"{rel}: already there (not needed by this config), md5 verified, listed")
    write_sums(root, sums)
    log(f"{root}: {len(rep.fetched)} fetched ({rep.nbytes / 1e6:.1f} MB), {len(rep.present)} already there, "
        f"{len(rep.refused)} refused")
    if rep.refused:
        err = MissingDataError(f"{len(rep.refused)} file(s) refused: " +
                               "; ".join(f"{rel} ({why})" for rel, why in rep.refused))
        err.report = rep
        raise err
    return rep


def check(root, log=print) -> list:
    """Problems of the mirror ``root`` (empty when it is sound): files of ``MD5SUMS`` missing or with another md5,
    files not listed, declared artifacts or ir_datasets files whose md5 the registries do not accept."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: not a directory")
    sums, problems = read_sums(root), [] if (root / SUMS).is_file() else [f"{SUMS}: missing"]
    on_disk, accepted = _files(root), _accepted()
    problems += [f"{rel}: not listed in {SUMS}" for rel in sorted(on_disk - set(sums))]
    for rel in sorted(sums):
        if rel not in on_disk:
            problems.append(f"{rel}: listed in {SUMS} but missing")
            continue
        got = md5_file(root / rel)
        if got != sums[rel]:
            problems.append(f"{rel}: md5 {got}, {SUMS} says {sums[rel]}")
        ok = accepted.get(rel)
        if ok is not None and got not in ok:
            problems.append(f"{rel}: md5 {got}, the registry expects {' or '.join(sorted(ok))}")
        elif ok is None and rel.startswith("artifacts/"):
            problems.append(f"{rel}: not a declared artifact (irrepro/data/artifacts.tsv)")
    log(f"{root}: {len(sums)} files in {SUMS}, {len(problems)} problem(s)")
    for p in problems:
        log(f"  {p}")
    return problems
