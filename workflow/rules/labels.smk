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
    benchmark:
        f"{V}/benchmarks/labels_pairs/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(LABELS.collections),
    priority: 50
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


if LABELS.shard_size is None:

    rule labels:
        """Label distributions of every pair by one labeler (cached per labeler x prompt hash x pair; an interrupted
        job resumes where it stopped)."""
        input:
            pairs=f"{V}/labels/{{collection}}/pairs.tsv",
            topics=f"{V}/collections/{{collection}}/topics.tsv",
            docs=lambda wc: docs_inputs(wc.collection),
            files=lambda wc: LABELS.files[wc.labeler],
        output:
            labels=f"{V}/labels/{{collection}}/{{labeler}}.tsv",
            timing=f"{V}/benchmarks/labels_timing/{{collection}}/{{labeler}}.json",
        log:
            f"{V}/logs/labels/{{collection}}/{{labeler}}.log",
        benchmark:
            f"{V}/benchmarks/labels/{{collection}}/{{labeler}}.tsv"
        wildcard_constraints:
            collection=_alt(LABELS.collections),
            labeler=_alt(LABELS.labelers),
        priority: 50
        conda:
            "../envs/labels.yaml"
        threads: lambda wc: _label_threads(LABELS.specs[wc.labeler])
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
            queries=lambda wc: LABELS.samples[wc.collection].get(wc.labeler),
            seed=config["labels"]["seed"],
        script:
            "../scripts/labels/label.py"

else:

    localrules:
        labels_shard_plan,

    checkpoint labels_shard_plan:
        """How many shards of `labels.shards.size` pairs a collection's pairs make (read by the gather's input
        function: the number of shard jobs is known once the pairs are)."""
        input:
            f"{V}/labels/{{collection}}/pairs.tsv",
        output:
            f"{V}/labels/{{collection}}/shards.json",
        log:
            f"{V}/logs/labels/shards_{{collection}}.log",
        benchmark:
            f"{V}/benchmarks/labels_shard_plan/{{collection}}.tsv"
        wildcard_constraints:
            collection=_alt(LABELS.collections),
        conda:
            "../envs/irrepro.yaml"
        threads: 1
        params:
            size=LABELS.shard_size,
        script:
            "../scripts/labels/shard_plan.py"

    rule labels_shard:
        """One shard's pairs labelled by one labeler into the shard's own SQLite file (no other job writes it; a
        killed shard resumes from it); pairs of the central cache are copied, not relabelled. Only these jobs ask
        for GPUs (labels.shards.gpu)."""
        input:
            pairs=f"{V}/labels/{{collection}}/pairs.tsv",
            plan=f"{V}/labels/{{collection}}/shards.json",
            topics=f"{V}/collections/{{collection}}/topics.tsv",
            docs=lambda wc: docs_inputs(wc.collection),
            files=lambda wc: LABELS.files[wc.labeler],
        output:
            f"{V}/labels/{{collection}}/{{labeler}}/shard-{{shard}}-of-{{shards}}.tsv",
        log:
            f"{V}/logs/labels/{{collection}}/{{labeler}}/shard-{{shard}}-of-{{shards}}.log",
        benchmark:
            f"{V}/benchmarks/labels_shard/{{collection}}/{{labeler}}/{{shard}}/{{shards}}.tsv"
        wildcard_constraints:
            collection=_alt(LABELS.collections),
            labeler=_alt(LABELS.labelers),
            shard=r"\d+",
            shards=r"\d+",
        priority: 50
        conda:
            "../envs/labels.yaml"
        threads: lambda wc: _label_threads(LABELS.specs[wc.labeler])
        resources:
            mem_mb=LABELS.shards["mem_mb"],
            runtime=LABELS.shards["runtime"],
            gpu=LABELS.shards["gpu"],
        params:
            spec=lambda wc: LABELS.specs[wc.labeler],
            prompt=lambda wc: config["labels"]["collections"][wc.collection]["prompt"],
            prompt_hash=lambda wc: LABELS.prompt_hashes[wc.collection],
            dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
            home=f"{RES}/ir_datasets",
            cache=LABELS.cache,
            size=LABELS.shard_size,
            shard_cache=lambda wc: LABELS.shard_cache(wc.collection, wc.labeler, int(wc.shard), int(wc.shards)),
            queries=lambda wc: LABELS.samples[wc.collection].get(wc.labeler),
            seed=config["labels"]["seed"],
        script:
            "../scripts/labels/shard.py"

    rule labels_gather:
        """A (collection, labeler)'s shards gathered in pairs.tsv order into its labels table (byte-identical to
        the single `labels` job's) and merged, sorted by pair, into the central cache."""
        input:
            pairs=f"{V}/labels/{{collection}}/pairs.tsv",
            shards=label_shards,
        output:
            labels=f"{V}/labels/{{collection}}/{{labeler}}.tsv",
            timing=f"{V}/benchmarks/labels_timing/{{collection}}/{{labeler}}.json",
        log:
            f"{V}/logs/labels/{{collection}}/{{labeler}}.log",
        benchmark:
            f"{V}/benchmarks/labels_gather/{{collection}}/{{labeler}}.tsv"
        wildcard_constraints:
            collection=_alt(LABELS.collections),
            labeler=_alt(LABELS.labelers),
        conda:
            "../envs/irrepro.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=30,
        params:
            spec=lambda wc: LABELS.specs[wc.labeler],
            prompt=lambda wc: config["labels"]["collections"][wc.collection]["prompt"],
            cache=LABELS.cache,
            queries=lambda wc: LABELS.samples[wc.collection].get(wc.labeler),
            seed=config["labels"]["seed"],
        script:
            "../scripts/labels/gather.py"


rule labels_all:
    input:
        [LABELS.tables[c] for c in LABELS.collections],
        [f"{V}/labels/agreement_{c}.md" for c in LABELS.collections],
        [f"{V}/labels/agreement.md"] if LABELS.collections else [],
        [f"{V}/labels/self_preference.md"] if SP else [],
        [f"{V}/labels/audit.md"] if AUD else [],


rule labels_agreement_table:
    """Every labeler x collection in one table and figure: Spearman, Kendall tau-b, weighted kappa, mean per-query
    Spearman, pairs and the label job's pairs/s (model load included)."""
    input:
        summaries=[f"{V}/labels/agreement_{c}.csv" for c in LABELS.collections],
        timings=[
            f"{V}/benchmarks/labels_timing/{c}/{n}.json"
            for c in LABELS.collections
            for n in config["labels"]["collections"][c]["labelers"]
        ],
    output:
        csv=f"{V}/labels/agreement.csv",
        md=report(
            f"{V}/labels/agreement.md",
            caption="../report/labels/agreement_table.rst",
            category="LLM labels",
            labels={"table": "agreement, every labeler x collection"},
        ),
        pdf=f"{V}/labels/agreement.pdf",
        png=report(
            f"{V}/labels/agreement.png",
            caption="../report/labels/agreement_table.rst",
            category="LLM labels",
            labels={"figure": "agreement, every labeler x collection"},
        ),
    log:
        f"{V}/logs/labels/agreement_table.log",
    benchmark:
        f"{V}/benchmarks/labels_agreement_table.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        collections=LABELS.collections,
    script:
        "../scripts/labels/agreement_table.py"


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
    benchmark:
        f"{V}/benchmarks/labels_agreement/{{collection}}.tsv"
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
