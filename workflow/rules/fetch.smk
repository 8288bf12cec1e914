# Fetch: declared artifacts (md5-checked, from the mirror or the URL) and ir_datasets collections.


rule fetch_artifact:
    """A declared artifact (src/irrepro/data/artifacts.tsv), verified by md5, from the mirror or its URL."""
    output:
        f"{RES}/artifacts/{{name}}",
    log:
        f"{RES}/logs/fetch_artifact/{{name}}.log",
    benchmark:
        f"{RES}/benchmarks/fetch_artifact/{{name}}.tsv"
    wildcard_constraints:
        name=".+",
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        mirror=MIRROR,
    script:
        "../scripts/fetch_artifact.py"


rule fetch_collection:
    """Topics and qrels of an ir_datasets collection (seeding IR_DATASETS_HOME from the mirror)."""
    output:
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
    log:
        f"{V}/logs/fetch_collection/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/fetch_collection/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(COLLECTIONS),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        topics=lambda wc: config["collections"][wc.collection]["topics"],
        grades=lambda wc: json.dumps(config["collections"][wc.collection]["grades"], sort_keys=True),
        mirror=MIRROR,
        home=f"{RES}/ir_datasets",
    script:
        "../scripts/fetch_collection.py"
