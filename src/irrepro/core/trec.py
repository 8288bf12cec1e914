"""Readers and writers for the TREC file formats users bring: runs, qrels, ``trec_eval -q`` output and
topic-by-system score matrices.

Every reader validates line by line and raises :class:`irrepro.errors.InputError` naming the file, the line
number and what was expected. Compressed files are read transparently by their ending (:data:`COMPRESSIONS`:
``.gz``, ``.bz2``, ``.xz``, ``.zst``); a truncated or damaged one is an ``InputError`` naming the file and the line
that could not be read.
"""
from __future__ import annotations

import bz2
import functools
import gzip
import io
import lzma
import math
import os
import re
import zlib
from collections import deque
from pathlib import Path

import numpy as np
import pandas as pd

from irrepro.errors import InputError
from irrepro.core.scores import normalise_scores, topic_key

RUN_COLUMNS = ["query_id", "doc_id", "rank", "score", "system"]
QRELS_COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]


def _zstd_decompressor():
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj()


#: compressed inputs: ending -> a fresh decompressor object (``decompress``, ``eof``, ``unused_data``), one per stream
COMPRESSIONS = {
    ".gz": None,  # gzip.open: multi-member files and trailing zero padding as gzip(1) reads them
    ".bz2": bz2.BZ2Decompressor,
    ".xz": lzma.LZMADecompressor,
    ".zst": _zstd_decompressor,
}


def _decompression_errors():
    errors = [EOFError, OSError, lzma.LZMAError, zlib.error]
    try:
        import zstandard
        errors.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errors)


class _Streams(io.RawIOBase):
    """The decompressed bytes of a file of one or more concatenated streams, strictly: a file that ends inside a
    stream raises ``EOFError``, and bytes after the last stream that do not start a valid one raise the
    decompressor's error (:mod:`bz2` and :mod:`lzma` files would ignore them, and ``zstandard``'s reader would end
    a truncated frame without an error)."""

    def __init__(self, path, new):
        self._raw, self._new = open(path, "rb"), new
        self._d, self._fed, self._pending, self._done = new(), False, b"", False
        self._out, self._at = b"", 0  # decompressed bytes not yet returned: self._out[self._at:]

    def readable(self):
        return True

    def readinto(self, b):
        while self._at == len(self._out) and not self._done:
            data = self._pending or self._raw.read(1 << 16)
            self._pending = b""
            if not data:
                if self._fed and not self._d.eof:
                    raise EOFError("compressed file ended before the end-of-stream marker was reached")
                self._done = True
                break
            self._fed = True
            self._out, self._at = self._d.decompress(data), 0
            if self._d.eof:  # the rest is the next stream (or bytes that are not one: its decompressor raises)
                self._pending, self._d, self._fed = self._d.unused_data, self._new(), False
        n = min(len(b), len(self._out) - self._at)
        b[:n] = self._out[self._at:self._at + n]
        self._at += n
        return n

    def close(self):
        self._raw.close()
        super().close()


class _Lines:
    """The text lines of an input file (a byte-order mark dropped, undecodable bytes replaced); a decompression
    error while reading is an ``InputError`` naming the file and the line that could not be read."""

    def __init__(self, path, suffix):
        self.path, self.suffix = path, suffix
        if suffix == ".zst":
            try:
                import zstandard  # noqa: F401 - a dependency of irrepro; absent only where it was left out
            except ImportError:
                raise InputError("reading a .zst file needs the zstandard package (pip install zstandard)",
                                 path=path) from None
        if suffix == ".gz":
            raw = gzip.open(path, "rb")
        elif suffix:
            raw = io.BufferedReader(_Streams(path, COMPRESSIONS[suffix]))
        else:
            raw = open(path, "rb")
        self._f = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace")  # -sig: a BOM is not part of an id

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def read(self) -> str:
        """The rest of the text at once: the lines that iterating would give, joined."""
        return self._f.read()

    def __iter__(self):
        n = 0
        errors = _decompression_errors() if self.suffix else ()
        while True:
            try:
                line = self._f.readline()
            except errors as e:
                raise InputError(f"cannot decompress line {n + 1} of this {self.suffix} file "
                                 f"({type(e).__name__}: {e}): the file is truncated, damaged or not "
                                 f"{self.suffix[1:]}-compressed; {n} line(s) were read before it", path=self.path,
                                 line=n + 1) from None
            if not line:
                return
            n += 1
            yield line


def _open(path):
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError("file not found", path=path)
    suffix = next((s for s in COMPRESSIONS if path.lower().endswith(s)), "")
    return _Lines(path, suffix)


def _float(tok, path, lineno, what):
    try:
        v = float(tok)
    except ValueError:
        raise InputError(f"{what} {tok!r} is not a number", path=path, line=lineno) from None
    if math.isnan(v):
        raise InputError(f"{what} is NaN", path=path, line=lineno)
    if math.isinf(v):
        raise InputError(f"{what} {tok!r} is not finite", path=path, line=lineno)
    return v


def _grade(tok, path, lineno):
    """A relevance grade: an integer (``2``, ``-1``; ``2.0`` is read as 2). ``1.5``, ``inf`` or text is an error,
    never a silent truncation."""
    try:
        v = float(tok)
    except ValueError:
        raise InputError(f"relevance {tok!r} is not an integer grade", path=path, line=lineno) from None
    if not math.isfinite(v) or v != int(v):
        raise InputError(f"relevance {tok!r} is not an integer grade (fractional or non-finite grades are not "
                         f"supported)", path=path, line=lineno)
    return int(v)


def read_run(path, system: str | None = None) -> pd.DataFrame:
    """Read a TREC run file (``qid Q0 docno rank score tag``; whitespace-separated).

    The ranking used downstream is by descending score with ties broken by docno descending (trec_eval's
    convention), not by the rank column. ``system`` overrides the run tag; a file with several tags is an error.

    A well-formed file is read on whole columns (:func:`_read_run_columns`); a file that path does not accept is
    read line by line (:func:`_read_run_lines`), which returns the same frame or raises the error naming the line.
    """
    run = _read_run_columns(path, system)
    return run if run is not None else _read_run_lines(path, system)


def _read_run_lines(path, system: str | None = None) -> pd.DataFrame:
    """:func:`read_run` line by line: checks every line and raises the :class:`InputError` of the first bad one."""
    rows = []
    tags = set()
    seen = set()
    with _open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 6:
                raise InputError(f"expected 6 fields 'qid Q0 docno rank score tag', got {len(parts)}: {line.strip()[:80]!r}",
                                 path=path, line=lineno)
            qid, _, doc, rank, score, tag = parts
            try:
                rank = int(rank)
            except ValueError:
                raise InputError(f"rank {rank!r} is not an integer", path=path, line=lineno) from None
            score = _float(score, path, lineno, "score")
            if (qid, doc) in seen:
                raise InputError(f"document {doc!r} appears twice for query {qid!r}", path=path, line=lineno)
            seen.add((qid, doc))
            tags.add(tag)
            rows.append((qid, doc, rank, score))
    if not rows:
        raise InputError("run file is empty", path=path)
    if system is None:
        if len(tags) > 1:
            raise InputError(f"run file has several run tags {sorted(tags)[:5]}; pass a system name", path=path)
        system = tags.pop()
    df = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])
    df["system"] = system
    return sort_run(df)


#: the characters outside ASCII that ``str.split()`` and ``str.strip()`` take for whitespace
_NON_ASCII_SPACE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
#: the ASCII characters that ``str.split()`` and ``str.strip()`` take for whitespace: every one up to the space
#: except the control characters of :data:`_NOT_SPACE_CONTROLS`
_ASCII_SPACE = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
_NOT_SPACE_CONTROLS = bytes(range(0, 9)) + bytes(range(14, 28))
#: the longest field :func:`_run_fields` reads (a longer one is read line by line)
_MAX_FIELD = 256


class _Fields:
    """The six fields of every non-blank line of a run file's text, as byte ranges of its UTF-8 encoding.

    ``starts[i, k]`` and ``ends[i, k]`` delimit field ``k`` of the ``i``-th non-blank line in ``data`` (the bytes,
    zero-padded by at least :data:`_MAX_FIELD` bytes, rounded up to 8)."""

    def __init__(self, data: np.ndarray, starts: np.ndarray, ends: np.ndarray):
        self.data, self.starts, self.ends = data, starts, ends

    def matrix(self, k: int) -> np.ndarray:
        """Field ``k`` of every line as the rows of a uint8 matrix, zero-filled after the field's end; its width is
        the longest such field rounded up to a multiple of 8."""
        start, length = self.starts[:, k], (self.ends[:, k] - self.starts[:, k]).astype(np.int16)
        width = -(-int(length.max()) // 8) * 8
        rows = np.lib.stride_tricks.sliding_window_view(self.data, width)[start]
        rows *= np.arange(width, dtype=np.int16) < length[:, None]
        return rows

    def tokens(self, k: int) -> list[bytes]:
        """Field ``k`` of every line as ``bytes`` (no field holds a zero byte, so the zero fill is no part of it)."""
        rows = self.matrix(k)
        return rows.view(f"S{rows.shape[1]}").ravel().tolist()

    def factorize(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Field ``k`` of every line as ``(codes, values)``: ``values`` its distinct values (an object array of
        ``str``), ``values[codes]`` the field of each line."""
        rows = self.matrix(k)
        words = rows.view(np.uint64)
        codes = pd.factorize(words[:, 0])[0]
        for j in range(1, words.shape[1]):
            more = pd.factorize(words[:, j])[0]
            codes = pd.factorize(codes * (int(more.max()) + 1) + more)[0]
        # codes are numbered in order of first appearance: the first line of each value is where the codes so far
        # reach a new maximum
        first = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0)
        values = rows[first].view(f"S{rows.shape[1]}").ravel().tolist()
        return codes, np.array([v.decode("utf-8", "surrogatepass") for v in values], dtype=object)


def _run_fields(text: str) -> _Fields | None:
    """The fields of ``text`` (:class:`_Fields`) if every line of it (lines end at ``\\n``, as :class:`_Lines`
    reads them) is blank or holds exactly six whitespace-separated fields (as ``str.split()`` separates them) and
    none is longer than :data:`_MAX_FIELD` bytes; else None, also for a text with a control character that is not
    whitespace or with whitespace outside ASCII.

    Fields are found on the UTF-8 bytes: no byte of a multi-byte character is below 128, and in such a text a
    byte up to the space (32) is whitespace, any other byte is not."""
    if not text.isascii() and _NON_ASCII_SPACE.search(text):
        return None
    data = text.encode("utf-8", "surrogatepass")
    if len(data.translate(None, _NOT_SPACE_CONTROLS)) != len(data):
        return None
    b = np.frombuffer(data, dtype=np.uint8)
    space = np.empty(len(b) + 2, dtype=bool)  # space[i + 1]: byte i is whitespace; a space before and after
    space[0] = space[-1] = True
    np.less_equal(b, 32, out=space[1:-1])
    starts = np.flatnonzero(space[:-1] > space[1:])  # the bytes that start a field
    ends = np.flatnonzero(space[:-1] < space[1:])  # the bytes just after a field
    line_ends = np.append(np.flatnonzero(b == ord("\n")), len(b))  # the last line may lack its "\n"
    fields = np.diff(np.searchsorted(starts, line_ends), prepend=0)
    if not ((fields == 0) | (fields == 6)).all() or not len(starts) or (ends - starts).max() > _MAX_FIELD:
        return None
    padded = np.zeros(len(b) + _MAX_FIELD + 8, dtype=np.uint8)
    padded[:len(b)] = b
    return _Fields(padded, starts.reshape(-1, 6), ends.reshape(-1, 6))


def _read_run_columns(path, system: str | None) -> pd.DataFrame | None:
    """:func:`read_run`'s frame, computed on whole columns, for a file that :func:`_read_run_lines` accepts and
    whose every check passes here: each line blank or of six fields (:func:`_run_fields`), each rank ``int()``-able,
    each score a finite ``float()``, no (query, document) pair twice, one run tag unless ``system`` is given. For
    any other file (or a compressed one that cannot be read to its end) None: the line-by-line reader then reads
    it and raises.

    Ranks and scores are read from their bytes: ``int()`` and ``float()`` read an ASCII number's bytes as they
    read its text, and reject bytes outside ASCII (which the line-by-line reader then reads as text)."""
    with _open(path) as f:
        try:
            text = f.read()
        except Exception:  # noqa: BLE001 - a damaged file: the line-by-line reader raises the error naming the line
            return None
    fields = _run_fields(text)
    del text
    if fields is None:
        return None
    n = len(fields.starts)
    if system is None:
        tags = fields.matrix(5)
        if not (tags == tags[0]).all():
            return None
        system = tags[0].tobytes().rstrip(b"\0").decode("utf-8", "surrogatepass")
    ranks = fields.matrix(3)
    digits = (ranks - ord("0") < 10) | (ranks == 0)  # a rank of ASCII digits, zero-filled after its end
    try:
        if not (digits.all() and ranks.shape[1] <= 64):
            deque(map(int, fields.tokens(3)), maxlen=0)
        score = np.fromiter(map(float, fields.tokens(4)), dtype=np.float64, count=n)
    except ValueError:
        return None
    if not np.isfinite(score).all():
        return None
    qcode, quniq = fields.factorize(0)
    dcode, duniq = fields.factorize(2)
    if len(pd.unique(qcode.astype(np.int64) * len(duniq) + dcode)) != n:
        return None
    order, rank = _run_order(qcode, quniq, score, lambda rows: duniq[dcode[rows]])
    # each id column is its distinct values (as pandas infers their dtype) taken row by row
    df = pd.DataFrame({"query_id": pd.Series(quniq).array.take(qcode[order]),
                       "doc_id": pd.Series(duniq).array.take(dcode[order]), "rank": rank, "score": score[order]})
    df["system"] = system
    return df


def _ascending_ranks(values: np.ndarray) -> np.ndarray:
    """The place of each of distinct ``values`` (an object array of ``str``) in ascending order, as ``<`` orders
    them."""
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[np.argsort(values, kind="stable")] = np.arange(len(values))
    return ranks


def _run_order(qcode, quniq, score, docs) -> tuple[np.ndarray, np.ndarray]:
    """The row order of :func:`sort_run` (a stable sort by query ascending, score descending, docno descending)
    and the ranks 1..n per query in that order, for rows of query ``quniq[qcode]`` (``quniq`` an object array of
    distinct ``str``) and ``score`` (float64, no NaN); ``docs(rows)`` gives the docnos (``str``) of the rows at the
    positions ``rows`` as an object array.

    Rows are sorted stably by descending score, then stably by query; then each run of rows tied on both is
    sorted stably by descending docno, the only rows whose docnos are compared."""
    n = len(score)
    qkey = _ascending_ranks(quniq)[qcode].astype(np.int16 if len(quniq) <= 1 << 15 else np.int64)  # int16: radix
    order = np.argsort(-score, kind="stable")
    order = order[np.argsort(qkey[order], kind="stable")]
    q, s = qkey[order], score[order]
    tied = (q[1:] == q[:-1]) & (s[1:] == s[:-1])  # position i + 1 ties with position i
    if tied.any():
        in_tie = np.zeros(n, dtype=bool)
        in_tie[1:] = tied
        in_tie[:-1] |= tied
        at = np.flatnonzero(in_tie)
        group = np.cumsum(np.r_[True, ~tied])[at]  # the run of ties of each position in one
        rows = order[at]
        dcode, duniq = pd.factorize(docs(rows))
        dkey = _ascending_ranks(np.asarray(duniq, dtype=object))[dcode]
        order[at] = rows[np.lexsort((-dkey, group))]
    first = np.r_[True, q[1:] != q[:-1]]  # the first row of each query
    at = np.arange(n)
    rank = at - np.maximum.accumulate(np.where(first, at, 0)) + 1
    return order, rank


def _str_values(column: pd.Series) -> np.ndarray | None:
    """The values of an object or python-stored string column as an object array, if they are all ``str``."""
    dtype = column.dtype
    if not (pd.api.types.is_object_dtype(dtype) or (isinstance(dtype, pd.StringDtype) and dtype.storage == "python")):
        return None
    values = column.to_numpy(dtype=object)
    return values if pd.api.types.infer_dtype(values, skipna=False) == "string" else None


def _sort_run_columns(df: pd.DataFrame) -> pd.DataFrame | None:
    """:func:`sort_run`'s result computed by :func:`_run_order`, for a non-empty frame whose query and document
    ids are all ``str`` and whose scores are float64 without NaN; None for any other frame."""
    cols = df.columns
    if (len(df) == 0 or isinstance(cols, pd.MultiIndex) or not cols.is_unique
            or not all(c in cols for c in ("query_id", "doc_id", "score"))):
        return None
    if df["score"].dtype != np.float64:
        return None
    score = df["score"].to_numpy()
    if np.isnan(score).any():
        return None
    qid, doc = _str_values(df["query_id"]), _str_values(df["doc_id"])
    if qid is None or doc is None:
        return None
    qcode, quniq = pd.factorize(qid)
    order, rank = _run_order(qcode, np.asarray(quniq, dtype=object), score, lambda rows: doc[rows])
    df = df.take(order).reset_index(drop=True)
    df["rank"] = rank
    return df


def sort_run(df: pd.DataFrame) -> pd.DataFrame:
    """Order a run by query, then descending score, ties by descending docno (as trec_eval), and re-rank 1..n.

    The order is that of a stable sort: rows equal on all three keep their order. A frame of ``str`` ids and float
    scores without NaN is ordered by :func:`_run_order`; any other by pandas."""
    fast = _sort_run_columns(df)
    if fast is not None:
        return fast
    df = df.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False], kind="mergesort")
    df = df.reset_index(drop=True)
    df["rank"] = df.groupby("query_id").cumcount() + 1
    return df


def write_run(df: pd.DataFrame, path, system: str | None = None, depth: int | None = None) -> None:
    """Write a run in TREC format, ranked as :func:`sort_run` ranks it; scores with 6 decimals."""
    df = sort_run(df[["query_id", "doc_id", "score"]].assign(query_id=lambda d: d.query_id.astype(str)))
    if depth is not None:
        df = df[df["rank"] <= depth]
    tag = system or "irrepro"
    qorder = sorted(df["query_id"].unique(), key=topic_key)
    df["_q"] = df["query_id"].map({q: i for i, q in enumerate(qorder)})
    df = df.sort_values(["_q", "rank"], kind="mergesort")
    columns = (df.query_id.tolist(), df.doc_id.tolist(), df["rank"].tolist(), df.score.tolist())
    with open(path, "w") as f:
        f.write("".join([f"{q} Q0 {d} {r} {s:.6f} {tag}\n" for q, d, r, s in zip(*columns)]))


def read_qrels(path, subtopics: bool = False) -> pd.DataFrame:
    """Read TREC qrels (``qid iteration docno rel``).

    A (query, document) pair judged on two lines is an error naming both lines, whatever their iteration column
    says (the iteration column of ad-hoc qrels is not a key: keeping either judgment would be a silent choice).
    ``subtopics=True`` reads diversity qrels, whose iteration column holds the subtopic: there a pair may repeat
    with different subtopics, and only the same (query, subtopic, document) twice is an error."""
    rows = []
    seen = {}
    with _open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 4:
                raise InputError(f"expected 4 fields 'qid iteration docno relevance', got {len(parts)}: "
                                 f"{line.strip()[:80]!r}", path=path, line=lineno)
            qid, it, doc, rel = parts
            rel = _grade(rel, path, lineno)
            key = (qid, it, doc) if subtopics else (qid, doc)
            if key in seen:
                raise InputError(f"judgment for query {qid!r}, document {doc!r} repeats line {seen[key]} "
                                 f"({path}:{seen[key]}); a pair is judged once", path=path, line=lineno)
            seen[key] = lineno
            rows.append((qid, it, doc, rel))
    if not rows:
        raise InputError("qrels file is empty", path=path)
    return pd.DataFrame(rows, columns=QRELS_COLUMNS)


def write_qrels(df: pd.DataFrame, path) -> None:
    """Write qrels in TREC format, sorted by query (numeric where possible), iteration, document."""
    df = df.copy()
    if "iteration" not in df.columns:
        df["iteration"] = "0"
    df["_q"] = df["query_id"].astype(str).map(topic_key)
    df = df.sort_values(["_q", "iteration", "doc_id"], kind="mergesort")
    with open(path, "w") as f:
        for q, it, d, r in zip(df.query_id, df.iteration, df.doc_id, df.relevance):
            f.write(f"{q} {it} {d} {int(r)}\n")


def check_run_topics(run: pd.DataFrame, qrels: pd.DataFrame, run_path=None, qrels_path=None) -> None:
    """Raise if the run has topics that the qrels do not judge (their scores would be silently undefined)."""
    extra = sorted(set(run["query_id"]) - set(qrels["query_id"]), key=topic_key)
    if extra:
        raise InputError(f"{len(extra)} topic(s) of the run are not in the qrels {qrels_path or ''}: "
                         f"{extra[:10]}{' ...' if len(extra) > 10 else ''}; restrict the run to judged topics "
                         f"or set 'topics: judged' for this import", path=run_path)


@functools.lru_cache(maxsize=None)
def trec_eval_measure(name: str) -> str:
    """The ir_measures name of a ``trec_eval`` measure (``map`` -> ``AP``, ``P_10`` -> ``P@10``, ``recip_rank`` ->
    ``RR``, ``ndcg_cut_10`` -> ``nDCG@10``; :func:`ir_measures.parse_trec_measure`); a name it does not map to one
    measure (``gm_map``, a name of another tool) is kept as it is."""
    import ir_measures

    try:
        parsed = ir_measures.parse_trec_measure(name)
    except Exception:  # noqa: BLE001 - ValueError for names it knows but does not support, others for the rest
        return name
    return str(parsed[0]) if len(parsed) == 1 else name


def read_trec_eval_q(path, collection: str, measures=None) -> pd.DataFrame:
    """Read ``trec_eval -q`` output (``measure topic value``, or ``run measure topic value`` for concatenated files)
    into the canonical long table. The ``all`` rows (aggregates) are dropped. Measures are renamed to their
    ir_measures names (:func:`trec_eval_measure`); ``measures`` (ir_measures names) restricts the result (a
    measure the file lacks is an error naming the measures it holds: an import never holds fewer measures than
    asked).

    In the 3-column form a row belongs to the run whose summary follows it: ``trec_eval -q`` writes a run's
    per-topic rows, then its ``all`` rows, ``runid all <name>`` among them, so files of several runs concatenated
    name each run after its own ``runid``. A file without ``runid`` lines is one run named after the file (without
    a compression ending); in a file with them, per-topic rows after the last ``runid`` line, or a ``runid`` line
    with no per-topic rows before it, belong to no run and are an error."""
    rows = []
    held = set()  # every per-topic measure of the file, also those filtered out
    unnamed = []  # 3-column form: indices into rows of the rows whose run's `runid` line is still to come
    first_unnamed = None  # line of the first per-topic row since the last `runid` line
    named_by_runid = False
    with _open(path) as f:
        width = None  # (fields, line) of the first data line
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.split()
            if width is None and len(parts) in (3, 4):
                width = (len(parts), lineno)
            elif width is not None and len(parts) != width[0] and len(parts) in (3, 4):
                raise InputError(f"{len(parts)} fields, but line {width[1]} has {width[0]}: a file is either "
                                 f"'measure topic value' or 'run measure topic value' throughout", path=path,
                                 line=lineno)
            if len(parts) == 3:
                m, topic, val = parts
                run = None
            elif len(parts) == 4:
                run, m, topic, val = parts
            else:
                raise InputError(f"expected 'measure topic value' or 'run measure topic value', got {len(parts)} "
                                 f"fields: {line.strip()[:80]!r}", path=path, line=lineno)
            if not m[:1].isalpha():
                raise InputError(f"{m!r} is not a measure name (expected 'measure topic value' or "
                                 f"'run measure topic value')", path=path, line=lineno)
            if m == "runid":
                if run is None:
                    if first_unnamed is None:
                        raise InputError(f"'runid {topic} {val}' ends a run with no per-topic rows before it: "
                                         "trec_eval -q writes each run's per-topic rows, then its summary with "
                                         "'runid all <name>'", path=path, line=lineno)
                    for i in unnamed:
                        rows[i] = (val,) + rows[i][1:]
                    unnamed, first_unnamed, named_by_runid = [], None, True
                continue
            if topic == "all":
                continue
            name = trec_eval_measure(m)
            value = _float(val, path, lineno, "value")  # every line is checked, also those filtered out below
            held.add(name)
            if run is None and first_unnamed is None:
                first_unnamed = lineno
            if measures is not None and name not in measures:
                continue
            if run is None:
                unnamed.append(len(rows))
            rows.append((run, topic, name, value, lineno))
    if first_unnamed is not None:
        if named_by_runid:
            raise InputError("per-topic rows from this line on are followed by no 'runid all <name>' line, so they "
                             "belong to no run: trec_eval -q writes each run's summary, 'runid' included, after its "
                             "per-topic rows (is the file truncated?)", path=path, line=first_unnamed)
        name = os.path.basename(os.fspath(path))
        name = next((name[:-len(c)] for c in COMPRESSIONS if name.lower().endswith(c) and len(name) > len(c)), name)
        for i in unnamed:
            rows[i] = (name,) + rows[i][1:]
    lacking = [m for m in measures or () if m not in held]
    if lacking and held:
        raise InputError(f"no per-topic rows of the measures {lacking}; the file holds {sorted(held)} "
                         "(measures are named as ir_measures names them: trec_eval's map is AP, P_10 is P@10, "
                         "recip_rank is RR, ndcg_cut_10 is nDCG@10); ask the import only for measures the file "
                         "holds", path=path)
    if not rows:
        raise InputError("no per-topic rows found (was trec_eval run with -q?)", path=path)
    df = pd.DataFrame(rows, columns=["system", "topic", "measure", "value", "line"])
    df["collection"] = collection
    dup = df.duplicated(["system", "topic", "measure"])
    if dup.any():
        r = df[dup].iloc[0]
        first = df[(df.system == r.system) & (df.topic == r.topic) & (df.measure == r.measure)].line.iloc[0]
        hint = ("" if width is None or width[0] == 4 or named_by_runid else
                "; the file has no 'runid all <name>' line, so all its rows are one run named after the file "
                "(trec_eval -q -m runid ... writes it)")
        raise InputError(f"duplicate value for run {r.system!r}, measure {r.measure!r}, topic {r.topic!r} (first "
                         f"on line {first}){hint}", path=path, line=r.line)
    return normalise_scores(df)


#: names of a score matrix's first column that make it the topic ids, not a system (compared in lower case)
TOPIC_COLUMNS = ("topic", "topics", "topic_id", "topicid", "qid", "query", "query_id", "queryid", "qno", "")


def read_matrix_csv(path, collection: str, measure: str, topics=None) -> pd.DataFrame:
    """Read a topic-by-system score matrix CSV (header = system names, one row per topic, values in [0, 1] or any
    real) into the canonical long table. If the first column's name is one of :data:`TOPIC_COLUMNS` (``topic``,
    ``qid``, ``query``, ``query_id``, ..., any case, or empty) it gives the topic ids; otherwise topics are numbered
    1..n in file order (Urbano's matrices are anonymised that way) or taken from ``topics``."""
    with _open(path) as f:
        numbered = [(i, ln.rstrip("\r\n")) for i, ln in enumerate(f, 1)]
    numbered = [(i, ln) for i, ln in numbered if ln.strip()]  # blank lines are skipped, line numbers kept
    if len(numbered) < 2:
        raise InputError("matrix needs a header line and at least one topic row", path=path)
    header_line, header = numbered[0][0], [h.strip().strip('"').lstrip("\ufeff") for h in numbered[0][1].split(",")]
    has_topic_col = header[0].lower() in TOPIC_COLUMNS
    systems = header[1:] if has_topic_col else header
    if len(set(systems)) != len(systems):
        raise InputError("duplicate system names in header", path=path, line=header_line)
    rows = []
    seen = {}
    for n, (i, ln) in enumerate(numbered[1:]):
        parts = [p.strip().strip('"') for p in ln.split(",")]
        if len(parts) != len(header):
            raise InputError(f"expected {len(header)} comma-separated fields like the header, got {len(parts)}",
                             path=path, line=i)
        if has_topic_col:
            topic, vals = parts[0], parts[1:]
        else:
            topic, vals = (str(topics[n]) if topics is not None else str(n + 1)), parts
        if topic in seen:
            raise InputError(f"topic {topic!r} appears twice (first on line {seen[topic]})", path=path, line=i)
        seen[topic] = i
        for s, v in zip(systems, vals):
            if v in ("NA", "NaN", "nan", ""):
                raise InputError(f"missing value for system {s!r}", path=path, line=i)
            rows.append((s, topic, _float(v, path, i, f"value for system {s!r}")))
    df = pd.DataFrame(rows, columns=["system", "topic", "value"])
    df["collection"], df["measure"] = collection, measure
    return normalise_scores(df)


def run_files(directory) -> list[Path]:
    """The run files of a directory: every regular file not hidden (name starting with '.'), sorted by name."""
    return sorted(p for p in Path(directory).iterdir() if p.is_file() and not p.name.startswith("."))


#: file-name endings stripped from a run file's name, in this order: a compression, then a run-file extension
RUN_COMPRESSIONS = tuple(COMPRESSIONS)  # .gz .bz2 .xz .zst
RUN_EXTENSIONS = (".run", ".trec", ".txt", ".res", ".tsv", ".out")
#: the workflow's `system` wildcard (a file name part): a letter or digit first, as every config name (so never `.`,
#: `..` or a hidden name), then letters, digits and . _ + -
SYSTEM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def run_name(path) -> str:
    """A run's system name from its file name: the name without one compression suffix (``.gz``, ``.bz2``, ``.xz``,
    ``.zst``) and then one run-file extension (``.run``, ``.trec``, ``.txt``, ``.res``, ``.tsv``, ``.out``), and
    without TREC's ``input.`` prefix (``input.uogTrA44xu.gz`` -> ``uogTrA44xu``; ``bm25_k1-0.9_b-0.5.run`` ->
    ``bm25_k1-0.9_b-0.5``). A name that cannot be a system name (letters, digits and ``._+-`` only) is an
    ``InputError`` naming the file."""
    name = Path(path).name
    for suffixes in (RUN_COMPRESSIONS, RUN_EXTENSIONS):
        for suf in suffixes:
            if name.lower().endswith(suf) and len(name) > len(suf):
                name = name[:-len(suf)]
                break
    if name.startswith("input.") and len(name) > len("input."):
        name = name[len("input."):]
    if not SYSTEM_NAME.fullmatch(name):
        raise InputError(f"cannot name a system {name!r}: a run file's name (without its extension) may hold only "
                         "letters, digits and . _ + -, a letter or digit first; rename the file", path=path)
    return name


def run_systems(paths) -> list[tuple[str, Path]]:
    """``(system name, path)`` of run files (:func:`run_name`); two files that would give one system are an
    ``InputError`` naming both."""
    seen, out = {}, []
    for p in paths:
        name = run_name(p)
        if name in seen:
            raise InputError(f"run files {seen[name]} and {p} both give system {name!r}: rename one", path=p)
        seen[name] = p
        out.append((name, Path(p)))
    return out
