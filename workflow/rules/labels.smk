# The LLM-label stage (Oosterhuis et al., KDD 2024, Sec. 7): the pairs of a ranking labelled by each configured
# labeler ("scoring mode": a distribution over grades), through a persistent cache. Usable on its own:
#   snakemake --cores 2 labels_all
# What it wires comes from PLAN.papers["labels"] (irrepro.labels.plan); per-key params from config["labels"].

LABELS = PLAN.papers["labels"]


rule labels_pairs:
    """The (query, document) pairs to label: the top `depth` of a system's run on each judged query, with the
    human grades (optionally within each query's judged documents)."""
    input:
        run=lambda wc: f"{V}/runs/{wc.collection}/{config['labels']['collections'][wc.collection]['system']}.run",
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
    output:
        f"{V}/labels/{{collection}}/pairs.tsv",
    log:
        f"{V}/logs/labels/pairs_{{collection}}.log",
    wildcard_constraints:
        collection=_alt(LABELS.collections),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        depth=lambda wc: config["labels"]["collections"][wc.collection]["depth"],
        judged_only=lambda wc: config["labels"]["collections"][wc.collection]["judged_only"],
        max_queries=lambda wc: config["labels"]["collections"][wc.collection]["max_queries"],
        seed=config["labels"]["seed"],
    script:
        "../scripts/labels/pairs.py"


rule labels:
    """Label distributions of every pair by one labeler (cached per labeler x prompt hash x pair; an interrupted
    job resumes where it stopped)."""
    input:
        pairs=f"{V}/labels/{{collection}}/pairs.tsv",
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        docs=lambda wc: docs_inputs(wc.collection),
        files=lambda wc: LABELS.files[wc.labeler],
    output:
        f"{V}/labels/{{collection}}/{{labeler}}.tsv",
    log:
        f"{V}/logs/labels/{{collection}}/{{labeler}}.log",
    wildcard_constraints:
        collection=_alt(LABELS.collections),
        labeler=_alt(LABELS.labelers),
    conda:
        "../envs/labels.yaml"
    threads: 2
    resources:
        mem_mb=6000,
        runtime=600,
    params:
        spec=lambda wc: LABELS.specs[wc.labeler],
        prompt=lambda wc: config["labels"]["collections"][wc.collection]["prompt"],
        prompt_hash=lambda wc: LABELS.prompt_hashes[wc.collection],
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        home=f"{RES}/ir_datasets",
        cache=LABELS.cache,
    script:
        "../scripts/labels/label.py"


rule labels_all:
    input:
        [LABELS.tables[c] for c in LABELS.collections],
        [f"{V}/labels/agreement_{c}.md" for c in LABELS.collections],


rule labels_agreement:
    """Agreement of each labeler's labels with the human grades of the pairs: Spearman (expected grade), Cohen's
    kappa and the confusion matrix (most probable grade)."""
    input:
        pairs=f"{V}/labels/{{collection}}/pairs.tsv",
        labels=lambda wc: LABELS.tables[wc.collection],
    output:
        csv=f"{V}/labels/agreement_{{collection}}.csv",
        confusion=f"{V}/labels/confusion_{{collection}}.csv",
        md=report(
            f"{V}/labels/agreement_{{collection}}.md",
            caption="../report/labels/agreement.rst",
            category="LLM labels",
            labels={"table": "agreement with human grades", "data": "{collection}"},
        ),
    log:
        f"{V}/logs/labels/agreement_{{collection}}.log",
    wildcard_constraints:
        collection=_alt(LABELS.collections),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/labels/agreement.py"
