"""Loading and checking models, below both :mod:`irrepro.labels` and :mod:`irrepro.retrieval` (which import it; it
imports neither):

- :mod:`~irrepro.models.optional` — optional packages: :func:`~irrepro.models.optional.require` and how to install
  each (``HINTS``, ``MODEL_HINTS``);
- :mod:`~irrepro.models.weights` — file hashes against pins, an installed distribution's RECORD and a folder's
  SHA256SUMS manifest; one identity hash for a set of files;
- :mod:`~irrepro.models.packaged` — the models shipped in registry packages (SmolLM2's GGUF, all-MiniLM-L6-v2) and
  the model cache;
- :mod:`~irrepro.models.offline` — loading from local files only;
- :mod:`~irrepro.models.device` — the device a config names and the batch size that keeps it busy;
- :mod:`~irrepro.models.transformer` — a transformers encoder's batches of hidden states and their mean pooling,
  shared by the bi-encoder labeler and the MiniLM retriever.
"""
