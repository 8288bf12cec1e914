"""Label assets that are damaged never turn into numbers: model files checked against recorded and published
hashes, non-finite log-probabilities refused, a damaged label cache recovered, cached rows checked on read."""
import json
import os
import shutil
import types

import numpy as np
import pytest

from irrepro import labels as L
from irrepro.errors import InputError
from irrepro.labels import smollm2 as S

from conftest import smollm2_labeler
from test_labels import FakeServer, _chat_response, make_pairs


# ------------------------------------------------------------------------------------------------ model files
def _folder(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    (d / "model.safetensors").write_bytes(os.urandom(64 * 1024))
    (d / "config.json").write_text("{}")
    S.write_manifest(d)
    return d


def test_manifest_names_a_damaged_truncated_or_missing_file(tmp_path):
    d = _folder(tmp_path)
    assert S.check_manifest(d) is None
    f = d / "model.safetensors"
    good = f.read_bytes()
    f.write_bytes(good[:16384] + os.urandom(4096) + good[20480:])  # 4 KB overwritten mid-file
    assert f"{f} does not match its sha256" in S.check_manifest(d)
    f.write_bytes(good[: len(good) // 2])  # truncated
    assert f"{f} does not match its sha256" in S.check_manifest(d)
    f.unlink()
    assert f"{f} is missing" in S.check_manifest(d)
    f.write_bytes(good)
    assert S.check_manifest(d) is None
    (d / S.MANIFEST).unlink()
    assert "SHA256SUMS is missing" in S.check_manifest(d)


def test_packaged_file_checked_against_the_wheels_record(tmp_path, monkeypatch):
    import base64
    import hashlib
    import importlib.metadata

    f = tmp_path / "w.gguf"
    f.write_bytes(b"weights")
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"weights").digest()).rstrip(b"=").decode()
    entry = types.SimpleNamespace(hash=types.SimpleNamespace(mode="sha256", value=digest), locate=lambda: f)
    monkeypatch.setattr(importlib.metadata, "files", lambda name: [entry])
    S.verify_packaged(f)
    f.write_bytes(b"weightz")
    with pytest.raises(InputError, match=r"w\.gguf: does not match the sha256 published .*--force-reinstall"):
        S.verify_packaged(f)


def test_damaged_converted_model_is_converted_again(tmp_path, caplog):
    pytest.importorskip("transformers")
    try:
        S.smollm2_gguf_path()
    except L.MissingPackageError as e:
        pytest.skip(str(e))
    src = S.converted_smollm2()
    dst = tmp_path / "models" / src.name
    shutil.copytree(src, dst)
    f = dst / "model.safetensors"
    with open(f, "r+b") as h:  # 4 KB overwritten in the middle
        h.seek(f.stat().st_size // 2)
        h.write(os.urandom(4096))
    assert S.check_manifest(dst) is not None
    with caplog.at_level("WARNING", logger="irrepro.labels"):
        assert S.converted_smollm2(tmp_path / "models") == dst
    assert f"{f} does not match its sha256" in caplog.text and "converting again" in caplog.text
    assert S.check_manifest(dst) is None
    assert (dst / "model.safetensors").read_bytes() == (src / "model.safetensors").read_bytes()


# ------------------------------------------------------------------------------------ non-finite log-probabilities
@pytest.mark.parametrize("row", [[np.nan, -1.0], [np.inf, -1.0], [-np.inf, -np.inf]])
def test_non_finite_log_scores_are_an_error_naming_labeler_pairs_and_count(row):
    x = np.array([[-0.1, -2.0], row, row])
    with pytest.raises(L.LabelerError, match=r"labeler 'lab': 2 of 3 pair\(s\) got non-finite .*\('q2', 'd2'\)"):
        L.base.check_log_scores("lab", x, ["q1", "q2", "q3"], ["d1", "d2", "d3"])
    ok = np.array([[-0.1, -np.inf]])  # -inf alone is probability 0
    assert L.base.check_log_scores("lab", ok, ["q"], ["d"]) is not None


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_openai_non_finite_logprob_is_an_error(bad, monkeypatch):
    srv = FakeServer(lambda path, body: _chat_response([[("1", bad), ("0", -2.0)]]))
    try:
        lab = L.OpenAILabeler("tiny", srv.url, api_key_env=None, top_logprobs=2, retry_delay=0.01)
        with pytest.raises(L.LabelerError, match=r"labeler 'openai:tiny': 3 of 3 pair\(s\)"):
            L.label_pairs(lab, "binary", make_pairs(3), None, progress=False)
    finally:
        srv.close()


def test_smollm2_nan_weights_are_an_error_not_uniform_labels():
    torch = pytest.importorskip("torch")
    lab = smollm2_labeler()
    w = lab.model.model.norm.weight
    keep = w.detach().clone()
    try:
        with torch.no_grad():
            w[:] = float("nan")
        with pytest.raises(L.LabelerError, match=r"labeler 'smollm2-135m-instruct-q4_1': 2 of 2 pair\(s\)"):
            L.label_pairs(lab, "binary", make_pairs(2), None, progress=False)
    finally:
        with torch.no_grad():
            w.copy_(keep)


@pytest.mark.parametrize("grade", ["nan", "inf"])
def test_file_labeler_refuses_non_finite_grades(tmp_path, grade):
    f = tmp_path / "l.qrels"
    f.write_text(f"1 0 d1 {grade}\n")
    with pytest.raises(InputError, match=r"l\.qrels:1: "):
        L.FileLabeler(f)
