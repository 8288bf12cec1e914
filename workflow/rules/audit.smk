# The judge audit (irrepro.audit; docs/labels.md, "Judge audit"): system rankings and pair decisions by a labeler's
# labels against the qrels, and the labeler as a re-ranker. Its own stage after the label stage (and after
# selfpref.smk, whose pool and label rules it reuses), usable on its own:
#   snakemake --cores 2 results/v1/labels/audit.md
# What it wires comes from PLAN.stages["audit"] (irrepro.audit.plan; AUD / AUD_SET in common.smk).


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
        unpack(audit_labels_after),
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
        "../scripts/audit/one.py"


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
        "../scripts/audit/gather.py"
