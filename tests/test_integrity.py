"""Every input a person could edit is md5-checked: the ir_datasets cache on arrival and whenever a job reads it, the
artifact cache before any job runs."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from irrepro.datasets.integrity import Md5Memo, verify_artifact_cache, verify_ir_datasets_home
from irrepro.errors import MissingDataError

REPO = Path(__file__).resolve().parents[1]


def _flip_one_byte(path):
    b = bytearray(path.read_bytes())
    b[len(b) // 2] ^= 0x01
    path.write_bytes(bytes(b))


def test_ir_datasets_home_from_the_mirror_verifies(mirror, tmp_path):
    home = tmp_path / "irds"
    shutil.copytree(mirror / "ir_datasets" / "msmarco-passage", home / "msmarco-passage")
    shutil.copytree(mirror / "ir_datasets" / "vaswani", home / "vaswani")
    assert verify_ir_datasets_home(home) >= 3
    qrels = home / "msmarco-passage" / "trec-dl-2019" / "qrels"
    text = qrels.read_text().splitlines()
    q, it, d, r = text[0].split()
    text[0] = f"{q} {it} {d} {int(r) + 1}"  # one grade changed
    qrels.write_text("\n".join(text) + "\n")
    with pytest.raises(MissingDataError, match=r"trec-dl-2019/qrels: md5 .*, expected"):
        verify_ir_datasets_home(home)


def test_corrupt_mirror_file_stops_the_seeding(mirror, tmp_path):
    from irrepro.datasets.mirror import ensure_ir_datasets_home

    bad = tmp_path / "mirror"
    shutil.copytree(mirror / "ir_datasets" / "vaswani", bad / "ir_datasets" / "vaswani")
    _flip_one_byte(bad / "ir_datasets" / "vaswani" / "npl.tar.gz")
    code = ("from irrepro.datasets.mirror import ensure_ir_datasets_home\n"
            f"ensure_ir_datasets_home({str(tmp_path / 'home')!r}, {str(bad)!r})\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode != 0 and "npl.tar.gz: md5" in p.stderr
    assert ensure_ir_datasets_home  # imported: the function exists


def test_memo_rehashes_only_changed_files(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("x")
    m = Md5Memo(tmp_path)
    first = m.md5("a.txt")
    m.save()
    f.write_text("y")
    assert Md5Memo(tmp_path).md5("a.txt") != first


def test_edited_cached_artifact_stops_the_run_before_any_job(mirror, tmp_path):
    name = "urbano/sigir2019-statistical/adhoc8_ap.csv"
    cache = tmp_path / "resources" / "artifacts"
    (cache / name).parent.mkdir(parents=True)
    shutil.copyfile(mirror / "artifacts" / name, cache / name)
    assert verify_artifact_cache(cache) == 1
    lines = (cache / name).read_text().splitlines()
    lines[1] = lines[1].replace("0.", "0.9", 1)  # one value edited
    (cache / name).write_text("\n".join(lines) + "\n")
    p = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
                        "--configfile", str(REPO / "config" / "test.yaml")], capture_output=True, text=True)
    assert p.returncode != 0
    assert "adhoc8_ap.csv: md5" in p.stdout + p.stderr and "expected" in p.stdout + p.stderr
    assert not (tmp_path / "results").exists()


def test_missing_collection_message_names_the_missing_file(monkeypatch):
    from irrepro.datasets.mirror import ir_datasets_error

    monkeypatch.setenv("IR_DATASETS_HOME", "/data/irds")
    exc = RuntimeError("('All download sources failed', [(RequestsDownload('http://ir.dcs.gla.ac.uk/resources/"
                       "test_collections/npl/npl.tar.gz', tries=None), ConnectionError('no network'))])")
    msg = str(ir_datasets_error("vaswani", exc))
    assert "it needs /data/irds/vaswani/npl.tar.gz (from http://ir.dcs.gla.ac.uk" in msg
    assert "IRREPRO_MIRROR" in msg and len(msg) < 600
