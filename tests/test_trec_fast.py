"""The column-wise run reader and sorter (:func:`irrepro.core.trec._read_run_columns`, ``_sort_run_columns``) give
exactly what the line-by-line reader and pandas' stable sort give: the same frame, dtypes and float bits, and for a
bad file the same error, message, path and line (the column-wise path hands every file it does not accept to the
line-by-line reader)."""
import gzip
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from irrepro.core import trec
from irrepro.core.trec import read_run, sort_run, write_run
from irrepro.errors import InputError

TE_DATA = Path(__file__).parent / "data" / "trec_eval"


def pandas_sort_run(df):
    """sort_run as pandas computes it: a stable sort by query, descending score, descending docno."""
    df = df.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False], kind="mergesort")
    df = df.reset_index(drop=True)
    df["rank"] = df.groupby("query_id").cumcount() + 1
    return df


def reference_read(path, system=None):
    """The line-by-line reader, its frame sorted by pandas."""
    saved = trec.sort_run
    trec.sort_run = pandas_sort_run
    try:
        return trec._read_run_lines(path, system)
    finally:
        trec.sort_run = saved


def reference_write(df, path, system=None, depth=None):
    """write_run writing one line at a time."""
    df = pandas_sort_run(df[["query_id", "doc_id", "score"]].assign(query_id=lambda d: d.query_id.astype(str)))
    if depth is not None:
        df = df[df["rank"] <= depth]
    tag = system or "irrepro"
    qorder = sorted(df["query_id"].unique(), key=trec.topic_key)
    df["_q"] = df["query_id"].map({q: i for i, q in enumerate(qorder)})
    df = df.sort_values(["_q", "rank"], kind="mergesort")
    with open(path, "w") as f:
        for q, d, r, s in zip(df.query_id, df.doc_id, df["rank"], df.score):
            f.write(f"{q} Q0 {d} {r} {s:.6f} {tag}\n")


def same_frame(a, b):
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert list(a.dtypes) == list(b.dtypes)
    assert a.to_csv() == b.to_csv()
    assert np.array_equal(a["score"].to_numpy().view(np.int64), b["score"].to_numpy().view(np.int64))


def outcome(read, path, **kw):
    """The frame a reader returns, or its error as (class, message, path, line)."""
    try:
        return read(path, **kw)
    except InputError as e:
        return (type(e), str(e), e.path, e.line)


def check_same(path, fast_expected=None, **kw):
    got, want = outcome(read_run, path, **kw), outcome(reference_read, path, **kw)
    if isinstance(want, tuple):
        assert got == want
    else:
        assert not isinstance(got, tuple), got
        same_frame(got, want)
    if fast_expected is not None:
        assert (trec._read_run_columns(path, kw.get("system")) is not None) == fast_expected
    return got


def write(tmp_path, text, name="r.run", mode="w"):
    p = tmp_path / name
    if mode == "w":
        p.write_text(text, encoding="utf-8", newline="")
    else:
        p.write_bytes(text)
    return p


def test_whitespace_tables_are_pythons():
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    assert bytes(ord(c) for c in spaces if ord(c) < 128) == trec._ASCII_SPACE
    assert set(trec._ASCII_SPACE) | set(trec._NOT_SPACE_CONTROLS) == set(range(33))
    assert not set(trec._ASCII_SPACE) & set(trec._NOT_SPACE_CONTROLS)
    assert all(trec._NON_ASCII_SPACE.fullmatch(c) for c in spaces if ord(c) >= 128)
    assert sum(1 for c in range(128, sys.maxunicode + 1) if trec._NON_ASCII_SPACE.fullmatch(chr(c))) == \
        sum(1 for c in spaces if ord(c) >= 128)
    for c in spaces:  # str.split() splits where str.isspace() says so
        assert f"a{c}b".split() == ["a", "b"]


def random_run(rng, n_topics=7, n_docs=40, decimals=1, tags=("tag",)):
    lines = []
    for t in rng.permutation(n_topics):
        for r, d in enumerate(rng.choice(n_docs * 3, size=n_docs, replace=False)):
            lines.append(f"{t * 7} Q0 D{d} {r + 1} {rng.uniform(-3, 3):.{decimals}f} {rng.choice(tags)}")
    return lines


@pytest.mark.parametrize("seed", range(6))
def test_valid_files_read_column_wise_as_line_by_line(tmp_path, seed):
    rng = np.random.default_rng(seed)
    lines = random_run(rng, decimals=[0, 1, 3, 17][seed % 4])
    rng.shuffle(lines)
    check_same(write(tmp_path, "\n".join(lines) + "\n"), fast_expected=True)
    check_same(write(tmp_path, "\n".join(lines), "no_final_newline.run"), fast_expected=True)
    check_same(write(tmp_path, "\r\n".join(lines) + "\r\n", "crlf.run"), fast_expected=True)
    check_same(write(tmp_path, "\r".join(lines) + "\r", "cr.run"), fast_expected=True)
    check_same(write(tmp_path, "\ufeff" + "\n".join(lines) + "\n", "bom.run"), fast_expected=True)
    spaced = ["\t " + "  \t".join(line.split()) + " \t" for line in lines]
    check_same(write(tmp_path, "\n".join(spaced) + "\n\n  \n\t\n", "spaced.run"), fast_expected=True)
    check_same(write(tmp_path, "\n".join(lines) + "\n", "named.run"), system="other", fast_expected=True)


LONG_IDS = ["clueweb09-en0000-00-00000", "clueweb09-en0000-00-00001", "abcdefgh", "abcdefghi", "abcdefgh0",
            "abcdefg", "x" * 40, "x" * 41, "\u00e9t\u00e9-" * 5, "\U0001f600", "\u00e9", "e", "a-b", "a_b", "A"]


@pytest.mark.parametrize("seed", range(4))
def test_long_and_non_ascii_ids_read_column_wise(tmp_path, seed):
    rng = np.random.default_rng(seed)
    qids = ["q" * (seed + 1) + "-" + i for i in LONG_IDS[: 4 + seed]]
    lines = [f"{q} Q0 {d} {r} {rng.integers(0, 4) / 4} run-\u00fc-{'t' * 30 * seed}"
             for q in qids for r, d in enumerate(rng.permutation(LONG_IDS))]
    rng.shuffle(lines)
    check_same(write(tmp_path, "\n".join(lines) + "\n"), fast_expected=True)


@pytest.mark.parametrize("width", [255, 256, 257, 300])
def test_fields_longer_than_the_column_wise_reader_takes(tmp_path, width):
    lines = [f"1 Q0 {'d' * width} 1 2 t", f"1 Q0 {'d' * (width - 1)}e 2 2 t", "2 Q0 a 1 1 t"]
    check_same(write(tmp_path, "\n".join(lines) + "\n"), fast_expected=width <= trec._MAX_FIELD)


SCORES = ["1", "-0", "0.0", "-0.0", "+2.5", ".5", "5.", "1e3", "1E-3", "-1.7976931348623157e308", "5e-324",
          "0.1000000000000000055511151231257827", "123456789012345678901234567890", "1_0.5", "\u0661\u0662",
          "0x10", "NaN", "nan", "inf", "-Infinity", "1e999", "1,5", "", "--1", "1.5.", "\u00bd"]
RANKS = ["1", "0", "-3", "+4", "007", "1_000", "\u0663", "1.0", "1e3", "x", "9" * 30, "9" * 5000, "\u00b2"]


@pytest.mark.parametrize("score", SCORES)
def test_scores_as_float_reads_them(tmp_path, score):
    text = f"1 Q0 a 1 2 t\n1 Q0 b 2 {score} t\n2 Q0 a 1 -0.0 t\n"
    got = check_same(write(tmp_path, text))
    try:
        valid = score.isascii() and math.isfinite(float(score))
    except ValueError:
        valid = False
    assert (trec._read_run_columns(write(tmp_path, text), None) is not None) == valid
    if valid:
        b = got.score[(got.query_id == "1") & (got.doc_id == "b")].to_numpy()
        assert b.view(np.int64).tolist() == np.array([float(score)]).view(np.int64).tolist()


@pytest.mark.parametrize("rank", RANKS)
def test_ranks_as_int_reads_them(tmp_path, rank):
    check_same(write(tmp_path, f"1 Q0 a 1 2 t\n1 Q0 b {rank} 1 t\n"))


def test_scores_of_every_form(tmp_path):
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(0, 10, 300), rng.normal(0, 1e-5, 100), rng.normal(0, 1e12, 100),
                             np.round(rng.normal(0, 5, 300), 2), [0.0, -0.0]])
    forms = [repr, lambda v: f"{v:.6f}", lambda v: f"{v:.20f}", lambda v: f"{v:.3e}", lambda v: f"{v:.17g}"]
    lines = [f"{i % 9} Q0 d{i} {i} {forms[i % len(forms)](float(v))} t" for i, v in enumerate(values)]
    lines += [f"1 Q0 e{i} 1 {v} t" for i, v in enumerate(["5e-324", "-1.7976931348623157e308", "1_000.5", "+.5",
                                                          "7.", "00012.50", "1E+2", "0.1000000000000000055511151"])]
    got = check_same(write(tmp_path, "\n".join(lines)), fast_expected=True)
    assert sorted(got.score.tolist()) == sorted(float(line.split()[4]) for line in lines)


BAD = {
    "five fields": "1 Q0 a 1 2 t\n1 Q0 b 2 1\n",
    "seven fields": "1 Q0 a 1 2 t\n\n1 Q0 b 2 1 t x\n",
    "one field": "1 Q0 a 1 2 t\nx\n",
    "rank": "1 Q0 a 1 2 t\n1 Q0 b two 1 t\n",
    "score": "1 Q0 a 1 2 t\n1 Q0 b 2 high t\n",
    "nan score": "1 Q0 a 1 2 t\n1 Q0 b 2 nan t\n",
    "inf score": "1 Q0 a 1 2 t\n1 Q0 b 2 -inf t\n",
    "duplicate": "1 Q0 a 1 2 t\n2 Q0 a 1 2 t\n1 Q0 b 2 1 t\n1 Q0 a 3 0 t\n",
    "tags": "1 Q0 a 1 2 t\n1 Q0 b 2 1 u\n2 Q0 a 1 1 v\n",
    "empty": "",
    "blank": "\n  \n\t\n",
    "several errors": "1 Q0 a 1 2 t\n1 Q0 a 1 2 u\n1 Q0 b x 1 t\n1 Q0 c 1 2\n",
    "rank then score": "1 Q0 a x nan t\n",
    "score then duplicate": "1 Q0 a 1 2 t\n1 Q0 a 1 inf t\n",
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("system", [None, "s"])
def test_bad_files_raise_the_line_by_line_error(tmp_path, name, system):
    p = write(tmp_path, BAD[name])
    got = outcome(read_run, p, system=system)
    want = outcome(reference_read, p, system=system)
    if name == "tags" and system:
        same_frame(got, want)
    else:
        assert isinstance(want, tuple) and got == want


ODD = {
    "vertical tab": "1 Q0 a 1 2 t\x0b\n1\x0cQ0 b 2 1 t\n",
    "information separators": "1\x1cQ0\x1da\x1e1\x1f2 t\n",
    "no-break space": "1\xa0Q0 a 1 2 t\n1 Q0 b 2 1 t\n",
    "line separator": "1 Q0 a 1 2 t\u2028\n1 Q0 b 2 1 t\u2029\n",
    "ideographic space": "1\u3000Q0 a 1 2 t\n",
    "next line": "1 Q0 a 1 2 t\x85\n",
    "non-ascii ids": "q\u00e9 Q0 d\u00f6c 1 2 t\u00fc\nq\u00e9 Q0 \U0001f600 2 2 t\u00fc\n",
    "nul": "1 Q0 a\x00 1 2 t\n1 Q0 a 2 2 t\n1\x00 Q0 b 3 1 t\n",
    "replacement": b"1 Q0 a\xff 1 2 t\n1 Q0 a\xfe 2 2 t\n",
    "bom inside": "1 Q0 \ufeffa 1 2 t\n1 Q0 a 2 2 t\n",
    "form feed line": "1 Q0 a 1 2 t\n\x0c\n1 Q0 b 2 1 t\n",
    "lone surrogate-like": b"1 Q0 \xed\xa0\x80 1 2 t\n",
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_characters_read_as_line_by_line(tmp_path, name):
    text = ODD[name]
    check_same(write(tmp_path, text, mode="w" if isinstance(text, str) else "b"))


def test_gzipped_and_damaged_files(tmp_path):
    rng = np.random.default_rng(9)
    text = "\n".join(random_run(rng, n_topics=30, n_docs=200)) + "\n"
    plain = write(tmp_path, text)
    packed = tmp_path / "r.run.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    same_frame(check_same(packed, fast_expected=True), read_run(plain))
    truncated = tmp_path / "t.run.gz"
    truncated.write_bytes(packed.read_bytes()[: packed.stat().st_size // 2])
    got = check_same(truncated)
    assert isinstance(got, tuple) and got[3] > 1
    missing = tmp_path / "missing.run"
    assert outcome(read_run, missing) == outcome(reference_read, missing) == \
        (InputError, f"{missing}: file not found", str(missing), None)


@pytest.mark.parametrize("path", sorted(TE_DATA.glob("*.run")), ids=lambda p: p.name)
def test_real_run_files(path):
    check_same(path, fast_expected=True)


def tie_frame(rng, n, ids):
    q = rng.choice(ids, size=n)
    d = rng.choice(ids, size=n)
    s = rng.choice([0.0, -0.0, 1.0, 2.5, -1.0, 1e-300, np.inf, -np.inf], size=n)
    return pd.DataFrame({"query_id": q, "doc_id": d, "score": s, "extra": np.arange(n)})


IDS = ["1", "10", "2", "a", "B", "\u00e9", "\U0001f600", "", "a\x00", "a ", "\u0661", "Z" * 30, "aa", "b"]


@pytest.mark.parametrize("seed", range(8))
def test_sort_run_is_pandas_stable_sort(seed):
    rng = np.random.default_rng(seed)
    df = tie_frame(rng, 400, IDS)  # many rows equal on every key: the stable order matters
    if seed % 2:
        df = df.astype({"query_id": object, "doc_id": object})
        df.index = rng.permutation(len(df)) + 5
    if seed % 3 == 0:
        df["rank"] = np.float32(7)
    assert trec._sort_run_columns(df) is not None
    same_frame(sort_run(df), pandas_sort_run(df))
    sorted_once = sort_run(df)
    same_frame(sort_run(sorted_once), pandas_sort_run(sorted_once))


@pytest.mark.parametrize("case", ["nan score", "int ids", "none id", "int scores", "empty", "one row", "mixed ids"])
def test_sort_run_of_other_frames_is_pandas(case):
    rng = np.random.default_rng(1)
    df = tie_frame(rng, 50, IDS[:6])
    fast = case == "one row"
    if case == "nan score":
        df.loc[3, "score"] = np.nan
    elif case == "int ids":
        df["query_id"] = rng.integers(0, 5, size=len(df))
    elif case == "none id":
        df["doc_id"] = df["doc_id"].astype(object)
        df.loc[4, "doc_id"] = None
    elif case == "int scores":
        df["score"] = rng.integers(0, 3, size=len(df))
    elif case == "empty":
        df = df.iloc[:0]
    elif case == "one row":
        df = df.iloc[:1]
    elif case == "mixed ids":
        df["query_id"] = df["query_id"].astype(object)
        df.loc[2, "query_id"] = 3
        df.loc[5, "query_id"] = 1
    assert (trec._sort_run_columns(df) is not None) == fast
    try:
        want = pandas_sort_run(df)
    except TypeError as e:
        with pytest.raises(TypeError, match=str(e)[:20]):
            sort_run(df)
        return
    same_frame(sort_run(df), want)


@pytest.mark.parametrize("depth", [None, 3])
def test_write_run_writes_the_same_bytes(tmp_path, depth):
    rng = np.random.default_rng(4)
    df = tie_frame(rng, 300, IDS[:7])
    df = df.drop_duplicates(["query_id", "doc_id"])
    df["score"] = df["score"] * rng.uniform(0, 1e4, size=len(df))
    for frame in (df, df.assign(query_id=rng.integers(1, 30, size=len(df)))):
        write_run(frame, tmp_path / "new.run", system="s", depth=depth)
        reference_write(frame, tmp_path / "old.run", system="s", depth=depth)
        assert (tmp_path / "new.run").read_bytes() == (tmp_path / "old.run").read_bytes()
