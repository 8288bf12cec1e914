"""Per-topic evaluation of runs with ir_measures, into the canonical long table.

Measures are named as in ir_measures (``AP``, ``nDCG@10``, ``ERR@20``, ``P@10``...). ``DCG@k`` is not built into
ir_measures: it is defined here (gain ``2^rel − 1``, discount ``log2(rank + 1)``, Järvelin & Kekäläinen / Burges et
al.) and evaluated on the same run, so that every paper that uses DCG gets the same definition.

Conventions (documented for users who compare with trec_eval):
* negative relevance grades (e.g. Cranfield's -1 "no interest") count as 0;
* a judged topic that the run does not retrieve for scores 0 on every measure (trec_eval ``-c``);
* topics the qrels do not judge are an error upstream (:func:`irrepro.core.trec.check_run_topics`);
* ad hoc measures only: the qrels' iteration (subtopic) column is ignored, so diversity measures (alpha-nDCG,
  ERR-IA: :func:`needs_subtopics`) are refused here and go through :mod:`irrepro.papers.vb.diversity`, which keeps
  the subtopics;
* two names of one measure (``AP`` and ``MAP``, ``RR`` and ``MRR``) in one list are refused: ir_measures computes
  the measure once, under one of the names.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

from irrepro.errors import InputError

DEFAULT_MEASURES = ["AP", "nDCG@10", "nDCG@20", "ERR@20", "P@10", "DCG@10"]


def dcg_at_k(rels: np.ndarray, k: int) -> float:
    """``DCG@k = Σ_{i=1..k} (2^{rel_i} − 1) / log2(i + 1)`` for relevance grades in rank order."""
    r = np.asarray(rels, dtype=float)[:k]
    r = np.clip(r, 0, None)
    return float(np.sum((2.0 ** r - 1.0) / np.log2(np.arange(2, r.size + 2))))


def _parse_custom(name):
    if name.startswith("DCG@"):
        return ("DCG", int(name[4:]))
    return None


def check_measure(name, key: str) -> None:
    """Raise ``InputError`` naming the config ``key`` unless ``name`` is a measure this installation computes:
    irrepro's own ``DCG@k`` (k ≥ 1), or a name ir_measures parses, with any cutoff ≥ 1, that an installed
    ir_measures provider supports (pytrec_eval, gdeval, judged, pyndeval, ...)."""
    import ir_measures

    if not isinstance(name, str) or not name:
        raise InputError(f"config key {key}: a measure name is a non-empty string, got {name!r}")
    if name.startswith("DCG@"):
        k = name[4:]
        if not k.isdigit() or int(k) < 1:
            raise InputError(f"config key {key}: {name!r}: DCG@k needs an integer cutoff k >= 1")
        return
    try:
        m = ir_measures.parse_measure(name)
    except Exception as e:  # noqa: BLE001 - ir_measures raises NameError, ValueError, AssertionError
        raise InputError(f"config key {key}: ir_measures cannot parse measure {name!r} ({e})") from None
    cutoff = m.params.get("cutoff")
    if cutoff is not None and not (isinstance(cutoff, int) and cutoff >= 1):
        raise InputError(f"config key {key}: {name!r}: the cutoff must be an integer >= 1, got {cutoff!r}")
    try:  # a provider validates the measure's parameters (an AssertionError for one it does not take)
        m.validate_params()
        providers = [p for p in ir_measures.DefaultPipeline.providers if p.supports(m)]
    except Exception as e:  # noqa: BLE001 - ir_measures raises AssertionError, ValueError
        raise InputError(f"config key {key}: {name!r}: ir_measures refuses its parameters ({e})") from None
    if not any(p.is_available() for p in providers):
        why = (f"its providers ({', '.join(p.NAME for p in providers)}) are not installed" if providers
               else "no ir_measures provider supports it")
        raise InputError(f"config key {key}: {name!r} cannot be computed here: {why}")


@functools.lru_cache(maxsize=None)
def _parsed(name):
    """The measure a name denotes: ir_measures' parsed measure, or ``("DCG", k)`` for irrepro's own ``DCG@k``."""
    import ir_measures

    return _parse_custom(name) or ir_measures.parse_measure(name)


def needs_subtopics(name) -> bool:
    """Whether a measure is a diversity (intent-aware) measure, computed from qrels with a subtopic per judgment:
    one that ir_measures computes with its ndeval provider (``alpha_nDCG``, ``ERR_IA``, ``NRBP``, ``P_IA``,
    ``StRecall``, ...)."""
    import ir_measures

    m = _parsed(name)
    return not isinstance(m, tuple) and any(p.NAME == "pyndeval" and p.supports(m)
                                            for p in ir_measures.DefaultPipeline.providers)


def _label(m) -> str:
    """How a parsed measure is printed: ir_measures' name, or ``DCG@k``."""
    return f"DCG@{m[1]}" if isinstance(m, tuple) else str(m)


def _identity(name):
    """What two names of one measure share: the parsed measure (the name itself where neither parses it)."""
    try:
        return _parsed(name)
    except Exception:  # noqa: BLE001 - ir_measures raises NameError, ValueError, AssertionError
        return name


def _same_measure(names, key):
    """Raise naming both ``key`` items when two of ``names`` denote one measure."""
    seen = {}
    for i, name in enumerate(names):
        m = _identity(name)
        if m in seen:
            j = seen[m]
            same = ("the same name; name a measure once" if names[j] == name else
                    f"one measure ({_label(m)!r}), computed once under one of the names; name it once")
            raise InputError(f"config key {key}[{i}]: {name!r} and {key}[{j}] {names[j]!r} are {same}")
        seen[m] = i


def check_measures(names, key: str, collections) -> None:
    """Check a list of measures computed from runs and ad hoc qrels (config ``key``: ``measures`` or
    ``imports.<name>.measures``; ``collections``: the ids evaluated with them): each computable
    (:func:`check_measure`), no measure under two names, no diversity measure (:func:`needs_subtopics`)."""
    names = list(names)
    for i, name in enumerate(names):
        check_measure(name, f"{key}[{i}]")
    _same_measure(names, key)
    for i, name in enumerate(names):
        if needs_subtopics(name):
            cs = sorted(collections)
            where = (f"the qrels of collection {cs[0]!r}" if len(cs) == 1 else
                     f"the qrels of collections {cs}" if cs else "the qrels of every collection and runs import")
            raise InputError(f"config key {key}[{i}]: {name!r} is a diversity measure: it needs a subtopic per "
                             f"judgment, and {where} are evaluated as ad hoc qrels (the iteration column is not a "
                             "subtopic); diversity measures are computed by the vb paper (vb.compare_measures)")


def check_trec_eval_measures(names, key: str) -> None:
    """Check the ``measures`` filter of a ``trec_eval`` import (config ``key``): the score table names measures as
    ir_measures does (:func:`irrepro.core.trec.trec_eval_measure`), so trec_eval's name (``map``) or another
    ir_measures name of the measure (``MAP``) is refused naming the name to write (``AP``), and so is a measure
    named twice. A name neither tool knows is kept (the file may hold it)."""
    import ir_measures

    names = list(names)
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise InputError(f"config key {key}[{i}]: a measure name is a non-empty string, got {name!r}")
        try:
            canonical = str(ir_measures.parse_measure(name))
            how = "another name of"
        except Exception:  # noqa: BLE001 - not an ir_measures name: maybe trec_eval's
            from irrepro.core.trec import trec_eval_measure

            canonical, how = trec_eval_measure(name), "trec_eval's name of"
        if canonical != name:
            raise InputError(f"config key {key}[{i}]: {name!r} is {how} {canonical!r}, and the score table of a "
                             f"trec_eval import names each measure as ir_measures prints it: write {canonical!r}")
    _same_measure(names, key)


def _check_evaluable(measures, collection) -> None:
    """Refuse what :func:`evaluate_run` cannot compute faithfully: a diversity measure (ad hoc qrels), a measure
    under two names (ir_measures would fill one name and leave the other to the 0 of unretrieved topics)."""
    where = f"the qrels of collection {collection!r} are" if collection else "qrels are"
    seen = {}
    for m in measures:
        if needs_subtopics(m):
            raise InputError(f"measure {m!r} is a diversity measure: it needs a subtopic per judgment, and {where} "
                             "evaluated here as ad hoc qrels (the iteration column is not a subtopic); diversity "
                             "measures are computed by irrepro.papers.vb.diversity")
        if _parsed(m) in seen:
            raise InputError(f"measures {seen[_parsed(m)]!r} and {m!r} are one measure ({_label(_parsed(m))!r})"
                             f"{f' for collection {collection!r}' if collection else ''}; name it once")
        seen[_parsed(m)] = m


def evaluate_run(run: pd.DataFrame, qrels: pd.DataFrame, measures=DEFAULT_MEASURES, *,
                 collection: str | None = None) -> pd.DataFrame:
    """Evaluate one run (``query_id, doc_id, score``) against ad hoc qrels (``query_id, doc_id, relevance``).

    Returns ``topic, measure, value`` for every judged topic x measure. A diversity measure or two names of one
    measure are an ``InputError`` (naming ``collection`` where given).
    """
    _check_evaluable(measures, collection)
    return _Evaluator(qrels, measures)(run)


def _provider_name(measure) -> str | None:
    """The provider that ir_measures' default pipeline computes a parsed measure with: the first available provider,
    in the pipeline's order, that supports it (as ``ir_measures.evaluator`` chooses)."""
    import ir_measures

    return next((p.NAME for p in ir_measures.DefaultPipeline.providers if p.supports(measure) and p.is_available()),
                None)


def _dict_of_dict(qids, docs, scores):
    """The run as ir_measures' dict-of-dict (``{query_id: {doc_id: score}}``), or ``None`` where the dict would not
    list the same (query, document, score) triples in the same order as the rows: a topic whose rows are not
    contiguous, or a document listed twice for one topic. Every ir_measures provider then reads the same run from
    the dict as from the frame, and pytrec_eval takes the dict as it is instead of building it row by row."""
    out, prev, docs_of = {}, object(), None
    for q, d, s in zip(qids, docs, scores):
        if q != prev:
            if q in out:
                return None
            docs_of = out[q] = {}
            prev = q
        if d in docs_of:
            return None
        docs_of[d] = s
    return out


def _gdeval_run_lines(ranked: pd.DataFrame, depth: int) -> list[str]:
    """The lines of the run file that gdeval.pl needs to score a run ranked by :func:`~irrepro.core.trec.sort_run`
    at cutoffs up to ``depth``: each topic's rows ranked ``<= depth``, and the rows below whose score is within
    ``1e-9`` (relative) of the ``depth``-th row's score.

    gdeval.pl orders each topic by descending score, ties by descending docno (as ``sort_run`` does), and its
    nDCG@k and ERR@k read the first k documents only; its ideal DCG comes from the qrels alone. A dropped row scores
    below every kept row of its topic by more than any rounding of Perl's reading of the score could move it, so
    the script ranks the same documents first and prints the same values as for the whole run."""
    rank, score = ranked["rank"], ranked["score"]
    kth = ranked.loc[rank == depth].set_index("query_id")["score"]
    floor = ranked["query_id"].map(kth)  # NaN for a topic with fewer than depth rows: all are kept
    keep = (rank <= depth) | floor.isna() | (score >= floor - 1e-9 * floor.abs())
    top = ranked.loc[keep]
    return [f"{q} Q0 {d} {r} {s} run\n" for q, d, r, s in
            zip(top["query_id"].tolist(), top["doc_id"].tolist(), top["rank"].tolist(), top["score"].tolist())]


def _gdeval_evaluator(measures, qrels: pd.DataFrame):
    """An ir_measures evaluator of the measures that ir_measures computes with its gdeval provider (``ERR@k``, and
    ``nDCG@k`` where no earlier provider computes it), doing the provider's work: the gdeval.pl bundled with
    ir_measures, run once per cutoff on a qrels file (the lines the provider writes) and a run file, its output read
    as the provider reads it. The script and the qrels file's text are prepared once for all runs, and the run file
    holds only the top of each topic's ranking (:func:`_gdeval_run_lines`), so the script's values are the same.

    The evaluator takes a run ranked by :func:`~irrepro.core.trec.sort_run`."""
    import pkgutil
    import subprocess
    import tempfile

    import ir_measures

    class GdevalEvaluator(ir_measures.providers.Evaluator):
        def __init__(self):
            super().__init__(measures, set(qrels["query_id"]))
            kinds = ("nDCG", "ERR")
            by_cutoff = {}
            for m in measures:
                if m.NAME not in kinds:
                    raise ValueError(f"gdeval does not compute {m}")
                by_cutoff.setdefault(m["cutoff"], [None, None])[kinds.index(m.NAME)] = m
            self.invocations = [(cutoff, ndcg, err) for cutoff, (ndcg, err) in by_cutoff.items()]
            self.depth = max(by_cutoff)
            self.script = pkgutil.get_data("ir_measures", "bin/gdeval.pl")
            self.qrels_text = "".join(f"{q} 0 {d} {r}\n" for q, d, r in
                                      zip(qrels["query_id"].tolist(), qrels["doc_id"].tolist(),
                                          qrels["relevance"].tolist()))

        def _iter_calc(self, ranked):
            with tempfile.TemporaryDirectory() as tmp:
                script, qrels_file, run_file = (Path(tmp) / name for name in ("gdeval.pl", "qrels", "run"))
                script.write_bytes(self.script)
                qrels_file.write_text(self.qrels_text)
                run_file.write_text("".join(_gdeval_run_lines(ranked, self.depth)))
                for cutoff, ndcg, err in self.invocations:
                    out = subprocess.check_output(["perl", str(script), str(qrels_file), str(run_file), str(cutoff)])
                    for i, line in enumerate(out.decode().replace("\t", " ").split("\n")):
                        if i == 0 or line == "":
                            continue
                        fields = line.split(",")
                        assert len(fields) == 4
                        _, qid, ndcg_value, err_value = fields
                        if ndcg is not None:
                            yield ir_measures.Metric(query_id=qid, measure=ndcg, value=float(ndcg_value))
                        if err is not None:
                            yield ir_measures.Metric(query_id=qid, measure=err, value=float(err_value))

    return GdevalEvaluator()


class _Evaluator:
    """The qrels and measures of a collection prepared once, then called on each run: the same numbers as evaluating
    each run alone with ``ir_measures.evaluator``.

    The standard measures go to ir_measures: those of its gdeval provider to :func:`_gdeval_evaluator`, the others
    to ``ir_measures.evaluator``, which gets the run as a dict-of-dict where that lists the same run
    (:func:`_dict_of_dict`). The custom ``DCG@k`` is computed from the grades of each topic's top k documents."""

    def __init__(self, qrels: pd.DataFrame, measures):
        import ir_measures

        qrels = qrels.copy()
        qrels["relevance"] = qrels["relevance"].astype(int).clip(lower=0)
        qrels["query_id"] = qrels["query_id"].astype(str)
        self.qrels, self.measures = qrels, list(measures)
        self.judged = sorted(qrels["query_id"].unique())
        std = [m for m in self.measures if _parse_custom(m) is None]
        parsed = [ir_measures.parse_measure(m) for m in std]
        self.names = {p: m for p, m in zip(parsed, std)}
        qrels3 = qrels[["query_id", "doc_id", "relevance"]]
        gdeval = [p for p in parsed if _provider_name(p) == "gdeval"]
        others = [p for p in parsed if p not in gdeval]
        self.evaluator = ir_measures.evaluator(others, qrels3) if others else None
        self.gdeval = _gdeval_evaluator(gdeval, qrels3) if gdeval else None
        self.custom = [(m, c[1]) for m in self.measures if (c := _parse_custom(m)) is not None]
        self.rel = ({(q, d): r for q, d, r in zip(qrels.query_id, qrels.doc_id, qrels.relevance)}
                    if self.custom else {})

    def __call__(self, run: pd.DataFrame) -> pd.DataFrame:
        run = run[["query_id", "doc_id", "score"]].copy()
        run["query_id"] = run["query_id"].astype(str)
        metrics = []
        if self.evaluator is not None:
            as_dict = _dict_of_dict(run["query_id"].tolist(), run["doc_id"].tolist(), run["score"].tolist())
            metrics.extend(self.evaluator.iter_calc(run if as_dict is None else as_dict))
        from irrepro.core.trec import sort_run

        ranked = sort_run(run) if self.gdeval is not None or self.custom else None
        if self.gdeval is not None:
            metrics.extend(self.gdeval.iter_calc(ranked))
        rows = [(m.query_id, self.names.get(m.measure, str(m.measure)), float(m.value)) for m in metrics]
        if self.custom:
            judged = set(self.judged)
            for m, k in self.custom:
                top = {}
                in_top = ranked["rank"] <= k
                for q, d in zip(ranked["query_id"][in_top].tolist(), ranked["doc_id"][in_top].tolist()):
                    if q in judged:
                        top.setdefault(q, []).append(self.rel.get((q, d), 0))
                for q, rels in top.items():
                    rows.append((q, m, dcg_at_k(np.array(rels), k)))
        df = pd.DataFrame(rows, columns=["topic", "measure", "value"])
        # judged topics with no retrieved documents score 0
        full = pd.MultiIndex.from_product([self.judged, self.measures], names=["topic", "measure"])
        df = df.set_index(["topic", "measure"]).reindex(full, fill_value=0.0).reset_index()
        df["value"] = df["value"].astype(float)
        if df["value"].isna().any():
            raise RuntimeError("evaluation produced NaN")
        return df


def evaluate_runs(runs, qrels: pd.DataFrame, measures, collection: str, *, qrels_path=None, topics: str = "strict",
                  log=None) -> pd.DataFrame:
    """Per-topic scores of several run files as the canonical long table (``irrepro.core.scores``).

    ``runs``: ``(system, path)`` pairs. ``topics="strict"``: a run topic the qrels do not judge is an error naming
    both files; ``"judged"``: such topics are dropped. ``log``: a logger told of each run as it is evaluated.
    """
    from irrepro.core.trec import check_run_topics, read_run

    runs = list(runs)
    _check_evaluable(measures, collection)
    judged = set(qrels["query_id"])
    evaluate = _Evaluator(qrels, measures)
    frames = []
    for i, (system, path) in enumerate(runs, 1):
        run = read_run(path, system=system)
        if topics == "strict":
            check_run_topics(run, qrels, path, qrels_path)
        else:
            dropped = sorted(set(run["query_id"]) - judged)
            run = run[run["query_id"].isin(judged)]
            if run.empty:
                raise InputError(f"no topic of the run is judged by the qrels {qrels_path or ''}", path=path)
            if dropped and log is not None:
                log.info("%s: dropped %d unjudged topic(s): %s%s", Path(path).name, len(dropped), dropped[:20],
                         " ..." if len(dropped) > 20 else "")
        ev = evaluate(run)
        ev["system"], ev["collection"] = system, collection
        frames.append(ev)
        if log is not None:
            log.info("[%d/%d] evaluated %s", i, len(runs), Path(path).name)
    return pd.concat(frames, ignore_index=True)


def import_scores(name: str, spec: dict, res, measures, log=None) -> pd.DataFrame:
    """The score table of an import (config ``imports.<name>``): ``matrix`` (topics x systems CSVs, one per
    measure), ``trec_eval`` (``trec_eval -q`` output) or ``runs`` (a directory of run files + qrels). Declared
    artifacts are read from ``<res>/artifacts/``; ``measures`` is the default for a runs import without its own."""
    from irrepro.core.trec import read_matrix_csv, read_qrels, read_trec_eval_q, run_files, run_systems

    def source(entry):
        return f"{res}/artifacts/{entry['artifact']}" if entry.get("artifact") else entry["path"]

    if spec["type"] == "matrix":
        frames = [read_matrix_csv(source(m), collection=name, measure=m["measure"]) for m in spec["matrices"]]
        return pd.concat(frames, ignore_index=True)
    if spec["type"] == "trec_eval":
        return read_trec_eval_q(source(spec), collection=name, measures=spec.get("measures"))
    if spec["type"] == "runs":
        runs = run_systems(run_files(spec["runs"]))
        return evaluate_runs(runs, read_qrels(spec["qrels"]), spec.get("measures") or measures, name,
                             qrels_path=spec["qrels"], topics=spec.get("topics", "strict"), log=log)
    raise ValueError(f"config key imports.{name}.type: unknown type {spec['type']!r}")
