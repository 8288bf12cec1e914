"""A collection's document encodings by one model (:class:`DocIndex`), saved with the sha256 of every array file
and checked at every load (:class:`DamagedIndex`), and their computation (:func:`encode_docs`)."""
from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from irrepro.errors import InputError
from irrepro.models.weights import file_sha256
from irrepro.retrieval.neural.encoders import Encoder, _dur, _Progress

log = logging.getLogger("irrepro.retrieval")

#: the encodings' format and the encoders' arithmetic: part of every index's key (irrepro.plan.neural_index_key)
#: 3: meta.json records the sha256 of every array file, checked at every load (2 did not)
INDEX_FORMAT = 3


class DamagedIndex(InputError):
    """A neural document index whose files are not what its ``meta.json`` records (or that has none)."""


@dataclass
class DocIndex:
    """Every document's encoding by one model: ``vectors`` ((n, dim) float ndarray, or a float32 csr matrix
    (n, vocab) for a sparse model), row i for ``doc_ids[i]``; ``identity`` and ``settings`` of the model that made it
    (:attr:`Encoder.identity`), so a cached index is used with that model only."""

    model: str
    kind: str
    doc_ids: np.ndarray
    vectors: object
    identity: dict
    settings: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.doc_ids)

    @property
    def key(self) -> str:
        blob = json.dumps({"sha256": self.identity["sha256"], "settings": self.settings}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def meta(self, files: Mapping[str, str] | None = None) -> dict:
        return {"format": INDEX_FORMAT, "model": self.model, "kind": self.kind, "n_docs": len(self),
                "dim": int(self.vectors.shape[1]), "identity": self.identity, "settings": self.settings,
                "key": self.key, "files": dict(files or {})}

    def save(self, folder) -> Path:
        """Write ``doc_ids.npy``, the vectors (``vectors.npy``; sparse: ``data.npy``, ``indices.npy``,
        ``indptr.npy``) and ``meta.json`` (written last: an index without it is incomplete, and it records the
        sha256 of every array file, checked by :meth:`load`) into ``folder``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "meta.json").unlink(missing_ok=True)
        arrays = {"doc_ids.npy": np.asarray(self.doc_ids, dtype=str)}
        if self.kind == "sparse":
            v = self.vectors.tocsr()
            arrays.update({"data.npy": v.data, "indices.npy": v.indices, "indptr.npy": v.indptr})
        else:
            arrays["vectors.npy"] = np.ascontiguousarray(self.vectors)
        for name, a in arrays.items():
            np.save(folder / name, a, allow_pickle=False)
        files = {name: file_sha256(folder / name) for name in arrays}
        (folder / "meta.json").write_text(json.dumps(self.meta(files), indent=1, sort_keys=True) + "\n")
        return folder

    @classmethod
    def load(cls, folder, model: Encoder | None = None, *, set_aside: bool = False) -> "DocIndex":
        """Read an index written by :meth:`save`; with ``model``, an index made by another model (weights or
        settings) is refused. A damaged index (no or another format's ``meta.json``, an array file missing or not
        matching the sha256 it records) raises :class:`DamagedIndex`; with ``set_aside`` its folder is first renamed
        ``<folder>.damaged-<pid>-<time>`` (kept for a look, never read again), so that the workflow finds the
        index missing and encodes the documents again at its next run."""
        try:
            return cls._load(Path(folder), model)
        except DamagedIndex as e:
            if not set_aside or not Path(folder).is_dir():
                raise DamagedIndex(f"{e}; delete the folder to encode the documents again") from e
            aside = Path(folder).with_name(f"{Path(folder).name}.damaged-{os.getpid()}-{int(time.time())}")
            os.rename(folder, aside)
            raise DamagedIndex(f"{e}; the index was moved aside to {aside}: the next run encodes the documents "
                               "again") from e

    @classmethod
    def _load(cls, folder: Path, model: Encoder | None) -> "DocIndex":
        import scipy.sparse as sp

        meta_path = folder / "meta.json"
        if not meta_path.is_file():
            raise DamagedIndex("no meta.json: not a neural document index, or an incomplete one", path=folder)
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != INDEX_FORMAT:
            raise DamagedIndex(f"index format {meta.get('format')!r}, expected {INDEX_FORMAT}", path=meta_path)
        names = ["doc_ids.npy"] + (["data.npy", "indices.npy", "indptr.npy"] if meta["kind"] == "sparse"
                                   else ["vectors.npy"])
        recorded = meta.get("files") or {}
        for name in names:
            f = folder / name
            if name not in recorded:
                raise DamagedIndex(f"meta.json records no sha256 of {name}: an incomplete index", path=meta_path)
            if not f.is_file():
                raise DamagedIndex("missing: a damaged index", path=f)
            if file_sha256(f) != recorded[name]:
                raise DamagedIndex(f"does not match the sha256 meta.json records for it ({recorded[name][:12]}…): "
                                   "a damaged or edited index", path=f)

        def array(name):
            try:
                return np.load(folder / name, allow_pickle=False)
            except (ValueError, OSError, EOFError) as e:  # cannot happen to a file matching its sha256, but say so
                raise InputError(f"unreadable: {e}", path=folder / name) from e
        ids = array("doc_ids.npy")
        if meta["kind"] == "sparse":
            vec = sp.csr_matrix((array("data.npy"), array("indices.npy"), array("indptr.npy")),
                                shape=(meta["n_docs"], meta["dim"]))
        else:
            vec = array("vectors.npy")
        idx = cls(meta["model"], meta["kind"], ids, vec, meta["identity"], meta.get("settings", {}))
        if len(ids) != meta["n_docs"] or vec.shape != (meta["n_docs"], meta["dim"]):
            raise InputError(f"{len(ids)} doc ids, vectors {vec.shape}; meta.json says {meta['n_docs']} x "
                             f"{meta['dim']}: a damaged index", path=folder)
        if model is not None:
            _check_index(idx, model)
        return idx


def _check_index(index: DocIndex, model: Encoder) -> None:
    if index.identity.get("sha256") != model.identity["sha256"] or index.settings != model.settings:
        raise InputError(f"document index of {index.model} (weights {index.identity.get('sha256', '?')[:12]}, "
                         f"settings {index.settings}) used with model {model.name} (weights "
                         f"{model.identity['sha256'][:12]}, settings {model.settings}): encode the documents "
                         "again with this model")


def encode_docs(model: Encoder, docs: Iterable[Mapping[str, str]], max_docs: int | None = None) -> DocIndex:
    """Encode ``{'docno', 'text'}`` documents with ``model`` (logging progress with rate and ETA), the first
    ``max_docs`` only where given; a docno given twice is an error."""
    docs = list(docs if max_docs is None else itertools.islice(docs, int(max_docs)))
    ids = [str(d["docno"]) for d in docs]
    if len(set(ids)) != len(ids):
        from collections import Counter
        dup = sorted(i for i, n in Counter(ids).items() if n > 1)[:5]
        raise InputError(f"document ids given more than once: {dup}")
    t0 = time.monotonic()
    vec = model.encode_docs([d["text"] for d in docs], _Progress(f"encoding documents ({model.name})", len(docs)))
    log.info("encoded %d documents with %s in %s", len(docs), model.name, _dur(time.monotonic() - t0))
    return DocIndex(model.name, model.kind, np.asarray(ids, dtype=str), vec, dict(model.identity),
                    dict(model.settings))
