# Index every collection with PISA and run the system population on it.
from irrepro.plan import rule_names as _rule_names


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
    threads: config["retrieval"]["index_threads"]
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
        system=_alt(CLASSIC_SYSTEMS),
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


rule neural_index:
    """Every document of a collection encoded by one neural model (irrepro.retrieval.neural.DocIndex), under a key
    of the documents, the model's pinned weights and how it encodes (irrepro.plan.neural_index_key): shared by the
    configs that encode a collection alike."""
    input:
        docs=lambda wc: docs_inputs(wc.collection),
    output:
        directory(f"{RES}/neural/{{collection}}-{{model}}-{{key}}"),
    log:
        f"{V}/logs/neural_index/{{collection}}-{{model}}-{{key}}.log",
    benchmark:
        f"{V}/benchmarks/neural_index/{{collection}}-{{model}}-{{key}}.tsv"
    wildcard_constraints:
        collection=_alt(sorted(NEURAL)),
        model=_alt(sorted({m for (_, m) in PLAN.neural_keys})),
        key="[0-9a-f]{16}",
    priority: 50
    conda:
        "../envs/labels.yaml"
    threads: config["population"]["neural"]["threads"] if NEURAL else 1
    resources:
        mem_mb=4000,
        runtime=120,
        gpu=lambda wc: neural_gpus([wc.model]),
    params:
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        settings=lambda wc: neural_settings(config, wc.model),
        max_docs=config["population"]["neural"].get("max_docs") if NEURAL else None,
        mirror=MIRROR,
        home=f"{RES}/ir_datasets",
    script:
        "../scripts/neural_index.py"


rule neural_run:
    """One neural system on one collection (irrepro.retrieval.neural): a dense or learned sparse first stage over
    every document's encoding, or a population system's run, then each re-ranking stage; a TREC run file."""
    input:
        unpack(neural_run_inputs),
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        docs=lambda wc: docs_inputs(wc.collection),
    output:
        f"{V}/runs/{{collection}}/{{system}}.run",
    log:
        f"{V}/logs/neural_run/{{collection}}/{{system}}.log",
    benchmark:
        f"{V}/benchmarks/neural_run/{{collection}}/{{system}}.tsv"
    wildcard_constraints:
        collection=_alt(sorted(NEURAL)),
        system=_alt(NEURAL_NAMES),
    conda:
        "../envs/labels.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
        gpu=lambda wc: neural_gpus(PLAN.neural_models(wc.collection, wc.system)),
    params:
        settings=lambda wc: {m: neural_settings(config, m) for m in PLAN.neural_models(wc.collection, wc.system)},
        depth=config["retrieval"]["depth"],
        max_docs=config["population"]["neural"].get("max_docs") if NEURAL else None,
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        mirror=MIRROR,
        home=f"{RES}/ir_datasets",
    script:
        "../scripts/neural_run.py"


# ir_metadata (PRIMAD, https://www.ir-metadata.org) beside every population run, one job per collection (its outputs
# are that collection's systems): runs/<collection>/ir-metadata/<system>.yml (irrepro.core.irmetadata).
_RUN_METADATA_RULES = _rule_names(COLLECTIONS, "run_metadata")
for collection in COLLECTIONS:

    rule:
        name:
            _RUN_METADATA_RULES[collection]
        input:
            runs=runs_of(collection),
            topics=f"{V}/collections/{collection}/topics.tsv",
            qrels=f"{V}/collections/{collection}/qrels.txt",
        output:
            [f"{V}/runs/{collection}/ir-metadata/{s}.yml" for s in SYSTEMS[collection]],
        log:
            f"{V}/logs/run_metadata/{collection}.log",
        benchmark:
            f"{V}/benchmarks/run_metadata/{collection}.tsv"
        conda:
            "../envs/irrepro.yaml"
        threads: 1
        params:
            collection=collection,
            systems=SYSTEMS[collection],
            dataset=config["collections"][collection]["ir_datasets"],
            depth=config["retrieval"]["depth"],
            neural_models=sorted({m for s in NEURAL.get(collection, []) for m in PLAN.neural_models(collection, s)}),
        script:
            "../scripts/run_metadata.py"
