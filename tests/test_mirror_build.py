"""``irrepro mirror build`` / ``check``, offline: a local HTTP server on 127.0.0.1 serves the declared files."""
from __future__ import annotations

import functools
import gzip
import hashlib
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from irrepro import cli
from irrepro.datasets import mirror as m
from irrepro.datasets import mirrorbuild as mb
from irrepro.errors import MissingDataError
from irrepro.schema import validate_config

REPO = Path(__file__).resolve().parents[1]
GOOD, BAD, THERE = b"good file\n", b"tampered\n", b"already in the mirror\n"


def _md5(b: bytes) -> str:
    return hashlib.md5(b).hexdigest()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    """``(base URL, served dir, list of requested paths)``; the server stops at the end of the test."""
    served = tmp_path / "served"
    served.mkdir()
    requests: list = []

    class Handler(_Quiet):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(served)))
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served, requests
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join(5)


@pytest.fixture
def declared(server, monkeypatch):
    """Three declared artifacts on the local server: good, served with the wrong bytes, already in the mirror."""
    base, served, _ = server
    (served / "good.txt").write_bytes(GOOD)
    (served / "bad.txt").write_bytes(BAD)           # declared md5 is that of GOOD: must be refused
    (served / "there.txt").write_bytes(THERE)
    for name, body, md5 in [("t/good.txt", GOOD, _md5(GOOD)), ("t/bad.txt", BAD, _md5(GOOD)),
                            ("t/there.txt", THERE, _md5(THERE))]:
        fn = name.split("/")[1]
        monkeypatch.setitem(m.ARTIFACTS, name, m.Artifact(name, md5, f"{base}/{fn}", "test"))
    return base, served


def test_build_fetches_refuses_and_skips(tmp_path, declared, server):
    base, served, requests = server
    root = tmp_path / "mirror"
    (root / "artifacts" / "t").mkdir(parents=True)
    (root / "artifacts" / "t" / "there.txt").write_bytes(THERE)
    (served / "q.tsv.gz").write_bytes(gzip.compress(b"1\tquery\n", mtime=0))
    gz_md5 = _md5((served / "q.tsv.gz").read_bytes())
    (served / "qrels").write_bytes(b"1 0 d1 1\n")
    irds = [mb.IrdsFile("top/qrels", (f"{base}/missing", f"{base}/qrels"), _md5(b"1 0 d1 1\n")),  # 2nd URL works
            mb.IrdsFile("top/sub/queries.tsv", (f"{base}/q.tsv.gz",), gz_md5, gunzip=True)]
    lines: list = []
    with pytest.raises(MissingDataError, match="t/bad.txt") as e:
        mb.build(root, names=["t/good.txt", "t/bad.txt", "t/there.txt"], irds=irds, log=lines.append)
    rep = e.value.report
    assert rep.fetched == ["artifacts/t/good.txt", "ir_datasets/top/qrels", "ir_datasets/top/sub/queries.tsv"]
    assert rep.present == ["artifacts/t/there.txt"]
    assert [r for r, _ in rep.refused] == ["artifacts/t/bad.txt"] and _md5(BAD) in rep.refused[0][1]
    assert "/there.txt" not in requests                   # already there: not downloaded again
    assert not (root / "artifacts" / "t" / "bad.txt").exists()
    assert not list(root.rglob("*.part*"))
    assert (root / "ir_datasets" / "top" / "sub" / "queries.tsv").read_bytes() == b"1\tquery\n"
    assert any(line.startswith("[1/5] artifacts/t/good.txt: fetched") for line in lines)
    assert "3 fetched" in lines[-1] and "1 already there" in lines[-1] and "1 refused" in lines[-1]
    sums = (root / "MD5SUMS").read_text().splitlines()
    assert sums == sorted(sums, key=lambda s: s.split("  ", 1)[1]) and len(sums) == 4
    assert f"{_md5(GOOD)}  artifacts/t/good.txt" in sums
    assert mb.check(root, log=lambda s: None) == []
    # a second run fetches nothing that is there
    n = len(requests)
    rep2 = mb.build(root, names=["t/good.txt", "t/there.txt"], irds=irds[1:], log=lambda s: None)
    assert rep2.fetched == [] and len(rep2.present) == 3 and len(requests) == n


def test_cli_build_exits_2_on_a_refused_file(tmp_path, declared, monkeypatch, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"version": "t", "imports": {
        "a": {"type": "trec_eval", "artifact": "t/good.txt"},
        "b": {"type": "matrix", "matrices": [{"measure": "AP", "artifact": "t/bad.txt"}]}}}))
    root = tmp_path / "mirror"
    assert cli.main(["mirror", "build", str(root), "--configfile", str(config)]) == 2
    err = capsys.readouterr()
    assert "t/bad.txt" in err.err and "REFUSED" in err.out
    assert (root / "artifacts" / "t" / "good.txt").read_bytes() == GOOD
    assert not (root / "artifacts" / "t" / "bad.txt").exists()
    assert cli.main(["mirror", "check", str(root)]) == 0


def test_check_finds_a_flipped_byte_and_missing_files(tmp_path, declared):
    root = tmp_path / "mirror"
    mb.build(root, names=["t/good.txt", "t/there.txt"], log=lambda s: None)
    assert mb.check(root, log=lambda s: None) == []
    p = root / "artifacts" / "t" / "good.txt"
    b = bytearray(p.read_bytes())
    b[0] ^= 1
    p.write_bytes(bytes(b))
    (root / "artifacts" / "t" / "there.txt").unlink()
    (root / "stray.txt").write_text("x")
    problems = mb.check(root, log=lambda s: None)
    assert any(s.startswith("artifacts/t/good.txt: md5") and "MD5SUMS says" in s for s in problems)
    assert any("the registry expects" in s for s in problems)
    assert "artifacts/t/there.txt: listed in MD5SUMS but missing" in problems
    assert "stray.txt: not listed in MD5SUMS" in problems
    assert cli.main(["mirror", "check", str(root)]) == 2


def test_urls_override_the_declared_ones(tmp_path, declared):
    base, _ = declared
    root = tmp_path / "mirror"
    (root / "artifacts" / "t").mkdir(parents=True)
    (root / "artifacts" / "t" / "there.txt").write_bytes(THERE)   # not asked for, but declared: listed too
    rep = mb.build(root, names=["t/bad.txt"], urls={"artifacts/t/bad.txt": f"{base}/good.txt"}, log=lambda s: None)
    assert rep.fetched == ["artifacts/t/bad.txt"] and (root / "artifacts/t/bad.txt").read_bytes() == GOOD
    assert set(mb.read_sums(root)) == {"artifacts/t/bad.txt", "artifacts/t/there.txt"}


def test_needed_for_the_test_config():
    config = validate_config(yaml.safe_load((REPO / "config" / "test.yaml").read_text()), REPO / "workflow" / "schemas")
    arts, irds = mb.needed(config)
    assert arts == [
        "trec-dl-llm-labels/dl2019_document.jsonl.gz",
        "trec-dl-llm-labels/dl2019_test_4prompts_flant5large.txt",
        "trec-dl-llm-labels/dl2019_test_4prompts_llama70b.txt",
        "trec-dl-pertopic/all.pass.dl2019.treceval.gz",
        "trec-web-2012-runs/ql-results-catb.txt",
        "trec-web-2012-runs/rm-results-catb.txt",
        "urbano/sigir2018-simulation/web2012_err20.csv",
        "urbano/sigir2019-statistical/adhoc8_ap.csv",
    ]
    assert [(f.path, f.gunzip) for f in irds] == [
        ("clueweb09/trec-web-2012/qrels.all", False),
        ("clueweb09/trec-web-2012/queries.xml", False),
        ("clueweb12/trec-web-2014/qrels.all", False),
        ("clueweb12/trec-web-2014/queries.xml", False),
        ("msmarco-passage/trec-dl-2019/qrels", False),
        ("msmarco-passage/trec-dl-2019/queries.tsv", True),   # ir_datasets' cache of the gzipped download
        ("vaswani/npl.tar.gz", False),
    ]
    assert all(f.urls and len(f.md5) == 32 for f in irds)
    # dl19-pool takes its documents from an artifact: msmarco's 1 GB collection is not needed
    assert not any("collection" in f.path for f in irds)


def test_undeclared_artifact_in_config_is_an_input_error():
    from irrepro.errors import InputError

    with pytest.raises(InputError, match="not a declared artifact"):
        mb.needed({"imports": {"x": {"artifact": "nope.csv"}}})


def test_real_mirror_passes_check_and_holds_the_test_config(mirror):
    REAL = Path(mirror)
    if not (REAL / "MD5SUMS").is_file():
        pytest.skip("the offline mirror has no MD5SUMS")
    size = sum(p.stat().st_size for p in REAL.rglob("*") if p.is_file())
    if size > 2e9:
        pytest.skip(f"{REAL} holds {size / 1e9:.1f} GB; not hashing it in a test")
    assert mb.check(REAL, log=lambda s: None) == []
    config = validate_config(yaml.safe_load((REPO / "config" / "test.yaml").read_text()), REPO / "workflow" / "schemas")
    arts, irds = mb.needed(config)
    listed = set(mb.read_sums(REAL))
    assert {f"artifacts/{a}" for a in arts} | {f"ir_datasets/{f.path}" for f in irds} <= listed
