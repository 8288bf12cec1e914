# P1/P1b: bias–variance evaluation (BV-Test, Zhang et al. IP&M 2022; Zhang et al. SIGIR 2013).
# Inputs are per-topic score tables (results/<v>/scores/<c>.tsv) and the query-model family scores.

BVC = config["bv"]
BV_T9 = BVC["table9"]["collections"]
BV_FIG1 = BVC["fig1"]["collections"]
BV_T8 = BVC["table8"]["collection"]
for _c in list(BV_T9) + list(BV_FIG1) + ([BV_T8] if BV_T8 else []):
    if _c not in ALL_SCORED:
        raise ValueError(f"config key bv: collection {_c!r} is neither in `collections` nor in `imports`")


rule bv_table2:
    """BV-Test Table 2 (toy example): Bias² with c = target mean and c = 1, Var, total."""
    output:
        csv=f"{V}/bv/table2.csv",
        md=report(f"{V}/bv/table2.md", caption="../report/bv/table2.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table2.json",
    log:
        f"{V}/logs/bv/table2.log",
    threads: 1
    script:
        "../scripts/bv/table2.py"


rule bv_table9:
    """BV-Test Table 9: Pearson correlation of Bias² and Var across systems, original / max–min normalised,
    random partitions and query-difficulty groups."""
    input:
        [f"{V}/scores/{c}.tsv" for c in sorted(BV_T9)],
    output:
        csv=f"{V}/bv/table9.csv",
        md=report(f"{V}/bv/table9.md", caption="../report/bv/table9.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table9.json",
    params:
        collections=json.dumps(BV_T9, sort_keys=True),
        settings=json.dumps(BVC["table9"], sort_keys=True),
        seed=BVC["seed"],
    log:
        f"{V}/logs/bv/table9.log",
    threads: 1
    resources:
        mem_mb=4000,
    script:
        "../scripts/bv/table9.py"


rule bv_table8:
    """BV-Test Table 8: |ZRisk| against the target system and the Var(ρ) decomposition for the top systems."""
    input:
        f"{V}/scores/{BV_T8}.tsv" if BV_T8 else [],
    output:
        csv=f"{V}/bv/table8.csv",
        md=report(f"{V}/bv/table8.md", caption="../report/bv/table8.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table8.json",
    params:
        settings=json.dumps(BVC["table8"], sort_keys=True),
    log:
        f"{V}/logs/bv/table8.log",
    threads: 1
    script:
        "../scripts/bv/table8.py"


rule bv_fig1:
    """BV-Test Fig 1: Bias², Var and Bias² + Var of every system, sorted by Bias²."""
    input:
        f"{V}/scores/{{collection}}.tsv",
    output:
        pdf=f"{V}/bv/fig1_{{collection}}.pdf",
        png=report(f"{V}/bv/fig1_{{collection}}.png", caption="../report/bv/fig1.rst", category="Bias-variance",
                   labels={"figure": "Fig 1", "collection": "{collection}"}),
    params:
        measure=lambda wc: BV_FIG1[wc.collection],
    log:
        f"{V}/logs/bv/fig1_{{collection}}.log",
    threads: 1
    script:
        "../scripts/bv/fig1.py"


rule bv_sigir13:
    """SIGIR 2013 Figs 1–2: Bias²(AP) vs Var(AP) and Bias² + Var of the query-model family (target = the target
    query model's MAP), with the paper's qualitative findings checked."""
    input:
        f"{V}/bv/querymodels/{{collection}}.tsv",
    output:
        csv=f"{V}/bv/sigir13_{{collection}}.csv",
        pdf=f"{V}/bv/sigir13_figs_{{collection}}.pdf",
        png=report(f"{V}/bv/sigir13_figs_{{collection}}.png", caption="../report/bv/sigir13.rst",
                   category="Bias-variance", labels={"figure": "SIGIR 2013 Figs 1-2", "collection": "{collection}"}),
        values=f"{V}/bv/values/sigir13_{{collection}}.json",
    log:
        f"{V}/logs/bv/sigir13_{{collection}}.log",
    threads: 1
    script:
        "../scripts/bv/sigir13.py"


def bv_values():
    v = [f"{V}/bv/values/table2.json"]
    if BV_T9:
        v.append(f"{V}/bv/values/table9.json")
    if BV_T8:
        v.append(f"{V}/bv/values/table8.json")
    v += [f"{V}/bv/values/sigir13_{c}.json" for c in config["querymodels"]["collections"]]
    return v


rule bv_verify:
    """The verify table: every number of the papers our data allows, ours beside theirs."""
    input:
        values=bv_values(),
        reference=f"{REPO}/config/reference/bv.yaml",
    output:
        csv=f"{V}/bv/verify.csv",
        md=report(f"{V}/bv/verify.md", caption="../report/bv/verify.rst", category="Verify"),
    log:
        f"{V}/logs/bv/verify.log",
    threads: 1
    script:
        "../scripts/bv/verify.py"


rule bv_all:
    input:
        f"{V}/bv/table2.csv",
        [f"{V}/bv/table9.csv"] if BV_T9 else [],
        [f"{V}/bv/table8.csv"] if BV_T8 else [],
        [f"{V}/bv/fig1_{c}.png" for c in BV_FIG1],
        [f"{V}/bv/sigir13_figs_{c}.png" for c in config["querymodels"]["collections"]],
        f"{V}/bv/verify.csv",
