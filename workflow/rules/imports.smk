# Bring your own data: TREC runs + qrels, trec_eval -q output, or topic-by-system matrices -> per-topic scores.


rule import_scores:
    """Per-topic scores of an imported collection (config key imports.<name>)."""
    input:
        lambda wc: import_inputs(wc.collection),
    output:
        f"{V}/scores/{{collection}}.tsv",
    log:
        f"{V}/logs/import_scores/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/import_scores/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(IMPORTS),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        spec=lambda wc: json.dumps(config["imports"][wc.collection], sort_keys=True),  # canonical: key order is no change
        # the global measures reach only a runs import without its own list: adding a measure reruns no matrix
        # or trec_eval import
        measures=lambda wc: import_measures(wc.collection),
        res=RES,
    script:
        "../scripts/import_scores.py"
