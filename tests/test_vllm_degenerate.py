"""A degenerate vLLM server (tests/vllm_common.py has what it shares with tests/test_vllm.py): a module of its own so
that it runs beside the real server's tests on another pytest-xdist worker."""
import numpy as np
import pytest

from irrepro import labels as L
from irrepro.labels.base import LabelerError

from vllm_common import (  # noqa: F401 (fixtures)
    PROMPT, SMOLLM2_VOCABULARY, _cache_rows, _labeler, _serve, model_dir, pairs, vllm_python)

pytestmark = pytest.mark.slow


def test_vllm_degenerate_server_is_refused(vllm_python, model_dir, pairs, tmp_path):
    """The converted folder as the project wrote it before the tied embedding was saved under both names: vLLM
    loads model.embed_tokens.weight, finds it absent, keeps an uninitialised embedding and answers every prompt with
    HTTP 200 and the uniform distribution. label_pairs must refuse it and cache nothing."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    bad = tmp_path / "no-embedding"
    bad.mkdir()
    for f in model_dir.iterdir():
        if f.name not in ("model.safetensors", "SHA256SUMS"):
            (bad / f.name).symlink_to(f)
    with safe_open(str(model_dir / "model.safetensors"), "pt") as f:
        save_file({k: f.get_tensor(k) for k in f.keys() if k != "model.embed_tokens.weight"},
                  str(bad / "model.safetensors"), metadata={"format": "pt"})
    with _serve(vllm_python, bad, tmp_path) as srv:
        lab = _labeler(srv.base_url)
        few = pairs  # DEGENERATE_PAIRS of them: enough to decide
        logp = lab.log_scores(PROMPT, few["query"].tolist()[:3], few["text"].tolist()[:3])
        # what the engine answers: log(1/vocabulary) for every grade of every pair
        np.testing.assert_allclose(logp, -np.log(SMOLLM2_VOCABULARY), atol=1e-3)
        cache = tmp_path / "c.sqlite"
        with pytest.raises(LabelerError, match="do not depend on its input"):
            L.label_pairs(lab, PROMPT, few, cache, progress=False)
        assert _cache_rows(cache) == []  # not one of its labels is served later
        # too few pairs to judge: a two-pair run is labelled (and cached) as it comes
        out = L.label_pairs(lab, PROMPT, pairs.iloc[:2], cache, progress=False)
        assert len(out) == 2 and len(_cache_rows(cache)) == 2
    assert srv.proc.poll() is not None  # stopped
