"""Where a model runs: the device a config names (:func:`resolve_device`, :func:`torch_device`) and the batch size
that keeps it busy (:func:`default_batch_size`)."""
from __future__ import annotations


def resolve_device(device: str | None) -> str | None:
    """``"auto"``: ``"cuda"`` when torch sees a GPU (a job given one, e.g. ``--gpus=1`` under SLURM), else ``"cpu"``;
    any other value as it is. The device is not part of a labeler's cache identity (``hf:<model>[@dtype]``)."""
    if device != "auto":
        return device
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def torch_device(torch, device: str):
    """The ``torch.device`` of a config's ``device`` (``auto``: :func:`resolve_device`'s choice)."""
    return torch.device(resolve_device(device))


#: texts per forward pass by device type where the config gives no ``batch_size``: a GPU is kept busy by larger
#: batches (MiniLM ``mean+maxsim`` labels on an NVIDIA H200: 475 pairs/s at 32, 1,646 at 256); a CPU gains nothing
DEFAULT_BATCH = {"cpu": 32, "cuda": 256}


def default_batch_size(device) -> int:
    """:data:`DEFAULT_BATCH` of the torch ``device``'s type (32 for any other: mps)."""
    return DEFAULT_BATCH.get(getattr(device, "type", str(device).split(":")[0]), 32)
