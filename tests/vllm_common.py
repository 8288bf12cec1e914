"""What the vLLM tests share (tests/test_vllm.py, tests/test_vllm_degenerate.py): vLLM's environment, the converted
SmolLM2, 8 vaswani pairs, a server and an ``openai`` labeler in scoring mode, and the label cache's rows. The two
modules are two units of work for pytest-xdist, so that the degenerate server and the real one run side by side."""
import sqlite3
import time
from pathlib import Path

import pandas as pd
import pytest

from irrepro import labels as L

#: the two-grade prompt: each pair is scored by one echoed completion per grade, and vLLM computes the
#: log-probabilities of every position of each (the OpenAI API has no "last tokens only"), so a pair costs about
#: G x its length: binary has 2 grades and 232 characters of instructions where trecdl has 4 and 490 (8 pairs through
#: the server at 2.05 pairs/s with binary, 2026-11-29, AMD EPYC with AVX512)
PROMPT = "binary"
#: vLLM and the in-process labeler compute the same float32 model with different kernels (vLLM's CPU attention,
#: fused RMSNorm and SiLU-and-multiply, its own GEMM blocking; torch's eager ops in-process), so the same sums are
#: added in another order. float32 rounds each of the ~100 sums along a token's path through 30 layers by eps32 =
#: 1.2e-7 relative; on logits of magnitude ~20 that accumulates to ~1e-4 at most in log P(s_r), and measured here
#: max |Δ log P| = 5.4e-5 (12 pairs x 3 prompts, 2026-11-25). A real difference is far larger: bfloat16 weights
#: (eps 7.8e-3) move log P by 1e-2 and more, another token sequence (a missing system prompt, the suffix tokenised
#: with the prompt) by 1e-1 and more, and another pair's document (the shifted comparison in tests/test_vllm.py) by
#: about 1.
LOGP_TOLERANCE = 1e-3
#: on the labels (the softmax over grades): |Δp_r| <= |Δ log P| summed over two grades, times p <= 1
LABEL_TOLERANCE = 2 * LOGP_TOLERANCE
N_QUERIES, PER_QUERY = 4, 2
SMOLLM2_VOCABULARY = 49152


@pytest.fixture(scope="module")
def vllm_python(tmp_path_factory):
    from irrepro.labels.vllm import ensure_vllm

    t0 = time.monotonic()
    python = ensure_vllm()
    print(f"vLLM environment {python.parent.parent} ready in {time.monotonic() - t0:.1f} s")
    return python


@pytest.fixture(scope="module")
def model_dir():
    for module in ("torch", "transformers", "gguf"):
        pytest.importorskip(module)
    from irrepro.labels.backends.smollm2 import converted_smollm2

    return converted_smollm2()


@pytest.fixture(scope="module")
def pairs(irds_home):
    """8 vaswani pairs: 4 queries x (1 judged for it + 1 judged for the next query), texts from ir_datasets: as
    many as the degeneracy check needs to decide (:data:`irrepro.labels.labelling.DEGENERATE_PAIRS`), each pair's label
    through the server costing about as much as the server's start."""
    import ir_datasets

    from irrepro.datasets import collections as coll

    ds = ir_datasets.load("vaswani")
    topics = coll.topics(ds).set_index("query_id").text
    qrels = coll.qrels(ds)
    qids = sorted(qrels.query_id.unique(), key=int)[:N_QUERIES]
    rows = []
    for i, q in enumerate(qids):
        own = qrels[qrels.query_id == q].doc_id.tolist()[:PER_QUERY // 2]
        other = qrels[qrels.query_id == qids[(i + 1) % len(qids)]].doc_id.tolist()
        other = [d for d in other if d not in own][:PER_QUERY - len(own)]
        rows += [(q, d) for d in own + other]
    docs = {d.doc_id: " ".join(d.text.split()) for d in ds.docs_store().get_many_iter({d for _, d in rows})}
    df = pd.DataFrame(rows, columns=["query_id", "doc_id"])
    df["query"] = df.query_id.map(topics)
    df["text"] = df.doc_id.map(docs)
    assert len(df) == N_QUERIES * PER_QUERY and df.text.str.len().min() > 0
    return df


def _serve(python, model, tmp_path, **kw):
    from irrepro.labels.vllm import VLLMServer

    return VLLMServer(python, model, name="smollm2", log_path=tmp_path / "vllm.log", **kw)


def _labeler(url, batch_size=8, **kw):
    return L.OpenAILabeler("smollm2", url, api_key_env=None, mode="score", concurrency=4, batch_size=batch_size, **kw)


def _cache_rows(path) -> list:
    if not Path(path).exists():
        return []
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT labeler, prompt_hash, query_id, doc_id FROM labels").fetchall()
    except sqlite3.OperationalError:  # the table is not there yet
        return []
    finally:
        con.close()
