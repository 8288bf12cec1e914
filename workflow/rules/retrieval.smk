# Index every collection with PISA and run the system population on it.


rule index:
    """PISA index of a collection's documents (PyTerrier + pyterrier-pisa; no Java), under a key of what it is built
    from (irrepro.plan.index_key): shared by the configs that index a collection alike, never rebuilt by another's."""
    input:
        docs=lambda wc: docs_inputs(wc.collection),
    output:
        directory(f"{RES}/indexes/{{collection}}-{{key}}.pisa"),
    log:
        f"{V}/logs/index/{{collection}}-{{key}}.log",
    benchmark:
        f"{V}/benchmarks/index/{{collection}}-{{key}}.tsv"
    wildcard_constraints:
        collection=_alt(COLLECTIONS),
        key=_alt(sorted(set(PLAN.index_keys.values()))),
    priority: 50
    conda:
        "../envs/irrepro.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        stemmer=config["retrieval"]["stemmer"],
        stopwords=config["retrieval"]["stopwords"],
        mirror=MIRROR,
        home=f"{RES}/ir_datasets",
    script:
        "../scripts/index.py"


rule run:
    """One system of the population on one collection: a TREC run file."""
    input:
        index=lambda wc: PLAN.index(wc.collection),
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        docs=lambda wc: docs_inputs(wc.collection),
    output:
        f"{V}/runs/{{collection}}/{{system}}.run",
    log:
        f"{V}/logs/run/{{collection}}/{{system}}.log",
    benchmark:
        f"{V}/benchmarks/run/{{collection}}/{{system}}.tsv"
    wildcard_constraints:
        collection=_alt(COLLECTIONS),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        depth=config["retrieval"]["depth"],
        fb_weighting=config["retrieval"]["fb_weighting"],
        home=f"{RES}/ir_datasets",
    script:
        "../scripts/run.py"
