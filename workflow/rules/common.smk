# Shared definitions: the config validated against its schemas and resolved once into PLAN (irrepro.plan), paths,
# input functions. Paper rule files read their own part as PLAN.papers["<paper>"].
import json
import os
import re
import time
from pathlib import Path


from irrepro.core.provenance import record_run
from irrepro.core.trec import run_files
from irrepro.labels.stage import job_threads as _label_threads
from irrepro.datasets.integrity import verify_artifact_cache
from irrepro.plan import neural_settings
from irrepro.plan import resolve as _resolve_plan
from irrepro.repro.plan import resolve as _repro_plan
from irrepro.retrieval.lucene import parse_system as _lucene_system
from irrepro.schema import validate_config
from irrepro.stats.plan import measures as _stats_measures

# Reproducible figures: matplotlib stamps PDFs with SOURCE_DATE_EPOCH instead of the clock (jobs inherit it).
os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
# Jobs import irrepro from this repository's src/ whichever Python runs them (the venv of `make setup`, or a per-rule
# conda environment of workflow/envs/ under `--sdm conda`, which holds irrepro's dependencies but not irrepro).
_SRC = str(Path(workflow.basedir) / "src")
os.environ.update(
    PYTHONPATH=os.pathsep.join([_SRC] + [p for p in os.getenv("PYTHONPATH", "").split(os.pathsep) if p and p != _SRC])
)

SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"
# when this run began: its record (provenance.smk, onsuccess) lists the result files written since
RUN_STARTED = time.time()

# Validate against the schemas (workflow/schemas/), filling defaults; an error names the dotted key in one line.
validate_config(config, SCHEMAS)
# The config's checks that need ir_datasets' registry (~0.2 s to import) run in the main Snakemake process; a cluster
# job's own Snakemake processes (two per job) read the same config that process checked.
PLAN = _resolve_plan(config, check_ids=workflow.is_main_process)
# A cached artifact a person edited stops the run before any job reads it (memoised md5: one stat per file).
verify_artifact_cache(f"{PLAN.res}/artifacts")

REPO = workflow.basedir  # the repository root: use it for files shipped with the workflow (workflow/resources/...)
REFERENCE = f"{REPO}/workflow/resources/reference"  # the papers' numbers: <paper>.yaml
VERSION = PLAN.version
V = PLAN.V
RES = PLAN.res
MIRROR = PLAN.mirror
# Local models converted once for fast loading (irrepro.labels.backends.smollm2.converted_smollm2) live with the other
# downloads; jobs inherit the variable. Loading only: labels and their cache keys do not depend on it.
os.environ.setdefault("IRREPRO_MODEL_CACHE", os.path.abspath(f"{RES}/models"))

COLLECTIONS = PLAN.collections  # retrieved on (have documents)
IMPORTS = PLAN.imports  # per-topic data imported from files
ALL_SCORED = PLAN.all_scored
SYSTEMS = PLAN.systems
NEURAL = PLAN.neural  # collection -> its neural systems (also in SYSTEMS)
NEURAL_NAMES = sorted({s for names in NEURAL.values() for s in names})
CLASSIC_SYSTEMS = sorted({s for c in SYSTEMS for s in SYSTEMS[c]} - set(NEURAL_NAMES))

PAPERS_PRESENT = list(PLAN.papers)
# each paper's rules file, the label stage's analyses (PLAN.stages: selfpref.smk, audit.smk) right after labels.smk
PAPER_RULEFILES = [
    f"workflow/rules/{name}.smk" for p in PAPERS_PRESENT for name in [p, *(PLAN.stages if p == "labels" else [])]
]

# Filled by each paper's rules file, the values files its verify table is built from, and a JSON-able context for
# its `irrepro.papers.<paper>.verify.prepare` hook (the generic verify step of verify.smk).
VERIFY_VALUES = {}
VERIFY_CONTEXT = {}


def _alt(names):
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


def neural_gpus(models):
    """The Snakemake resource ``gpu`` of a neural job: 1 where one of its models encodes on a GPU
    (population.neural.models.<model>.device), which the SLURM executor submits as ``--gpus=1``."""
    return int(any(neural_settings(config, m).get("device", "cpu") != "cpu" for m in models))


def neural_run_inputs(wc):
    """A neural system's inputs: the document encodings of each model it uses, and the run file of its first
    stage when that is a population (PISA) system."""
    from irrepro.retrieval import neural

    sy = neural.parse_system(wc.system)
    out = {f"index_{m}": PLAN.neural_index(wc.collection, m) for m in PLAN.neural_models(wc.collection, wc.system)}
    if not sy.neural_first:
        out["first"] = f"{V}/runs/{wc.collection}/{sy.first}.run"
    return out


def spine_targets():
    """Every output of the spine for the configured collections and imports."""
    t = [f"{V}/scores/{c}.tsv" for c in ALL_SCORED]
    t += [f"{V}/tables/population_{c}.csv" for c in COLLECTIONS]
    t += [f"{V}/figures/population_{c}.png" for c in COLLECTIONS]
    t += [f"{V}/runs/{c}/ir-metadata/{s}.yml" for c in COLLECTIONS for s in SYSTEMS[c]]
    t += [f"{V}/provenance.json"]
    return t


def runs_of(collection):
    return [f"{V}/runs/{collection}/{s}.run" for s in SYSTEMS[collection]]


def artifact(name):
    """Local path of a declared artifact (irrepro/data/artifacts.tsv); rule fetch_artifact provides it."""
    return f"{RES}/artifacts/{name}"


def docs_inputs(collection):
    """The JSONL artifact a collection's documents come from (config docs_artifact), else nothing."""
    a = config["collections"][collection].get("docs_artifact")
    return [artifact(a)] if a else []


def import_measures(name):
    """The global ``measures`` where an import computes them (a runs import without its own list), else None."""
    spec = config["imports"][name]
    return config["measures"] if spec["type"] == "runs" and not spec.get("measures") else None


def import_inputs(name):
    """Files an import reads: declared artifacts are fetched (and md5-checked) first, local paths used as they are."""
    spec = config["imports"][name]
    files = []
    if spec["type"] == "matrix":
        for m in spec["matrices"]:
            files.append(artifact(m["artifact"]) if m.get("artifact") else m["path"])
    elif spec["type"] == "trec_eval":
        files.append(artifact(spec["artifact"]) if spec.get("artifact") else spec["path"])
    elif spec["type"] == "runs":
        files.append(spec["qrels"])
        files += [str(p) for p in run_files(spec["runs"])]
    return files


# ---------------------------------------------------------------- labels.smk


def label_shards(wc):
    """The shard tables of a (collection, labeler): as many as the checkpoint labels_shard_plan counted."""
    plan = checkpoints.labels_shard_plan.get(collection=wc.collection).output[0]
    n = json.loads(Path(plan).read_text())["shards"]
    return [f"{V}/labels/{wc.collection}/{wc.labeler}/shard-{i}-of-{n}.tsv" for i in range(n)]


# ---------------------------------------------------------------- bv.smk


def bv_sim_inputs(wc):
    """Run files and qrels of a simulated collection: the population's runs, or a user's import of type runs."""
    c = wc.collection
    if c in COLLECTIONS:
        return {"runs": runs_of(c), "qrels": f"{V}/collections/{c}/qrels.txt"}
    return BV_PLAN.simulation_imports[c]


# ---------------------------------------------------------------- querymodels.smk


def querymodels_targets():
    return [f"{V}/bv/querymodels/{c}.tsv" for c in config["querymodels"]["collections"]]


# ---------------------------------------------------------------- sampling.smk


def _synth_only(value):
    """A param only the SYNTH job of a wildcard rule uses (None for a collection)."""
    return lambda wc: value if wc.collection == "synth" else None


def _trec_only(value):
    """A param only the jobs on a collection (the TREC substitute) use (None for SYNTH)."""
    return lambda wc: None if wc.collection == "synth" else value


def _sampling_inputs(wc):
    if wc.collection == "synth":
        return {}
    return {"runs": runs_of(wc.collection), "qrels": f"{V}/collections/{wc.collection}/qrels.txt"}


# ---------------------------------------------------------------- vb.smk


def _vb_runs(wc):
    return list(VB.runs[wc.collection].values())


def _vb_systems(wc):
    return list(VB.runs[wc.collection])


def vb_targets():
    t = [
        f"{V}/vb/table1.csv",
        f"{V}/vb/table1.md",
        f"{V}/vb/case_studies.csv",
        f"{V}/vb/case_studies.md",
        f"{V}/vb/verify.csv",
        f"{V}/vb/verify.md",
    ]
    if VB.collections:
        t += [f"{V}/vb/intents_summary.csv", f"{V}/vb/intents_summary.md"]
    for c in VB.with_runs:
        t += [f"{V}/vb/{c}/summary.csv", f"{V}/vb/{c}/summary.md", f"{V}/vb/{c}/compare.csv", f"{V}/vb/{c}/compare.md"]
        t += [f"{V}/vb/{c}/fig{n}.{ext}" for n in (2, 3, 4) for ext in ("pdf", "png")]
        t += [f"{V}/vb/{c}/sensitivity.csv", f"{V}/vb/{c}/sensitivity.md"]
    return t


# ---------------------------------------------------------------- stats.smk


# the measures compared per collection (irrepro.stats.plan.measures); empty when stats.enabled is false
STATS_MEASURES = {c: _stats_measures(config, PLAN, c) for c in ALL_SCORED} if config["stats"]["enabled"] else {}


def stats_targets():
    """Every table and figure of the stats stage (none when stats.enabled is false)."""
    t = [f"{V}/stats/{c}/{m}.{ext}" for c, ms in STATS_MEASURES.items() for m in ms for ext in ("csv", "md", "png")]
    return t + [f"{V}/stats/{c}/{f}" for c in STATS_MEASURES for f in ("reliability.csv", "power.csv", "dstudy.png")]


# ---------------------------------------------------------------- repro.smk

# the repro stage's plan (irrepro.repro.plan); None when repro.enabled is false
REPRO = _repro_plan(config, PLAN) if config["repro"]["enabled"] else None


def lucene_analyzer(collection, key):
    """The analyzer whose Lucene index of ``collection`` has ``key``."""
    return next(a for (c, a), k in REPRO.index_keys.items() if c == collection and k == key)


def lucene_index_of(collection, system):
    """The Lucene index a Lucene system runs on (its analyzer's)."""
    return REPRO.index(RES, collection, _lucene_system(system).analyzer)


def repro_runs(collection):
    """The run files a collection's comparisons read: its Lucene runs, then the PISA runs."""
    return [f"{V}/repro/runs/{collection}/{s}.run" for s in REPRO.lucene_systems] + [
        f"{V}/runs/{collection}/{s}.run" for s in REPRO.pisa_systems
    ]


def repro_targets():
    """Every table and figure of the repro stage (none when repro.enabled is false)."""
    if not REPRO:
        return []
    return [f"{V}/repro/{c}.{ext}" for c in REPRO.collections for ext in ("csv", "md", "pdf", "png")]


# ---------------------------------------------------------------- verify.smk


def verify_papers():
    """Papers with a verify table: those whose rule file registered values files."""
    return [p for p in PAPERS_PRESENT if VERIFY_VALUES.get(p)]


def verify_tables():
    """Every paper's verify table, in the papers' order."""
    return [f"{V}/{p}/verify.csv" for p in verify_papers()]


# ---------------------------------------------------------------- cost.smk and the default target


def verify_evidence(paper):
    """What a paper's evidence functions (irrepro.papers.<paper>.evidence) read: ``(files, settings)``. bv: the
    score tables of Table 9's collections and Table 8's, with the measures, the bv.table9 settings and bv.seed
    (the seed of its resampling evidence); sampling: the half-width readings of Table 4. Other papers: none."""
    if paper == "sampling":
        return [f"{V}/sampling/ci_halfwidth_readings.csv"], {}
    if paper != "bv":
        return [], {}
    t8 = [BV_PLAN.table8, config["bv"]["table8"]["measure"]] if BV_PLAN.table8 else None
    colls = sorted(set(BV_PLAN.table9) | ({BV_PLAN.table8} if BV_PLAN.table8 else set()))
    settings = {
        "table9": dict(BV_PLAN.table9),
        "table9_settings": {k: v for k, v in config["bv"]["table9"].items() if k != "collections"},
        "table8": t8,
        "seed": config["bv"]["seed"],
    }
    return [f"{V}/scores/{c}.tsv" for c in colls], settings


def before_cost():
    """Everything the default target builds except the cost table itself (which must come last)."""
    return [
        *spine_targets(),
        *querymodels_targets(),
        *stats_targets(),
        *repro_targets(),
        *rules.verify_summary.output,
        *[f for p in PAPERS_PRESENT for f in getattr(rules, f"{p}_all").input],
    ]


# labels.self_preference (rules in selfpref.smk): collection -> systems, labelers, same-model flags; shared settings

SP = (PLAN.stages.get("selfpref") or {}).get("collections") or {}
SP_SET = (PLAN.stages.get("selfpref") or {}).get("settings") or {}


def selfpref_runs(wc):
    return {s: f"{V}/runs/{wc.collection}/{s}.run" for s in SP[wc.collection]["systems"]}


def selfpref_inputs(wc):
    """Every (collection, labeler) of labels.self_preference: its pool, labels and raw scores, and the runs."""
    out = {}
    for c, spec in SP.items():
        out[f"qrels_{c}"] = f"{V}/collections/{c}/qrels.txt"
        for s in spec["systems"]:
            out[f"run_{c}_{s}"] = f"{V}/runs/{c}/{s}.run"
        for n in spec["labelers"]:
            for what in ("pairs", "labels", "raw"):
                out[f"{what}_{c}_{n}"] = f"{V}/labels/{c}/self_preference/{n}/{what}.tsv"
    return out


# labels.audit (rules in audit.smk): collection -> systems, labelers, judged_only, same-model flags; shared settings

AUD = (PLAN.stages.get("audit") or {}).get("collections") or {}
AUD_SET = (PLAN.stages.get("audit") or {}).get("settings") or {}


def audit_runs(wc):
    return {f"run_{s}": f"{V}/runs/{wc.collection}/{s}.run" for s in AUD[wc.collection]["systems"]}


def audit_labels_after(wc):
    """The self-preference labels of the same collection and labeler, where that stage labels them: the audit's
    label job runs after that job and finds the pairs both label in the label cache. Run side by side, both jobs
    computed those pairs, each in its own batches, and the cache kept whichever finished first (labels that differ in
    their last bits from run to run)."""
    if wc.labeler in (SP.get(wc.collection) or {}).get("labelers", ()):
        return {"selfpref": f"{V}/labels/{wc.collection}/self_preference/{wc.labeler}/labels.tsv"}
    return {}


def audit_outputs():
    """The judge audit's per-(collection, labeler) tables, which the gathering rule reads."""
    return {
        f"{what}_{c}_{n}": f"{V}/labels/audit/{c}/{n}/{what}.csv"
        for c, spec in AUD.items()
        for n in spec["labelers"]
        for what in ("rankings", "decisions", "means")
    }
