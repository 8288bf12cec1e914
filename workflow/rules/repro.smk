# The repro stage: Lucene's BM25 (the Anserini jar of pyserini 0.25.0, on Java >= 11) beside PISA's, judged as a
# reproduction with Breuer et al.'s measures (irrepro.repro). docs/repro.md
#   snakemake --cores 2 repro_all
#   snakemake --cores 1 results/v1/repro/vaswani.csv


rule lucene_index:
    """Lucene index of a collection's documents with one analyzer, under a key of what it is built from
    (irrepro.repro.plan.lucene_index_key)."""
    input:
        docs=lambda wc: docs_inputs(wc.collection),
    output:
        directory(f"{RES}/indexes/{{collection}}-{{key}}.lucene"),
    log:
        f"{V}/logs/lucene_index/{{collection}}-{{key}}.log",
    benchmark:
        f"{V}/benchmarks/lucene_index/{{collection}}-{{key}}.tsv"
    wildcard_constraints:
        collection=_alt(REPRO.collections if REPRO else []),
        key=_alt(sorted(set(REPRO.index_keys.values())) if REPRO else []),
    conda:
        "../envs/lucene.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        analyzer=lambda wc: lucene_analyzer(wc.collection, wc.key),
        mirror=MIRROR,
        home=f"{RES}/ir_datasets",
    script:
        "../scripts/repro/lucene_index.py"


rule lucene_run:
    """One Lucene BM25 system on one collection: a TREC run file."""
    input:
        index=lambda wc: lucene_index_of(wc.collection, wc.system),
        topics=f"{V}/collections/{{collection}}/topics.tsv",
    output:
        f"{V}/repro/runs/{{collection}}/{{system}}.run",
    log:
        f"{V}/logs/lucene_run/{{collection}}/{{system}}.log",
    benchmark:
        f"{V}/benchmarks/lucene_run/{{collection}}/{{system}}.tsv"
    wildcard_constraints:
        collection=_alt(REPRO.collections if REPRO else []),
        system=_alt(REPRO.lucene_systems if REPRO else []),
    conda:
        "../envs/lucene.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        depth=config["retrieval"]["depth"],
    script:
        "../scripts/repro/lucene_run.py"


rule repro_scores:
    """Per-topic scores of the runs a collection's comparisons read: its Lucene runs and the PISA runs."""
    input:
        runs=lambda wc: repro_runs(wc.collection),
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
    output:
        f"{V}/repro/scores/{{collection}}.tsv",
    log:
        f"{V}/logs/repro_scores/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/repro_scores/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(REPRO.collections if REPRO else []),
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


rule repro_table:
    """results/<v>/repro/<c>.{csv,md}: every comparison × setting × measure with KTU, RBO, RMSE, p, ER, ΔRI and the
    OK / OKish / FAIL verdict; <c>.{pdf,png}: the per-topic differences."""
    input:
        runs=lambda wc: repro_runs(wc.collection),
        scores=f"{V}/repro/scores/{{collection}}.tsv",
    output:
        csv=f"{V}/repro/{{collection}}.csv",
        md=report(
            f"{V}/repro/{{collection}}.md",
            caption="../report/repro.rst",
            category="Reproducibility",
            labels={"collection": "{collection}", "table": "measures"},
        ),
        pdf=f"{V}/repro/{{collection}}.pdf",
        png=report(
            f"{V}/repro/{{collection}}.png",
            caption="../report/repro.rst",
            category="Reproducibility",
            labels={"collection": "{collection}", "figure": "per-topic differences"},
        ),
    log:
        f"{V}/logs/repro_table/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/repro_table/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(REPRO.collections if REPRO else []),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        comparisons=json.dumps([c.__dict__ for c in REPRO.comparisons] if REPRO else []),
        measures=config["measures"],
        depth=config["repro"]["depth"],
        rbo_p=config["repro"]["rbo_p"],
        tolerance=config["repro"]["okish_tolerance"],
    script:
        "../scripts/repro/table.py"


rule repro_all:
    """Every table and figure of the repro stage."""
    input:
        repro_targets(),
