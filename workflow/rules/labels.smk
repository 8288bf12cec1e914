# The LLM-label stage (Oosterhuis et al., KDD 2024, Sec. 7): the pairs of a ranking labelled by each configured
# labeler ("scoring mode": a distribution over grades), through a persistent cache. Usable on its own:
#   snakemake --cores 2 labels_all
# What it wires comes from PLAN.papers["labels"] (irrepro.labels.plan); per-key params from config["labels"].

LABELS = PLAN.papers["labels"]
SP = LABELS.selfpref["collections"]  # labels.self_preference: collection -> systems, labelers, same-model flags
SP_SET = LABELS.selfpref["settings"]
AUD = LABELS.audit["collections"]  # labels.audit: collection -> systems, labelers, judged_only, same-model flags
AUD_SET = LABELS.audit["settings"]


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
        [f"{V}/labels/self_preference.md"] if LABELS.selfpref["collections"] else [],
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


rule labels_selfpref_pairs:
    """labels.self_preference: the pool one labeler labels on one collection, every compared system's top `depth`
    on the labeler's queries (every judged query, or the label stage's query sample of this labeler); the rule
    labels_audit_pairs is this one on labels.audit's pool (within each query's judged documents where
    judged_only)."""
    input:
        unpack(lambda wc: {f"run_{s}": p for s, p in selfpref_runs(wc).items()}),
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
        stage_pairs=f"{V}/labels/{{collection}}/pairs.tsv",
    output:
        f"{V}/labels/{{collection}}/self_preference/{{labeler}}/pairs.tsv",
    log:
        f"{V}/logs/labels/self_preference/pairs_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/labels_selfpref_pairs/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(sorted(SP)),
        labeler=_alt(LABELS.labelers),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        systems=lambda wc: SP[wc.collection]["systems"],
        depth=SP_SET.get("depth"),
        judged_only=False,
        sample=lambda wc: SP[wc.collection]["sample"].get(wc.labeler),
        seed=config["labels"]["seed"],
    script:
        "../scripts/labels/selfpref_pairs.py"


rule labels_selfpref_labels:
    """labels.self_preference: one labeler's labels of its pool through the label cache (the label stage's own
    pairs are cached already); a calibrated labeler's grades cross-fitted over query folds as in the label stage,
    and its raw scores kept for the coverage draws' refits."""
    input:
        pairs=f"{V}/labels/{{collection}}/self_preference/{{labeler}}/pairs.tsv",
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        docs=lambda wc: docs_inputs(wc.collection),
        files=lambda wc: LABELS.files[wc.labeler],
        stage=f"{V}/labels/{{collection}}/{{labeler}}.tsv",
    output:
        labels=f"{V}/labels/{{collection}}/self_preference/{{labeler}}/labels.tsv",
        raw=f"{V}/labels/{{collection}}/self_preference/{{labeler}}/raw.tsv",
        timing=f"{V}/benchmarks/labels_selfpref_timing/{{collection}}/{{labeler}}.json",
    log:
        f"{V}/logs/labels/self_preference/labels_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/labels_selfpref_labels/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(sorted(SP)),
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
    script:
        "../scripts/labels/selfpref_labels.py"


rule labels_self_preference:
    """labels.self_preference: per collection, labeler and system the bias of its score by labels against its
    score by the qrels, the same-model gap, the ranking's tau / tau_AP with and without the same-model systems, and
    the CI paper's coverage per group; one table, one figure."""
    input:
        unpack(selfpref_inputs),
    output:
        csv=f"{V}/labels/self_preference.csv",
        gap=f"{V}/labels/self_preference_gap.csv",
        agreement=f"{V}/labels/self_preference_ranking.csv",
        coverage=f"{V}/labels/self_preference_coverage.csv",
        md=report(
            f"{V}/labels/self_preference.md",
            caption="../report/labels/self_preference.rst",
            category="LLM labels",
            labels={"table": "self-preference"},
        ),
        pdf=f"{V}/labels/self_preference.pdf",
        png=report(
            f"{V}/labels/self_preference.png",
            caption="../report/labels/self_preference.rst",
            category="LLM labels",
            labels={"figure": "self-preference"},
        ),
    log:
        f"{V}/logs/labels/self_preference.log",
    benchmark:
        f"{V}/benchmarks/labels_self_preference/all.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        # dicts as canonical JSON: a config written with its keys in another order changes no param
        plan=lambda wc: json.dumps(SP, sort_keys=True),
        specs=lambda wc: json.dumps({n: LABELS.specs[n] for c in SP for n in SP[c]["labelers"]}, sort_keys=True),
        prompts=lambda wc: json.dumps({c: config["labels"]["collections"][c]["prompt"] for c in SP}, sort_keys=True),
        measures=SP_SET.get("measures"),
        n_boot=SP_SET.get("n_boot"),
        seed=SP_SET.get("seed"),
        coverage_n=(SP_SET.get("coverage") or {}).get("n"),
        coverage_draws=(SP_SET.get("coverage") or {}).get("draws"),
        alpha=config["ci"]["alpha"],
        ci_n_boot=config["ci"]["n_boot"],
        batches=config["ci"]["batches"],
        label_gain=config["ci"]["label_gain"],
    script:
        "../scripts/labels/self_preference.py"


use rule labels_selfpref_pairs as labels_audit_pairs with:
    input:
        unpack(audit_runs),
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
        stage_pairs=f"{V}/labels/{{collection}}/pairs.tsv",
    output:
        f"{V}/labels/audit/{{collection}}/{{labeler}}/pairs.tsv",
    log:
        f"{V}/logs/labels/audit/pairs_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/labels_audit_pairs/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(sorted(AUD)),
        labeler=_alt(LABELS.labelers),
    params:
        systems=lambda wc: AUD[wc.collection]["systems"],
        depth=AUD_SET.get("depth"),
        judged_only=lambda wc: AUD[wc.collection]["judged_only"],
        sample=lambda wc: AUD[wc.collection]["sample"].get(wc.labeler),
        seed=config["labels"]["seed"],


use rule labels_selfpref_labels as labels_audit_labels with:
    input:
        pairs=f"{V}/labels/audit/{{collection}}/{{labeler}}/pairs.tsv",
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        docs=lambda wc: docs_inputs(wc.collection),
        files=lambda wc: LABELS.files[wc.labeler],
        stage=f"{V}/labels/{{collection}}/{{labeler}}.tsv",
    output:
        labels=f"{V}/labels/audit/{{collection}}/{{labeler}}/labels.tsv",
        raw=f"{V}/labels/audit/{{collection}}/{{labeler}}/raw.tsv",
        timing=f"{V}/benchmarks/labels_audit_timing/{{collection}}/{{labeler}}.json",
    log:
        f"{V}/logs/labels/audit/labels_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/labels_audit_labels/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(sorted(AUD)),
        labeler=_alt(LABELS.labelers),


rule labels_audit_one:
    """labels.audit: one collection and labeler: the systems as they are and re-ranked by the judge, scored by
    the labels and by the qrels; their rank correlations and pair decisions, and the per-topic scores of the
    systems as they are by the labels and by the qrels on the labeler's topics (condensed runs on judged_only)."""
    input:
        unpack(audit_runs),
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
        labels=f"{V}/labels/audit/{{collection}}/{{labeler}}/labels.tsv",
    output:
        scores=f"{V}/labels/scores/{{collection}}/{{labeler}}.tsv",
        humans=f"{V}/labels/scores/{{collection}}/{{labeler}}.humans.tsv",
        rankings=f"{V}/labels/audit/{{collection}}/{{labeler}}/rankings.csv",
        decisions=f"{V}/labels/audit/{{collection}}/{{labeler}}/decisions.csv",
        means=f"{V}/labels/audit/{{collection}}/{{labeler}}/means.csv",
        pairs=f"{V}/labels/audit/{{collection}}/{{labeler}}/pair_decisions.csv",
    log:
        f"{V}/logs/labels/audit/audit_{{collection}}_{{labeler}}.log",
    benchmark:
        f"{V}/benchmarks/labels_audit_one/{{collection}}/{{labeler}}.tsv"
    wildcard_constraints:
        collection=_alt(sorted(AUD)),
        labeler=_alt(LABELS.labelers),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        systems=lambda wc: AUD[wc.collection]["systems"],
        judged_only=lambda wc: AUD[wc.collection]["judged_only"],
        depth=AUD_SET.get("depth"),
        measures=AUD_SET.get("measures"),
        tops=AUD_SET.get("tops"),
        n_boot=AUD_SET.get("n_boot"),
        seed=AUD_SET.get("seed"),
        tests=AUD_SET.get("tests"),
        corrections=AUD_SET.get("corrections"),
        alpha=config["stats"]["alpha"],
        n_permutations=config["stats"]["n_permutations"],
        n_bootstrap=config["stats"]["n_bootstrap"],
        label_gain=config["ci"]["label_gain"],
    script:
        "../scripts/labels/audit_one.py"


rule labels_audit:
    """labels.audit: every audited collection and labeler in one rankings table, one decisions table, a Markdown
    summary (with the ranks of the systems that share a labeler's model) and a figure."""
    input:
        unpack(lambda wc: audit_outputs()),
    output:
        rankings=f"{V}/labels/audit_rankings.csv",
        decisions=f"{V}/labels/audit_decisions.csv",
        md=report(
            f"{V}/labels/audit.md",
            caption="../report/labels/audit.rst",
            category="LLM labels",
            labels={"table": "judge audit"},
        ),
        pdf=f"{V}/labels/audit.pdf",
        png=report(
            f"{V}/labels/audit.png",
            caption="../report/labels/audit.rst",
            category="LLM labels",
            labels={"figure": "judge audit"},
        ),
    log:
        f"{V}/logs/labels/audit.log",
    benchmark:
        f"{V}/benchmarks/labels_audit/all.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        units=lambda wc: [[c, n] for c in AUD for n in AUD[c]["labelers"]],
        same_model=lambda wc: json.dumps({c: AUD[c]["same_model"] for c in AUD}, sort_keys=True),
        measures=AUD_SET.get("measures"),
        n_boot=AUD_SET.get("n_boot"),
        alpha=config["stats"]["alpha"],
    script:
        "../scripts/labels/audit.py"
