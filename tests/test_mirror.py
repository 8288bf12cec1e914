"""The offline mirror: artifacts are md5-verified; no network and no mirror gives an actionable error."""

import pytest

from irrepro.datasets import mirror as m
from irrepro.errors import InputError, MissingDataError

NAME = "urbano/sigir2019-statistical/adhoc8_ap.csv"


def test_registry_declares_url_md5_licence():
    assert len(m.ARTIFACTS) > 50
    for a in m.ARTIFACTS.values():
        assert a.url.startswith("https://") and len(a.md5) == 32 and a.licence


def test_artifact_from_mirror_is_verified(tmp_path, mirror):
    p = m.artifact_path(NAME, cache_dir=tmp_path, mirror=mirror, allow_download=False)
    assert m.md5sum(p) == m.ARTIFACTS[NAME].md5
    # a corrupted cached copy is replaced by a verified one
    p.write_text("corrupt")
    p2 = m.artifact_path(NAME, cache_dir=tmp_path, mirror=mirror, allow_download=False)
    assert m.md5sum(p2) == m.ARTIFACTS[NAME].md5


def test_bad_mirror_copy_is_rejected(tmp_path):
    fake = tmp_path / "mirror" / "artifacts" / NAME
    fake.parent.mkdir(parents=True)
    fake.write_text("not the real file")
    with pytest.raises(MissingDataError, match="has md5"):
        m.artifact_path(NAME, cache_dir=tmp_path / "cache", mirror=tmp_path / "mirror", allow_download=False)


def test_missing_everything_names_the_file_and_both_remedies(tmp_path, monkeypatch):
    monkeypatch.delenv("IRREPRO_MIRROR", raising=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(MissingDataError) as e:
        m.artifact_path(NAME, cache_dir=tmp_path / "c", mirror=empty, allow_download=False)
    msg = str(e.value)
    assert NAME in msg and "IRREPRO_MIRROR" in msg and m.ARTIFACTS[NAME].url in msg


def test_unknown_artifact_and_bad_mirror_dir(tmp_path):
    with pytest.raises(InputError, match="unknown artifact"):
        m.artifact_path("nope.csv", cache_dir=tmp_path)
    with pytest.raises(InputError, match="not a directory"):
        m.mirror_root(str(tmp_path / "missing"))


def test_mirror_root_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("IRREPRO_MIRROR", str(tmp_path))
    assert m.mirror_root() == tmp_path.resolve()
    monkeypatch.delenv("IRREPRO_MIRROR")
    assert m.mirror_root() is None


def test_ir_datasets_from_mirror(irds_home):
    """Integration (ir_datasets style): counts and first/last records of the default collections, offline."""
    import ir_datasets

    from irrepro.datasets import collections as coll

    v = ir_datasets.load("vaswani")
    t, q = coll.topics(v), coll.qrels(v)
    assert (len(t), len(q), v.docs_count()) == (93, 2083, 11429)
    assert t.query_id.iloc[0] == "1" and t.text.iloc[0].startswith("MEASUREMENT OF DIELECTRIC CONSTANT")
    assert t.query_id.iloc[-1] == "93"
    c = ir_datasets.load("cranfield")
    assert (len(coll.topics(c)), len(coll.qrels(c)), c.docs_count()) == (225, 1837, 1400)
    first = next(iter(coll.docs_iter(c)))
    assert first["docno"] == "1" and "experimental investigation" in first["text"]
