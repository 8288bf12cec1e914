# Self-preference of a labeler (irrepro.selfpref; docs/labels.md, "Self-preference"): does a labeler overrate the
# systems built on its own model? Its own stage after the label stage, usable on its own:
#   snakemake --cores 2 results/v1/labels/self_preference.md
# What it wires comes from PLAN.stages["selfpref"] (irrepro.selfpref.plan; SP / SP_SET in common.smk); which systems
# share a labeler's model: irrepro.plan.same_model.


rule labels_selfpref_pairs:
    """labels.self_preference: the pool one labeler labels on one collection, every compared system's top `depth`
    on the labeler's queries (every judged query, or the label stage's query sample of this labeler); the rule
    labels_audit_pairs is this one on labels.audit's pool (within each query's judged documents where
    judged_only)."""
    input:
        unpack(lambda wc: {f"run_{s}": p for s, p in selfpref_runs(wc).items()}),
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
        stage_pairs=f"{V}/labels/{{collection}}/pairs.tsv",
    output:
        f"{V}/labels/{{collection}}/self_preference/{{labeler}}/pairs.tsv",
    log:
        f"{V}/logs/labels/self_preference/pairs_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/labels_selfpref_pairs/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(sorted(SP)),
        labeler=_alt(LABELS.labelers),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        systems=lambda wc: SP[wc.collection]["systems"],
        depth=SP_SET.get("depth"),
        judged_only=False,
        sample=lambda wc: SP[wc.collection]["sample"].get(wc.labeler),
        seed=config["labels"]["seed"],
    script:
        "../scripts/selfpref/pairs.py"


rule labels_selfpref_labels:
    """labels.self_preference: one labeler's labels of its pool through the label cache (the label stage's own
    pairs are cached already); a calibrated labeler's grades cross-fitted over query folds as in the label stage,
    and its raw scores kept for the coverage draws' refits."""
    input:
        pairs=f"{V}/labels/{{collection}}/self_preference/{{labeler}}/pairs.tsv",
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        docs=lambda wc: docs_inputs(wc.collection),
        files=lambda wc: LABELS.files[wc.labeler],
        stage=f"{V}/labels/{{collection}}/{{labeler}}.tsv",
    output:
        labels=f"{V}/labels/{{collection}}/self_preference/{{labeler}}/labels.tsv",
        raw=f"{V}/labels/{{collection}}/self_preference/{{labeler}}/raw.tsv",
        timing=f"{V}/benchmarks/labels_selfpref_timing/{{collection}}/{{labeler}}.json",
    log:
        f"{V}/logs/labels/self_preference/labels_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/labels_selfpref_labels/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(sorted(SP)),
        labeler=_alt(LABELS.labelers),
    priority: 50
    conda:
        "../envs/labels.yaml"
    threads: lambda wc: _label_threads(LABELS.specs[wc.labeler])
    resources:
        mem_mb=6000,
        runtime=600,
    params:
        spec=lambda wc: LABELS.specs[wc.labeler],
        prompt=lambda wc: config["labels"]["collections"][wc.collection]["prompt"],
        prompt_hash=lambda wc: LABELS.prompt_hashes[wc.collection],
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        home=f"{RES}/ir_datasets",
        cache=LABELS.cache,
    script:
        "../scripts/selfpref/labels.py"


rule labels_self_preference:
    """labels.self_preference: per collection, labeler and system the bias of its score by labels against its
    score by the qrels, the same-model gap, the ranking's tau / tau_AP with and without the same-model systems, and
    the CI paper's coverage per group; one table, one figure."""
    input:
        unpack(selfpref_inputs),
    output:
        csv=f"{V}/labels/self_preference.csv",
        gap=f"{V}/labels/self_preference_gap.csv",
        agreement=f"{V}/labels/self_preference_ranking.csv",
        coverage=f"{V}/labels/self_preference_coverage.csv",
        md=report(
            f"{V}/labels/self_preference.md",
            caption="../report/labels/self_preference.rst",
            category="LLM labels",
            labels={"table": "self-preference"},
        ),
        pdf=f"{V}/labels/self_preference.pdf",
        png=report(
            f"{V}/labels/self_preference.png",
            caption="../report/labels/self_preference.rst",
            category="LLM labels",
            labels={"figure": "self-preference"},
        ),
    log:
        f"{V}/logs/labels/self_preference.log",
    benchmark:
        f"{V}/benchmarks/labels_self_preference/all.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        # dicts as canonical JSON: a config written with its keys in another order changes no param
        plan=lambda wc: json.dumps(SP, sort_keys=True),
        specs=lambda wc: json.dumps({n: LABELS.specs[n] for c in SP for n in SP[c]["labelers"]}, sort_keys=True),
        prompts=lambda wc: json.dumps({c: config["labels"]["collections"][c]["prompt"] for c in SP}, sort_keys=True),
        measures=SP_SET.get("measures"),
        n_boot=SP_SET.get("n_boot"),
        seed=SP_SET.get("seed"),
        coverage_n=(SP_SET.get("coverage") or {}).get("n"),
        coverage_draws=(SP_SET.get("coverage") or {}).get("draws"),
        alpha=config["ci"]["alpha"],
        ci_n_boot=config["ci"]["n_boot"],
        batches=config["ci"]["batches"],
        label_gain=config["ci"]["label_gain"],
    script:
        "../scripts/selfpref/analysis.py"
