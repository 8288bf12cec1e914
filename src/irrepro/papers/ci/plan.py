"""The CI paper's plan: the ``ci`` config section checked against the label stage's and resolved into what the rules
of ``workflow/rules/ci.smk`` wire (:func:`resolve`, called by :func:`irrepro.plan.resolve` after the label stage's
plan, which it reads from ``spine.papers["labels"]``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from irrepro.errors import InputError

FIGURES = ("fig2", "fig3", "fig4")


def parse_measure(name: str) -> tuple[str, int]:
    """``("DCG" | "nDCG", k)`` of a measure name ``DCG@k`` / ``nDCG@k`` (here, not in :mod:`.systems`: the plan
    reads it when the Snakefile is parsed, without the intervals' imports)."""
    m = re.fullmatch(r"(n?DCG)@(\d+)", str(name))
    if not m or int(m.group(2)) < 1:
        raise InputError(f"measure {name!r}: expected DCG@k or nDCG@k (k >= 1)")
    return m.group(1), int(m.group(2))


@dataclass(frozen=True)
class CIPlan:
    """What the CI rules need.

    ``collections``: the analysed collections (config order); ``combos``: every (collection, labeler) pair, the
    labelers of a collection being those of its ``labels.collections`` entry that label every pair (not those of
    its ``sample``); ``values``: the values files of
    Table 1 and Figs 2-4 (the verify table's inputs); ``verify_context``: what the verify table needs besides them
    (the combos the reference rows expand over); ``systems``: the resolved ``ci.systems`` block
    (:func:`resolve_systems`) or None.
    """
    collections: list
    combos: list
    values: list
    verify_context: dict
    systems: dict | None = None


def resolve(config: dict, spine) -> CIPlan:
    """Check the ``ci`` section (the label stage is included and labels every analysed collection) and resolve it;
    errors are :class:`~irrepro.errors.InputError` naming the dotted config key."""
    if spine.papers.get("labels") is None:
        raise InputError("config key papers: `ci` needs the `labels` stage (add labels to papers)")
    lc = config["labels"]["collections"]
    collections = list(config["ci"]["collections"])
    for c in collections:
        if c not in lc:
            raise InputError(f"config key ci.collections: {c!r} has no entry under labels.collections (which ranking "
                             f"and which labelers)")
    combos = [(c, lab) for c in collections for lab in lc[c]["labelers"] if lab not in (lc[c].get("sample") or {})]
    values = [f"{spine.V}/ci/values/table1_{c}.json" for c in collections]
    for fig in FIGURES:
        values += [f"{spine.V}/ci/values/{fig}_{c}_{lab}.json" for c, lab in combos]
    return CIPlan(collections=collections, combos=combos, values=values,
                  verify_context={"combos": [list(t) for t in combos]}, systems=resolve_systems(config, spine))


def resolve_systems(config: dict, spine) -> dict | None:
    """The ``ci.systems`` block checked and resolved: ``collection``, ``systems`` (names in config order),
    ``runs`` (name -> run file: a population run, or an import's run file), ``labeler``, ``prompt``, ``n_grades``
    (its grades; a prompt whose grades do not reach the collection's declared top grade is refused), ``k`` (the
    largest cutoff of ``measures``), ``measures``, ``n``, ``queries``, ``seed``, ``plan_widths``. None when no
    collection is set."""
    cs = config["ci"].get("systems") or {}
    c = cs.get("collection")
    if not c:
        return None
    key = "config key ci.systems"
    if c not in spine.collections:
        raise InputError(f"{key}.collection: {c!r} is not a retrieved collection (collections: {spine.collections}); "
                         "its documents are labelled")
    names = list(cs.get("systems") or [])
    if len(names) < 2 or len(set(names)) != len(names):
        raise InputError(f"{key}.systems: name at least two distinct systems, got {names}")
    runs = {}
    for s in names:
        if "/" in s:
            runs[s] = _import_run(config, s, key)
        elif s in spine.systems[c]:
            runs[s] = f"{spine.V}/runs/{c}/{s}.run"
        else:
            raise InputError(f"{key}.systems: {s!r} is neither a population system of {c} (e.g. "
                             f"{spine.systems[c][:3]}) nor <import>/<system> of an import of type runs")
    lab = cs.get("labeler")
    if lab not in config["labels"]["labelers"]:
        raise InputError(f"{key}.labeler: {lab!r} is not defined under labels.labelers")
    prompt = cs.get("prompt") or (config["labels"]["collections"].get(c) or {}).get("prompt")
    if not prompt:
        raise InputError(f"{key}.prompt: {c} has no labels.collections entry to take its prompt from; set one")
    from irrepro.labels.prompts import get_prompt
    try:
        prompt_obj = get_prompt(prompt)
    except InputError as e:
        raise InputError(f"{key}.prompt: {e}") from None
    prompt_hash, n_grades = prompt_obj.hash, prompt_obj.n_grades
    top = _declared_top_grade(config, c)
    if top is not None and top[0] >= n_grades:
        via = "" if cs.get("prompt") else f" (taken from labels.collections.{c}.prompt)"
        raise InputError(f"{key}.prompt: {prompt!r}{via} has {n_grades} grades (0..{n_grades - 1}) but the qrels of "
                         f"{c} grade up to {top[0]} ({top[1]}); label with a prompt whose grades reach {top[0]}: the "
                         "human values are the qrels' own grades")
    measures = list(cs["measures"])
    try:
        k = max(parse_measure(m)[1] for m in measures)
    except (InputError, ValueError) as e:
        raise InputError(f"{key}.measures: {e}") from None
    queries = None if cs.get("queries") is None else [str(q) for q in cs["queries"]]
    if queries is not None and (len(queries) < 2 or len(set(queries)) != len(queries)):
        raise InputError(f"{key}.queries: give at least two distinct query ids, got {queries}")
    from irrepro.labels.factory import calibration_of
    cal = calibration_of(config["labels"]["labelers"][lab])
    n_lab = len(queries) if queries is not None else int(cs["n"])
    n_key = f"{key}.queries" if queries is not None else f"{key}.n"
    mode = cs.get("mode") or "validation"
    own = mode == "own"
    if own:
        if cs.get("qrels") is None and queries is None:
            raise InputError(f"{key}.qrels: mode own needs the qrels of your judged queries (a file that judges only "
                             "some of the topics' queries) or the list of judged queries in ci.systems.queries")
        for k_ in ("qrels", "topics"):
            if cs.get(k_) is not None and not os.path.isfile(cs[k_]):
                raise InputError(f"{key}.{k_}: file {cs[k_]!r} not found (relative paths are relative to the "
                                 "working directory)")
        if cs.get("qrels") is not None and queries is None and cal is not None:
            n_lab, n_key = _check_own_qrels_for(cs["qrels"], f"{key}.qrels", lab, cal)
    else:
        for k_ in ("qrels", "topics"):
            if cs.get(k_) is not None:
                raise InputError(f"{key}.{k_}: only read in mode own (mode validation evaluates on the collection's "
                                 "own topics and qrels); set ci.systems.mode: own or remove the key")
    if cal is not None and n_lab < int(cal["folds"]):
        raise InputError(f"{n_key}: labeler {lab!r} fits its score-to-grade mapping on the labelled queries in "
                         f"{cal['folds']} folds: label at least {cal['folds']} queries (got {n_lab})")
    baseline = cs.get("baseline") or names[0]
    if baseline not in names:
        raise InputError(f"{key}.baseline: {baseline!r} is not among ci.systems.systems {names}")
    declared = [str(s) for s in cs.get("same_model") or []]
    stray = sorted(set(declared) - set(names))
    if stray:
        raise InputError(f"{key}.same_model: {stray} are not among ci.systems.systems {names}")
    detected = [s for s in names if s not in declared and spine.same_model(s, lab)]
    return {"collection": c, "systems": names, "runs": runs, "labeler": lab, "prompt": prompt,
            "prompt_hash": prompt_hash, "n_grades": n_grades, "k": k, "measures": measures, "n": int(cs["n"]),
            "queries": queries, "seed": int(cs["seed"]), "plan_widths": [float(x) for x in cs["plan_widths"]],
            "mode": mode, "qrels": (cs.get("qrels") or f"{spine.V}/collections/{c}/qrels.txt"),
            "topics": (cs.get("topics") if own and cs.get("topics") else f"{spine.V}/collections/{c}/topics.tsv"),
            "baseline": baseline, "correction": cs.get("correction") or "bonferroni",
            "same_model": [s for s in names if s in declared or s in detected],
            "plan_deltas": [float(x) for x in cs.get("plan_deltas") or [0.05, 0.1, 0.2]],
            "plan_power": float(cs.get("plan_power") or 0.8)}


def _check_own_qrels_for(path: str, key: str, labeler: str, cal: dict) -> tuple[int, str]:
    """Own mode with a calibrated labeler: ``(n, where)``, the number of queries the qrels file at ``path`` judges
    (the labelled queries) and how to name them. Qrels without a judgment above grade 0 are refused here, before
    anything is labelled: the labeler fits its score-to-grade mapping on the judged queries' pooled documents, whose
    unjudged ones count as 0, so every training grade would be 0 (qrels that list relevant documents only are
    fine: the unjudged ones give the 0s)."""
    from irrepro.core.trec import read_qrels

    q = read_qrels(path)
    if not (q["relevance"].astype(float) > 0).any():
        raise InputError(f"{key}: no judgment in {path} is above grade 0; labeler {labeler!r} fits its "
                         "score-to-grade mapping on the judged queries' grades (unjudged documents count as 0): "
                         "with grade 0 only there is nothing to fit")
    return q["query_id"].astype(str).nunique(), f"{key} ({path}: the queries it judges)"


def check_pool_measures(section: dict, key: str) -> None:
    """Each of ``section``'s measures is the CI evaluator's DCG@k / nDCG@k with k within its pool ``depth``; an
    error names ``<key>.measures[i]``."""
    depth = int(section.get("depth", 10))
    for i, m in enumerate(section.get("measures", [])):
        try:
            _, k = parse_measure(m)
        except InputError as e:
            raise InputError(f"config key {key}.measures[{i}]: {e}") from None
        if k > depth:
            raise InputError(f"config key {key}.measures[{i}]: {m} needs the top {k}; depth is {depth}")


def _declared_top_grade(config: dict, collection: str):
    """``(top grade, where it is declared)`` of a retrieved collection's qrels before any is read: the highest grade
    its ``collections.<c>.grades`` mapping gives, else the highest grade ir_datasets' ``qrels_defs`` declares; None
    when neither says (the ``ci_systems_pairs`` job checks the qrels themselves)."""
    spec = (config.get("collections") or {}).get(collection) or {}
    if spec.get("grades"):
        return max(0, *spec["grades"].values()), f"collections.{collection}.grades"
    import ir_datasets

    ds_id = spec.get("ir_datasets")
    if ds_id not in ir_datasets.registry:
        return None
    ds = ir_datasets.load(ds_id)
    defs = ds.qrels_defs() if ds.has_qrels() else {}
    return (max(0, *map(int, defs)), f"ir_datasets {ds_id!r} declares grades {sorted(defs)}") if defs else None


def _import_run(config: dict, name: str, key: str) -> str:
    """The run file of ``<import>/<system>`` (an import of type runs)."""
    from irrepro.core.trec import run_files, run_systems

    imp, system = name.split("/", 1)
    spec = (config.get("imports") or {}).get(imp)
    if spec is None or spec.get("type") != "runs":
        raise InputError(f"{key}.systems: {name!r}: {imp!r} is not an import of type runs")
    found = dict(run_systems(run_files(spec["runs"])))
    if system not in found:
        raise InputError(f"{key}.systems: {name!r}: no run file of system {system!r} in {spec['runs']} (systems: "
                         f"{sorted(found)[:5]})")
    return str(found[system])
