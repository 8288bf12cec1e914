# P3: reliable confidence intervals for IR evaluation with LLM labels (Oosterhuis et al., KDD 2024).
# Empirical bootstrap, PPI and CRC around DCG@10 of a ranking, from the label stage's distributions.
#   snakemake --cores 2 ci_all
#   snakemake --cores 1 results/v1/ci/fig2_dl19-pool_flant5-large.png

if "labels" not in PAPERS_PRESENT:
    raise ValueError("config key papers: `ci` needs the `labels` stage (add labels to papers)")

CIC = config["ci"]
CI_COLLS = list(CIC["collections"])
for _c in CI_COLLS:
    if _c not in LC["collections"]:
        raise ValueError(f"config key ci.collections: {_c!r} has no entry under labels.collections (which ranking "
                         f"and which labelers)")
CI_COMBOS = [(c, l) for c in CI_COLLS for l in LC["collections"][c]["labelers"]]
CI_SETTINGS = json.dumps({k: CIC[k] for k in sorted(CIC) if k != "collections"}, sort_keys=True)


def ci_labels(wc):
    return {"pairs": f"{V}/labels/{wc.collection}/pairs.tsv", "labels": f"{V}/labels/{wc.collection}/{wc.labeler}.tsv"}


rule ci_table1:
    """Table 1: DCG@10 of the Random, BM25, LLM and Perfect rankers of BM25's top candidates, by human labels and
    by every labeler."""
    input:
        pairs=f"{V}/labels/{{collection}}/pairs.tsv",
        labels=lambda wc: labels_of(wc.collection),
    output:
        csv=f"{V}/ci/table1_{{collection}}.csv",
        md=report(f"{V}/ci/table1_{{collection}}.md", caption="../report/ci/table1.rst", category="CI with LLM labels",
                  labels={"table": "Table 1", "data": "{collection}"}),
        values=f"{V}/ci/values/table1_{{collection}}.json",
    wildcard_constraints:
        collection=_alt(CI_COLLS),
    params:
        k=CIC["k"],
        labelers=lambda wc: LC["collections"][wc.collection]["labelers"],
    log:
        f"{V}/logs/ci/table1_{{collection}}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/ci/table1.py"


rule ci_fig2:
    """Fig 2: width and coverage of bootstrap, PPI and CRC intervals against the number of human-labelled queries."""
    input:
        unpack(ci_labels),
    output:
        csv=f"{V}/ci/fig2_{{collection}}_{{labeler}}.csv",
        runs=f"{V}/ci/runs/fig2_{{collection}}_{{labeler}}.csv.gz",
        pdf=f"{V}/ci/fig2_{{collection}}_{{labeler}}.pdf",
        png=report(f"{V}/ci/fig2_{{collection}}_{{labeler}}.png", caption="../report/ci/fig2.rst",
                   category="CI with LLM labels", labels={"figure": "Fig 2", "data": "{collection} / {labeler}"}),
        values=f"{V}/ci/values/fig2_{{collection}}_{{labeler}}.json",
    wildcard_constraints:
        collection=_alt(CI_COLLS),
    params:
        settings=CI_SETTINGS,
    log:
        f"{V}/logs/ci/fig2_{{collection}}_{{labeler}}.log",
    threads: 1
    resources:
        mem_mb=6000,
        runtime=60,
    script:
        "../scripts/ci/fig2.py"


rule ci_fig3:
    """Fig 3: interval width under adversarial label bias β and oracle-improved labels ζ."""
    input:
        unpack(ci_labels),
    output:
        csv=f"{V}/ci/fig3_{{collection}}_{{labeler}}.csv",
        pdf=f"{V}/ci/fig3_{{collection}}_{{labeler}}.pdf",
        png=report(f"{V}/ci/fig3_{{collection}}_{{labeler}}.png", caption="../report/ci/fig3.rst",
                   category="CI with LLM labels", labels={"figure": "Fig 3", "data": "{collection} / {labeler}"}),
        values=f"{V}/ci/values/fig3_{{collection}}_{{labeler}}.json",
    wildcard_constraints:
        collection=_alt(CI_COLLS),
    params:
        settings=CI_SETTINGS,
    log:
        f"{V}/logs/ci/fig3_{{collection}}_{{labeler}}.log",
    threads: 1
    resources:
        mem_mb=6000,
        runtime=60,
    script:
        "../scripts/ci/fig3.py"


rule ci_fig4:
    """Fig 4: per-query CRC intervals on the test queries for several oracle weights ζ."""
    input:
        unpack(ci_labels),
    output:
        csv=f"{V}/ci/fig4_{{collection}}_{{labeler}}.csv",
        pdf=f"{V}/ci/fig4_{{collection}}_{{labeler}}.pdf",
        png=report(f"{V}/ci/fig4_{{collection}}_{{labeler}}.png", caption="../report/ci/fig4.rst",
                   category="CI with LLM labels", labels={"figure": "Fig 4", "data": "{collection} / {labeler}"}),
        values=f"{V}/ci/values/fig4_{{collection}}_{{labeler}}.json",
    wildcard_constraints:
        collection=_alt(CI_COLLS),
    params:
        settings=CI_SETTINGS,
    log:
        f"{V}/logs/ci/fig4_{{collection}}_{{labeler}}.log",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/ci/fig4.py"


def ci_values():
    v = [f"{V}/ci/values/table1_{c}.json" for c in CI_COLLS]
    for fig in ("fig2", "fig3", "fig4"):
        v += [f"{V}/ci/values/{fig}_{c}_{l}.json" for c, l in CI_COMBOS]
    return v


rule ci_verify:
    """The paper's numbers (Table 1 on TREC-DL) and qualitative claims (Figs 2-4) beside ours."""
    input:
        values=ci_values(),
        reference=f"{REPO}/config/reference/ci.yaml",
    output:
        csv=f"{V}/ci/verify.csv",
        md=report(f"{V}/ci/verify.md", caption="../report/ci/verify.rst", category="Verify"),
    params:
        combos=json.dumps(CI_COMBOS),
    log:
        f"{V}/logs/ci/verify.log",
    threads: 1
    script:
        "../scripts/ci/verify.py"


rule ci_all:
    input:
        [f"{V}/ci/table1_{c}.md" for c in CI_COLLS],
        [f"{V}/ci/{fig}_{c}_{l}.png" for fig in ("fig2", "fig3", "fig4") for c, l in CI_COMBOS],
        [f"{V}/ci/verify.csv"] if CI_COLLS else [],
