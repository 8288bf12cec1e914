# Per-topic scores of every run of a collection, in the canonical long table.


rule evaluate:
    """Per-topic scores (collection, system, topic, measure, value) of every run of a collection (ir_measures)."""
    input:
        runs=lambda wc: runs_of(wc.collection),
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
    output:
        f"{V}/scores/{{collection}}.tsv",
    log:
        f"{V}/logs/evaluate/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/evaluate/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(COLLECTIONS),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        measures=config["measures"],
    script:
        "../scripts/evaluate.py"


rule population_table:
    """Mean of every measure per system (a pt.Experiment-style table), CSV + Markdown."""
    input:
        f"{V}/scores/{{collection}}.tsv",
    output:
        csv=f"{V}/tables/population_{{collection}}.csv",
        md=report(
            f"{V}/tables/population_{{collection}}.md",
            caption="../report/population_table.rst",
            category="Spine",
            subcategory="System population",
            labels={"collection": "{collection}", "table": "population"},
        ),
    log:
        f"{V}/logs/population_table/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/population_table/{{collection}}.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    script:
        "../scripts/population_table.py"


rule population_figure:
    """Mean of each measure per system with 95% t-intervals over topics (PDF + PNG)."""
    input:
        f"{V}/scores/{{collection}}.tsv",
    output:
        pdf=f"{V}/figures/population_{{collection}}.pdf",
        png=report(
            f"{V}/figures/population_{{collection}}.png",
            caption="../report/population.rst",
            category="Spine",
            subcategory="System population",
            labels={"collection": "{collection}", "figure": "population"},
        ),
    log:
        f"{V}/logs/population_figure/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/population_figure/{{collection}}.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        measures=config["measures"],
    script:
        "../scripts/population_figure.py"
