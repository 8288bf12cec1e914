"""A transformers encoder loaded from a local folder (:class:`TransformerEncoder`): batches of texts through the
model (their last hidden states) and the mean pooling of sentence-transformers (L2-normalised). The bi-encoder
labeler (:class:`irrepro.labels.backends.biencoder.BiEncoderLabeler`) is one, and the MiniLM retriever
(:class:`irrepro.retrieval.neural.MiniLM`) encodes with one: a labeler and a system of the same weights, dtype and
batch size compute the same encodings."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

from irrepro.errors import InputError
from irrepro.models.device import default_batch_size, torch_device
from irrepro.models.offline import offline
from irrepro.models.optional import HINTS, require


class TransformerEncoder:
    """The model of ``folder`` (transformers' format: ``config.json``, weights, tokenizer) on ``device`` (``cpu``,
    ``cuda``, ``cuda:<i>``, ``mps`` or ``auto``) in ``dtype``, ``threads`` torch CPU threads. Texts are cut at
    ``max_tokens`` word pieces (default: the folder's ``sentence_bert_config.json`` ``max_seq_length``, else 512) and
    encoded ``batch_size`` at a time (None: :func:`~irrepro.models.device.default_batch_size` of the device).
    ``what`` names the owner in errors. :attr:`tokens` counts the word pieces encoded (padding excluded)."""

    def __init__(self, folder, device: str = "cpu", batch_size: int | None = None, *, max_tokens: int | None = None,
                 threads: int | None = None, dtype: str = "float32", what: str = "encoder"):
        transformers = require("transformers", HINTS["transformers"])
        torch = require("torch", HINTS["torch"])
        if batch_size is not None and int(batch_size) < 1:
            raise InputError(f"{what} batch_size {batch_size!r}: expected a positive integer")
        self._torch = torch
        if threads:
            torch.set_num_threads(int(threads))
        self.device = torch_device(torch, device)
        self.batch_size = default_batch_size(self.device) if batch_size is None else int(batch_size)
        torch_dtype = getattr(torch, str(dtype), None)
        if not isinstance(torch_dtype, torch.dtype):
            raise InputError(f"{what} dtype {dtype!r}: expected float32, bfloat16 or float16")
        self.folder = folder = Path(folder)
        sbert = folder / "sentence_bert_config.json"
        #: the model's own limit of word pieces per text
        self.model_max_tokens = int(json.loads(sbert.read_text()).get("max_seq_length", 512) if sbert.is_file()
                                    else 512)
        self.max_tokens = int(self.model_max_tokens if max_tokens is None else max_tokens)
        with offline():
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
            self.model = transformers.AutoModel.from_pretrained(str(folder), dtype=torch_dtype)
        self.model.to(self.device).eval()
        self.tokens = 0  # word pieces encoded (padding excluded): the FLOP count of docs/benchmark.md

    def batches(self, texts: Sequence[str]):
        """``(start, last hidden states (b, L, dim), attention mask (b, L))`` of ``batch_size`` texts at a time,
        ``texts[start:start + b]``."""
        torch = self._torch
        for b in range(0, len(texts), self.batch_size):
            enc = self.tokenizer(list(texts[b:b + self.batch_size]), padding=True, truncation=True,
                                 max_length=self.max_tokens, return_tensors="pt").to(self.device)
            with torch.inference_mode():
                h = self.model(**enc).last_hidden_state
            self.tokens += int(enc["attention_mask"].sum())
            yield b, h, enc["attention_mask"]

    def pooled(self, h, mask) -> np.ndarray:
        """L2-normalised mean over the unmasked positions, float64 (n, dim)."""
        torch = self._torch
        m = mask.unsqueeze(-1).to(h.dtype)
        e = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(e.float(), dim=-1).cpu().numpy().astype(np.float64)
