# Index every collection with PISA and run the system population on it.


rule index:
    """PISA index of a collection's documents (PyTerrier + pyterrier-pisa; no Java)."""
    input:
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        docs=lambda wc: docs_inputs(wc.collection),
    output:
        directory(f"{RES}/indexes/{{collection}}.pisa"),
    log:
        f"{V}/logs/index/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/index/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(COLLECTIONS),
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
        index=f"{RES}/indexes/{{collection}}.pisa",
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
