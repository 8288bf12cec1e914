# P4, VB-Score (Ding 2025, seed 000): variance-bounded evaluation across query intents.
# Intents = TREC Web diversity subtopics; systems = the configured run files. Outputs under results/<v>/vb/.
# Plan: irrepro.papers.vb.plan (collections, run files per collection, the collections of the verify table).

VB = PLAN.papers["vb"]
_VB = config["vb"]


rule vb_paper:
    """Table 1 recomputed from its ES column; the Sec. 5 case studies; the paper's range/monotonicity claims."""
    input:
        reference=f"{REFERENCE}/vb.yaml",
    output:
        table1=f"{V}/vb/table1.csv",
        table1_md=f"{V}/vb/table1.md",
        cases=f"{V}/vb/case_studies.csv",
        cases_md=f"{V}/vb/case_studies.md",
        reproduced=f"{V}/vb/paper_items.json",
    log:
        f"{V}/logs/vb/paper.log",
    benchmark:
        f"{V}/benchmarks/vb_paper.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        alphas=_VB["alphas"],
    script:
        "../scripts/vb/paper.py"


rule vb_data:
    """Topics, per-subtopic qrels (subtopic in column 2) and the intent table of a diversity collection."""
    output:
        topics=f"{V}/vb/data/{{collection}}/topics.tsv",
        qrels=f"{V}/vb/data/{{collection}}/qrels.txt",
        intents=f"{V}/vb/data/{{collection}}/intents.csv",
    log:
        f"{V}/logs/vb/data_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/vb_data/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(VB.collections),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        dataset=lambda wc: _VB["collections"][wc.collection]["ir_datasets"],
        min_relevance=_VB["min_relevance"],
        mass=_VB["mass"],
        temperature=_VB["temperature"],
        truncation=json.dumps(_VB["truncation"], sort_keys=True),
        mirror=MIRROR,
        home=f"{RES}/ir_datasets",
    script:
        "../scripts/vb/data.py"


rule vb_intents_summary:
    """Intents per topic and how peaked the judged-mass prior is, for every configured diversity collection."""
    input:
        intents=expand(f"{V}/vb/data/{{c}}/intents.csv", c=VB.collections),
        topics=expand(f"{V}/vb/data/{{c}}/topics.tsv", c=VB.collections),
    output:
        csv=f"{V}/vb/intents_summary.csv",
        md=f"{V}/vb/intents_summary.md",
    log:
        f"{V}/logs/vb/intents_summary.log",
    benchmark:
        f"{V}/benchmarks/vb_intents_summary.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        collections=list(VB.collections),
    script:
        "../scripts/vb/intents_summary.py"


rule vb_scores:
    """Per-topic ES/VB of every run (gains x priors x k x alpha), collection VB@k with CIs over queries and over
    pooled intents, and Monte Carlo replicas (Algorithm 1)."""
    input:
        runs=_vb_runs,
        qrels=f"{V}/vb/data/{{collection}}/qrels.txt",
        intents=f"{V}/vb/data/{{collection}}/intents.csv",
    output:
        per_topic=f"{V}/vb/{{collection}}/per_topic.csv",
        summary=f"{V}/vb/{{collection}}/summary.csv",
        summary_md=f"{V}/vb/{{collection}}/summary.md",
        forest=f"{V}/vb/{{collection}}/forest.csv",
        per_topic_ci=f"{V}/vb/{{collection}}/per_topic_ci.csv",
        replicas=f"{V}/vb/{{collection}}/replicas.csv",
    log:
        f"{V}/logs/vb/scores_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/vb_scores/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(VB.with_runs),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        **{
            k: _VB[k]
            for k in (
                "seed",
                "alphas",
                "ks",
                "gains",
                "priors",
                "min_relevance",
                "n_boot",
                "ci_level",
                "forest_k",
                "replicas",
                "concentration",
                "flip_prob",
            )
        },
        systems=_vb_systems,
        truncation=json.dumps(_VB["truncation"], sort_keys=True),
    script:
        "../scripts/vb/scores.py"


rule vb_sensitivity:
    """VB@forest_k of every run across temperatures of the mass prior and truncation rules (Sec. 3.5 knobs)."""
    input:
        runs=_vb_runs,
        qrels=f"{V}/vb/data/{{collection}}/qrels.txt",
    output:
        csv=f"{V}/vb/{{collection}}/sensitivity.csv",
        md=f"{V}/vb/{{collection}}/sensitivity.md",
    log:
        f"{V}/logs/vb/sensitivity_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/vb_sensitivity/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(VB.with_runs),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        systems=_vb_systems,
        temperatures=_VB["sensitivity"]["temperatures"],
        truncations=json.dumps(_VB["sensitivity"]["truncations"]),  # config order: it names the variants
        base=json.dumps({k: _VB[k] for k in ("min_relevance", "mass", "temperature", "truncation")}, sort_keys=True),
        k=_VB["forest_k"],
        gains=_VB["gains"],
        alphas=_VB["alphas"],
    script:
        "../scripts/vb/sensitivity.py"


rule vb_compare:
    """VB and ES beside the intent-aware measures (alpha-nDCG, ERR-IA; pyndeval) on the same runs."""
    input:
        runs=_vb_runs,
        qrels=f"{V}/vb/data/{{collection}}/qrels.txt",
        per_topic=f"{V}/vb/{{collection}}/per_topic.csv",
    output:
        csv=f"{V}/vb/{{collection}}/compare.csv",
        md=f"{V}/vb/{{collection}}/compare.md",
        agreement=f"{V}/vb/{{collection}}/compare_agreement.csv",
        per_topic=f"{V}/vb/{{collection}}/intent_aware_per_topic.csv",
    log:
        f"{V}/logs/vb/compare_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/vb_compare/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(VB.with_runs),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        systems=_vb_systems,
        measures=_VB["compare_measures"],
        k=_VB["compare_k"],
    script:
        "../scripts/vb/compare.py"


rule vb_checks:
    """The verify items computed from per-topic tables: claim E1 (ES nondecreasing in k) and the intent-aware
    checks (mean alpha-nDCG@20 / ERR-IA@20 per run)."""
    input:
        per_topic=f"{V}/vb/{{collection}}/per_topic.csv",
        intent_aware=f"{V}/vb/{{collection}}/intent_aware_per_topic.csv",
    output:
        values=f"{V}/vb/values/checks_{{collection}}.json",
    log:
        f"{V}/logs/vb/checks_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/vb_checks/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(VB.verify_collections),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    script:
        "../scripts/vb/checks.py"


rule vb_figures:
    """Fig. 2 (ES/VB across k), Fig. 3 (forest plot of VB_alpha at forest_k), Fig. 4 (forest plot of ES)."""
    input:
        summary=f"{V}/vb/{{collection}}/summary.csv",
        forest=f"{V}/vb/{{collection}}/forest.csv",
    output:
        fig2_pdf=f"{V}/vb/{{collection}}/fig2.pdf",
        fig2_png=report(
            f"{V}/vb/{{collection}}/fig2.png",
            caption="../report/vb/fig2.rst",
            category="VB-Score",
            labels={"collection": "{collection}", "figure": "fig2"},
        ),
        fig3_pdf=f"{V}/vb/{{collection}}/fig3.pdf",
        fig3_png=report(
            f"{V}/vb/{{collection}}/fig3.png",
            caption="../report/vb/fig3.rst",
            category="VB-Score",
            labels={"collection": "{collection}", "figure": "fig3"},
        ),
        fig4_pdf=f"{V}/vb/{{collection}}/fig4.pdf",
        fig4_png=report(
            f"{V}/vb/{{collection}}/fig4.png",
            caption="../report/vb/fig4.rst",
            category="VB-Score",
            labels={"collection": "{collection}", "figure": "fig4"},
        ),
    log:
        f"{V}/logs/vb/figures_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/vb_figures/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(VB.with_runs),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        fig2_ks=list(VB.fig2_ks),
        alphas=_VB["alphas"],
        forest_alpha=_VB["forest_alpha"],
        ci_level=_VB["ci_level"],
    script:
        "../scripts/vb/figures.py"


# the verify table: paper items first, then per collection of the verify table E1 and the intent-aware checks
VERIFY_VALUES["vb"] = [f"{V}/vb/paper_items.json"] + [f"{V}/vb/values/checks_{c}.json" for c in VB.verify_collections]


rule vb_all:
    input:
        vb_targets(),
