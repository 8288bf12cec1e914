"""Data provenance and the offline mirror.

Every external artifact is declared once in ``irrepro/data/artifacts.tsv`` with its upstream URL, md5 and licence.
:func:`artifact_path` returns a local, md5-verified copy, taken (in order) from the project's ``resources/``
cache, from an offline mirror, or from the URL. ir_datasets collections are handled by
:func:`ensure_ir_datasets_home`, which seeds an ``IR_DATASETS_HOME`` from the mirror's ``ir_datasets/`` subtree.

The mirror is a directory with ``ir_datasets/`` (laid out like an ``IR_DATASETS_HOME``) and ``artifacts/``, named by the config
key ``mirror`` or else the environment variable ``IRREPRO_MIRROR``. The project never requires it.
"""
from __future__ import annotations

import csv
import os
import shutil
import urllib.request
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from irrepro.core.io import md5sum
from irrepro.errors import InputError, MissingDataError

ENV_VAR = "IRREPRO_MIRROR"


@dataclass(frozen=True)
class Artifact:
    name: str      # path relative to the mirror's artifacts/ directory
    md5: str
    url: str
    licence: str


def _load_registry() -> dict[str, Artifact]:
    text = resources.files("irrepro").joinpath("data/artifacts.tsv").read_text()
    rows = list(csv.DictReader(text.splitlines(), delimiter="\t"))
    return {r["name"]: Artifact(r["name"], r["md5"], r["url"], r["licence"]) for r in rows}


ARTIFACTS: dict[str, Artifact] = _load_registry()


def mirror_root(override: str | os.PathLike | None = None) -> Path | None:
    """The offline mirror directory: ``override`` (config key ``mirror``) if given, else ``$IRREPRO_MIRROR``.
    Returns None if neither is set. A set but missing directory is an error (a typo should not fall back silently)."""
    value = override if override not in (None, "") else os.environ.get(ENV_VAR)
    if not value:
        return None
    p = Path(value).expanduser()
    if not p.is_dir():
        src = "config key 'mirror'" if override else f"${ENV_VAR}"
        raise InputError(f"{src} names {str(value)!r}, which is not a directory")
    return p.resolve()


def artifact_path(name: str, cache_dir="resources/artifacts", mirror=None, allow_download: bool = True) -> Path:
    """Local, md5-verified path of a declared artifact (see module doc for the lookup order)."""
    if name not in ARTIFACTS:
        raise InputError(f"unknown artifact {name!r}; declared artifacts are listed in irrepro/data/artifacts.tsv")
    art = ARTIFACTS[name]
    dest = Path(cache_dir) / name
    if dest.exists() and md5sum(dest) == art.md5:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    root = mirror_root(mirror)
    errors = []
    if root is not None:
        src = root / "artifacts" / name
        if src.exists():
            shutil.copyfile(src, tmp)
            got = md5sum(tmp)
            if got == art.md5:
                os.replace(tmp, dest)
                return dest
            tmp.unlink(missing_ok=True)
            errors.append(f"mirror copy {src} has md5 {got}, expected {art.md5}")
        else:
            errors.append(f"not in mirror {root}/artifacts")
    if allow_download:
        try:
            with urllib.request.urlopen(art.url, timeout=30) as r, open(tmp, "wb") as f:
                shutil.copyfileobj(r, f)
            got = md5sum(tmp)
            if got == art.md5:
                os.replace(tmp, dest)
                return dest
            errors.append(f"download from {art.url} has md5 {got}, expected {art.md5}")
        except OSError as e:
            errors.append(f"download from {art.url} failed ({e.__class__.__name__}: {e})")
        finally:
            tmp.unlink(missing_ok=True)
    raise MissingDataError(
        f"artifact {name!r} is not available: {'; '.join(errors)}.\n"
        f"Provide it in one of two ways: (1) with network access, rerun and it is downloaded from {art.url}; "
        f"(2) offline, set {ENV_VAR} (or the config key 'mirror') to a directory holding artifacts/{name} "
        f"(md5 {art.md5}). Licence: {art.licence}."
    )


def ensure_ir_datasets_home(home="resources/ir_datasets", mirror=None) -> Path:
    """Seed an ``IR_DATASETS_HOME`` from the mirror (files already there are kept) and export it.

    ir_datasets then uses a file already in place without downloading it. Every declared file of the home is
    md5-checked (:func:`irrepro.datasets.integrity.verify_ir_datasets_home`). Returns the home directory.
    """
    home = Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    root = mirror_root(mirror)
    if root is not None and (root / "ir_datasets").is_dir():
        src_root = root / "ir_datasets"
        for dirpath, _dirs, files in os.walk(src_root):
            rel = Path(dirpath).relative_to(src_root)
            for fn in files:
                dst = home / rel / fn
                if not dst.exists():  # copied under a private name and renamed: a parallel job never sees half
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.part")
                    shutil.copyfile(Path(dirpath) / fn, tmp)
                    os.replace(tmp, dst)
    from irrepro.datasets.integrity import verify_ir_datasets_home

    verify_ir_datasets_home(home)  # on arrival and whenever a job reads the cache (memoised: one stat per file)
    import sys
    if "ir_datasets" in sys.modules:  # it resolved its home at import time: a different home now would be ignored
        import ir_datasets
        current = Path(ir_datasets.util.home_path()).resolve()
        if current != home:
            raise RuntimeError(f"ir_datasets was imported with IR_DATASETS_HOME={current}; call "
                               f"ensure_ir_datasets_home({str(home)!r}) before importing ir_datasets")
    os.environ["IR_DATASETS_HOME"] = str(home)
    return home


def ir_datasets_error(dataset_id: str, exc: BaseException) -> MissingDataError:
    """Turn a failure inside ir_datasets' downloader into an error a user can act on: which file is missing (from
    ir_datasets' registry, by the URL it tried), where it belongs, and the two ways to provide it."""
    from irrepro.datasets.integrity import files_for_urls

    home = os.environ.get("IR_DATASETS_HOME", "~/.ir_datasets")
    files = files_for_urls(str(exc))
    if files:
        what = "; ".join(f"{home}/{rel} (from {url}, md5 {md5})" for rel, url, md5 in files[:3])
        need = f"it needs {what}, which is not there and could not be downloaded"
    else:
        need = f"{exc.__class__.__name__}: {str(exc)[:200]}"
    return MissingDataError(
        f"ir_datasets could not provide {dataset_id!r}: {need}. "
        f"Provide it in one of two ways: (1) with network access, rerun and ir_datasets downloads it; "
        f"(2) offline, set {ENV_VAR} (or the config key 'mirror') to a directory whose ir_datasets/ subtree is laid "
        f"out like an IR_DATASETS_HOME holding this file."
    )
