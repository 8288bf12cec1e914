# SIGIR 2013 (Zhang et al.): the query-model family, run on collections with documents, scored per topic.


rule bv_querymodels:
    """Runs and per-topic scores of the query-model family (original, RM1, RM3 λ, RM1 − rn·D_N, target)."""
    input:
        index=lambda wc: PLAN.index(wc.collection),
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
        docs=lambda wc: docs_inputs(wc.collection),
    output:
        f"{V}/bv/querymodels/{{collection}}.tsv",
    log:
        f"{V}/logs/bv_querymodels/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/bv_querymodels/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(COLLECTIONS),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        home=f"{RES}/ir_datasets",
        lambdas=config["querymodels"]["lambdas"],
        rns=config["querymodels"]["rns"],
        fb_docs=config["querymodels"]["fb_docs"],
        n_terms=config["querymodels"]["n_terms"],
        depth=config["querymodels"]["depth"],
        mu=config["querymodels"]["mu"],
        fb_weighting=config["querymodels"]["fb_weighting"],
        measures=config["querymodels"]["measures"],
    script:
        "../scripts/querymodels.py"
