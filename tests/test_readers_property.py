"""Property tests of every reader (hypothesis): valid files, then mutated ones. A reader either parses a file
faithfully (a blank line, CRLF line ends, a byte-order mark or compression change nothing) or raises InputError
naming the file and the line: never a silent change, never a bare exception."""
import bz2
import gzip
import lzma

import pandas as pd
import zstandard
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irrepro.core.trec import read_matrix_csv, read_qrels, read_run, read_trec_eval_q
from irrepro.errors import InputError

ids = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def qrels_lines(draw):
    pairs = draw(st.lists(st.tuples(ids, ids), min_size=1, max_size=12, unique=True))
    return [f"{q} 0 {d} {draw(st.integers(-1, 4))}" for q, d in pairs]


@st.composite
def run_lines(draw):
    pairs = draw(st.lists(st.tuples(ids, ids), min_size=1, max_size=12, unique=True))
    return [f"{q} Q0 {d} {i + 1} {draw(st.floats(-50, 50, allow_nan=False)):.4f} tag" for i, (q, d) in
            enumerate(pairs)]


@st.composite
def trec_eval_lines(draw):
    topics = draw(st.lists(ids.filter(lambda t: t != "all"), min_size=1, max_size=8, unique=True))
    return [f"map {t} {draw(st.floats(0, 1)):.4f}" for t in topics]


@st.composite
def matrix_lines(draw):
    n_sys = draw(st.integers(1, 4))
    topics = draw(st.lists(ids, min_size=1, max_size=8, unique=True))
    rows = ["topic," + ",".join(f"s{i}" for i in range(n_sys))]
    rows += [t + "," + ",".join(f"{draw(st.floats(0, 1)):.4f}" for _ in range(n_sys)) for t in topics]
    return rows


READERS = {
    "qrels": (qrels_lines(), lambda p: read_qrels(p)),
    "run": (run_lines(), lambda p: read_run(p)),
    "trec_eval": (trec_eval_lines(), lambda p: read_trec_eval_q(p, "c")),
    "matrix": (matrix_lines(), lambda p: read_matrix_csv(p, "c", "AP")),
}


def _write(tmp_path, lines, *, crlf=False, bom=False, name="f.txt", variant="plain"):
    (tmp_path / variant).mkdir(exist_ok=True)
    p = tmp_path / variant / name
    text = ("\r\n" if crlf else "\n").join(lines) + "\n"
    p.write_bytes(("\ufeff" if bom else "").encode() + text.encode())
    return p


def _same(a, b):
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


@pytest.mark.parametrize("kind", sorted(READERS))
@SETTINGS
@given(data=st.data())
def test_harmless_changes_change_nothing(tmp_path, kind, data):
    strat, read = READERS[kind]
    lines = data.draw(strat)
    ref = read(_write(tmp_path, lines))
    at = data.draw(st.integers(1, len(lines)))
    blank = lines[:at] + [""] + lines[at:]
    _same(ref, read(_write(tmp_path, blank, variant="blank")))
    _same(ref, read(_write(tmp_path, lines, crlf=True, variant="crlf")))
    _same(ref, read(_write(tmp_path, lines, bom=True, variant="bom")))
    suffix = data.draw(st.sampled_from(sorted(COMPRESS)))
    plain = _write(tmp_path, lines, variant="packed")
    packed = plain.with_name(plain.name + suffix)
    packed.write_bytes(COMPRESS[suffix](plain.read_bytes()))
    plain.unlink()
    _same(ref, read(packed))


COMPRESS = {".gz": lambda b: gzip.compress(b, mtime=0), ".bz2": bz2.compress, ".xz": lzma.compress,
            ".zst": lambda b: zstandard.ZstdCompressor().compress(b)}


MUTATIONS = ["drop_field", "extra_field", "non_numeric", "non_finite", "duplicate_line"]


def _mutate(kind, line, how):
    sep = "," if kind == "matrix" else " "
    parts = line.split(sep)
    if how == "drop_field":
        return sep.join(parts[:-1])
    if how == "extra_field":
        return sep.join(parts + ["1"])
    if how == "non_numeric":
        return sep.join(parts[:-2] + ["x1"] + parts[-1:]) if kind == "run" else sep.join(parts[:-1] + ["x1"])
    if how == "non_finite":
        return sep.join(parts[:-2] + ["inf"] + parts[-1:]) if kind == "run" else sep.join(parts[:-1] + ["inf"])
    return line


@pytest.mark.parametrize("how", MUTATIONS)
@pytest.mark.parametrize("kind", sorted(READERS))
@SETTINGS
@given(data=st.data())
def test_broken_line_is_an_error_naming_file_and_line(tmp_path, kind, how, data):
    strat, read = READERS[kind]
    lines = data.draw(strat)
    first = 2 if kind == "matrix" else 1  # the matrix header is line 1
    i = data.draw(st.integers(first, len(lines)))
    bad = list(lines)
    if how == "duplicate_line":
        bad.insert(i, lines[i - 1])
        i += 1
    else:
        bad[i - 1] = _mutate(kind, lines[i - 1], how)
    p = _write(tmp_path, bad, name="bad.txt")
    try:
        read(p)
    except InputError as e:
        assert "bad.txt" in str(e)
        if not (kind == "trec_eval" and how == "duplicate_line"):
            assert f"bad.txt:{i}" in str(e) or f"line {i}" in str(e), str(e)
        return
    if kind == "trec_eval" and how == "extra_field" and len(lines) == 1:
        return  # a one-line file with 4 fields IS the 'run measure topic value' format: nothing to compare with
    pytest.fail(f"{kind}/{how}: parsed silently:\n" + "\n".join(bad))
