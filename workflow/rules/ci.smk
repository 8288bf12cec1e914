# P3: reliable confidence intervals for IR evaluation with LLM labels (Oosterhuis et al., KDD 2024).
# Empirical bootstrap, PPI and CRC around DCG@10 of a ranking, from the label stage's distributions.
#   snakemake --cores 2 ci_all
#   snakemake --cores 1 results/v1/ci/fig2_dl19-pool_flant5-large.png
# What it wires comes from PLAN.papers["ci"] (irrepro.papers.ci.plan); each rule gets only the config keys it uses.

CI = PLAN.papers["ci"]
if CI.collections:
    VERIFY_VALUES["ci"] = CI.values
    VERIFY_CONTEXT["ci"] = CI.verify_context


rule ci_table1:
    """Table 1: DCG@10 of the Random, BM25, LLM and Perfect rankers of BM25's top candidates, by human labels and
    by every labeler."""
    input:
        pairs=f"{V}/labels/{{collection}}/pairs.tsv",
        labels=lambda wc: [f"{V}/labels/{wc.collection}/{n}.tsv" for n in LABELS.complete[wc.collection]],
    output:
        csv=f"{V}/ci/table1_{{collection}}.csv",
        md=report(
            f"{V}/ci/table1_{{collection}}.md",
            caption="../report/ci/table1.rst",
            category="CI with LLM labels",
            labels={"table": "Table 1", "data": "{collection}"},
        ),
        values=f"{V}/ci/values/table1_{{collection}}.json",
    log:
        f"{V}/logs/ci/table1_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/ci_table1/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(CI.collections),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        k=config["ci"]["k"],
        labelers=lambda wc: LABELS.complete[wc.collection],
        label_gain=config["ci"]["label_gain"],
    script:
        "../scripts/ci/table1.py"


rule ci_fig2:
    """Fig 2: width and coverage of bootstrap, PPI and CRC intervals against the number of human-labelled queries."""
    input:
        pairs=f"{V}/labels/{{collection}}/pairs.tsv",
        labels=f"{V}/labels/{{collection}}/{{labeler}}.tsv",
    output:
        csv=f"{V}/ci/fig2_{{collection}}_{{labeler}}.csv",
        runs=f"{V}/ci/runs/fig2_{{collection}}_{{labeler}}.csv.gz",
        pdf=f"{V}/ci/fig2_{{collection}}_{{labeler}}.pdf",
        png=report(
            f"{V}/ci/fig2_{{collection}}_{{labeler}}.png",
            caption="../report/ci/fig2.rst",
            category="CI with LLM labels",
            labels={"figure": "Fig 2", "data": "{collection} / {labeler}"},
        ),
        values=f"{V}/ci/values/fig2_{{collection}}_{{labeler}}.json",
    log:
        f"{V}/logs/ci/fig2_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/ci_fig2/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(CI.collections),
    priority: 30
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=60,
    params:
        k=config["ci"]["k"],
        n_values=config["ci"]["n_values"],
        repetitions=config["ci"]["repetitions"],
        seed=config["ci"]["seed"],
        alpha=config["ci"]["alpha"],
        n_boot=config["ci"]["n_boot"],
        batches=config["ci"]["batches"],
        target=config["ci"]["target"],
        split=config["ci"]["split"],
        bootstrap=config["ci"]["bootstrap"],
        label_gain=config["ci"]["label_gain"],
    script:
        "../scripts/ci/fig2.py"


rule ci_fig3:
    """Fig 3: interval width under adversarial label bias β and oracle-improved labels ζ."""
    input:
        pairs=f"{V}/labels/{{collection}}/pairs.tsv",
        labels=f"{V}/labels/{{collection}}/{{labeler}}.tsv",
    output:
        csv=f"{V}/ci/fig3_{{collection}}_{{labeler}}.csv",
        pdf=f"{V}/ci/fig3_{{collection}}_{{labeler}}.pdf",
        png=report(
            f"{V}/ci/fig3_{{collection}}_{{labeler}}.png",
            caption="../report/ci/fig3.rst",
            category="CI with LLM labels",
            labels={"figure": "Fig 3", "data": "{collection} / {labeler}"},
        ),
        values=f"{V}/ci/values/fig3_{{collection}}_{{labeler}}.json",
    log:
        f"{V}/logs/ci/fig3_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/ci_fig3/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(CI.collections),
    priority: 40
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=60,
    params:
        k=config["ci"]["k"],
        fig3_n=config["ci"]["fig3_n"],
        betas=config["ci"]["betas"],
        zetas=config["ci"]["zetas"],
        repetitions=config["ci"]["repetitions"],
        seed=config["ci"]["seed"],
        alpha=config["ci"]["alpha"],
        n_boot=config["ci"]["n_boot"],
        batches=config["ci"]["batches"],
        target=config["ci"]["target"],
        split=config["ci"]["split"],
        bootstrap=config["ci"]["bootstrap"],
        label_gain=config["ci"]["label_gain"],
    script:
        "../scripts/ci/fig3.py"


rule ci_fig4:
    """Fig 4: per-query CRC intervals on the test queries for several oracle weights ζ."""
    input:
        pairs=f"{V}/labels/{{collection}}/pairs.tsv",
        labels=f"{V}/labels/{{collection}}/{{labeler}}.tsv",
    output:
        csv=f"{V}/ci/fig4_{{collection}}_{{labeler}}.csv",
        pdf=f"{V}/ci/fig4_{{collection}}_{{labeler}}.pdf",
        png=report(
            f"{V}/ci/fig4_{{collection}}_{{labeler}}.png",
            caption="../report/ci/fig4.rst",
            category="CI with LLM labels",
            labels={"figure": "Fig 4", "data": "{collection} / {labeler}"},
        ),
        values=f"{V}/ci/values/fig4_{{collection}}_{{labeler}}.json",
    log:
        f"{V}/logs/ci/fig4_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/ci_fig4/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(CI.collections),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        k=config["ci"]["k"],
        zetas=config["ci"]["fig4_zetas"],
        n_cal=config["ci"]["fig4_n"],
        label_gain=config["ci"]["label_gain"],
        seed=config["ci"]["seed"],
        alpha=config["ci"]["alpha"],
    script:
        "../scripts/ci/fig4.py"


# ci.systems (docs/ci.md, "Evaluate your run with 10 human-labelled queries"): no job when its collection is unset.
CIS = CI.systems or {}


rule ci_systems_pairs:
    """ci.systems: the pool to label (every chosen system's top k of each judged query; pairs the label stage
    labelled are in the cache) and the human-labelled queries (drawn with ci.systems.seed, or the list)."""
    input:
        runs=lambda wc: list(CIS["runs"].values()),
        qrels=lambda wc: CIS["qrels"],
        topics=lambda wc: CIS["topics"],
        labelled_pairs=lambda wc: (
            [f"{V}/labels/{wc.collection}/pairs.tsv"] if wc.collection in LABELS.collections else []
        ),
    output:
        pairs=f"{V}/ci/systems/{{collection}}/pairs.tsv",
        queries=f"{V}/ci/systems/{{collection}}/queries.tsv",
    log:
        f"{V}/logs/ci/systems_pairs_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/ci_systems_pairs/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt([CIS["collection"]] if CIS else []),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        systems=lambda wc: CIS["systems"],
        k=lambda wc: CIS["k"],
        n=lambda wc: CIS["n"],
        queries=lambda wc: CIS["queries"],
        seed=lambda wc: CIS["seed"],
        prompt=lambda wc: CIS["prompt"],
        n_grades=lambda wc: CIS["n_grades"],
        mode=lambda wc: CIS["mode"],
    script:
        "../scripts/ci/systems_pairs.py"


rule ci_systems_labels:
    """ci.systems: the pool labelled by the configured labeler through the label cache; a calibrated labeler's
    mapping is fitted on the human-labelled queries' grades only."""
    input:
        pairs=f"{V}/ci/systems/{{collection}}/pairs.tsv",
        queries=f"{V}/ci/systems/{{collection}}/queries.tsv",
        topics=lambda wc: CIS["topics"],
        docs=lambda wc: docs_inputs(wc.collection),
        files=lambda wc: LABELS.files[CIS["labeler"]],
        # the label stage labels its own pairs first (its pairs/s and, for batch-dependent kernels, its values do
        # not depend on which job the scheduler ran first); this job then labels only the pairs it adds
        stage=lambda wc: (
            [f"{V}/labels/{wc.collection}/{CIS['labeler']}.tsv"]
            if wc.collection in LABELS.collections
            and CIS["labeler"] in config["labels"]["collections"][wc.collection]["labelers"]
            else []
        ),
    output:
        labels=f"{V}/ci/systems/{{collection}}/labels.tsv",
        timing=f"{V}/benchmarks/ci_systems_labels_timing/{{collection}}.json",
    log:
        f"{V}/logs/ci/systems_labels_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/ci_systems_labels/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt([CIS["collection"]] if CIS else []),
    priority: 50
    conda:
        "../envs/labels.yaml"
    threads: lambda wc: _label_threads(LABELS.specs[CIS["labeler"]])
    resources:
        mem_mb=6000,
        runtime=600,
    params:
        labeler=lambda wc: CIS["labeler"],
        spec=lambda wc: LABELS.specs[CIS["labeler"]],
        prompt=lambda wc: CIS["prompt"],
        prompt_hash=lambda wc: CIS["prompt_hash"],
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        home=f"{RES}/ir_datasets",
        cache=LABELS.cache,
    script:
        "../scripts/ci/systems_labels.py"


rule ci_systems:
    """ci.systems: per system and measure the bootstrap, PPI, PPI++ and CRC intervals (beside the value by all
    human labels in mode validation), each system's difference from the baseline and the labels' bias."""
    input:
        runs=lambda wc: list(CIS["runs"].values()),
        qrels=lambda wc: CIS["qrels"],
        topics=lambda wc: CIS["topics"],
        labels=f"{V}/ci/systems/{{collection}}/labels.tsv",
        queries=f"{V}/ci/systems/{{collection}}/queries.tsv",
    output:
        csv=f"{V}/ci/systems_{{collection}}.csv",
        per_query=f"{V}/ci/systems/{{collection}}/per_query.csv",
        md=report(
            f"{V}/ci/systems_{{collection}}.md",
            caption="../report/ci/systems.rst",
            category="CI with LLM labels",
            labels={"table": "your systems", "data": "{collection}"},
        ),
        pdf=f"{V}/ci/systems_{{collection}}.pdf",
        png=report(
            f"{V}/ci/systems_{{collection}}.png",
            caption="../report/ci/systems.rst",
            category="CI with LLM labels",
            labels={"figure": "your systems", "data": "{collection}"},
        ),
    log:
        f"{V}/logs/ci/systems_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/ci_systems/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt([CIS["collection"]] if CIS else []),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        systems=lambda wc: CIS["systems"],
        measures=lambda wc: CIS["measures"],
        labeler=lambda wc: CIS["labeler"],
        seed=lambda wc: CIS["seed"],
        mode=lambda wc: CIS["mode"],
        baseline=lambda wc: CIS["baseline"],
        correction=lambda wc: CIS["correction"],
        same_model=lambda wc: CIS["same_model"],
        alpha=config["ci"]["alpha"],
        n_boot=config["ci"]["n_boot"],
        batches=config["ci"]["batches"],
        label_gain=config["ci"]["label_gain"],
    script:
        "../scripts/ci/systems.py"


rule ci_systems_plan:
    """ci.systems planning: interval width against the number of human-labelled queries, and the number each
    target width needs, per system and method."""
    input:
        systems=f"{V}/ci/systems_{{collection}}.csv",
        per_query=f"{V}/ci/systems/{{collection}}/per_query.csv",
    output:
        csv=f"{V}/ci/systems_plan_{{collection}}.csv",
        md=report(
            f"{V}/ci/systems_plan_{{collection}}.md",
            caption="../report/ci/systems_plan.rst",
            category="CI with LLM labels",
            labels={"table": "planning: human-labelled queries needed", "data": "{collection}"},
        ),
        pdf=f"{V}/ci/systems_plan_{{collection}}.pdf",
        png=report(
            f"{V}/ci/systems_plan_{{collection}}.png",
            caption="../report/ci/systems_plan.rst",
            category="CI with LLM labels",
            labels={"figure": "planning: width against n", "data": "{collection}"},
        ),
        power_csv=f"{V}/ci/systems_power_{{collection}}.csv",
        power_md=report(
            f"{V}/ci/systems_power_{{collection}}.md",
            caption="../report/ci/systems_plan.rst",
            category="CI with LLM labels",
            labels={"table": "planning: judged queries to detect a difference", "data": "{collection}"},
        ),
    log:
        f"{V}/logs/ci/systems_plan_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/ci_systems_plan/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt([CIS["collection"]] if CIS else []),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        measures=lambda wc: CIS["measures"],
        plan_widths=lambda wc: CIS["plan_widths"],
        plan_deltas=lambda wc: CIS["plan_deltas"],
        plan_power=lambda wc: CIS["plan_power"],
        alpha=config["ci"]["alpha"],
    script:
        "../scripts/ci/systems_plan.py"


rule ci_all:
    input:
        [f"{V}/ci/table1_{c}.md" for c in CI.collections],
        [f"{V}/ci/{fig}_{c}_{l}.png" for fig in ("fig2", "fig3", "fig4") for c, l in CI.combos],
        [f"{V}/ci/verify.csv"] if CI.collections else [],
        (
            [
                f"{V}/ci/systems_{CI.systems['collection']}.md",
                f"{V}/ci/systems_plan_{CI.systems['collection']}.md",
            ]
            if CI.systems
            else []
        ),
