# P1/P1b: bias–variance evaluation (BV-Test, Zhang et al. IP&M 2022; Zhang et al. SIGIR 2013).
# Inputs are per-topic score tables (results/<v>/scores/<c>.tsv) and the query-model family scores. The plan
# (irrepro.papers.bv.plan) has checked the `bv` section and lists what is wired here.

BV_PLAN = PLAN.papers["bv"]
VERIFY_VALUES["bv"] = [f"{V}/bv/values/{n}.json" for n in BV_PLAN.values]


rule bv_table2:
    """BV-Test Table 2 (toy example): Bias² with c = target mean and c = 1, Var, total."""
    output:
        csv=f"{V}/bv/table2.csv",
        md=report(f"{V}/bv/table2.md", caption="../report/bv/table2.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table2.json",
    log:
        f"{V}/logs/bv/table2.log",
    benchmark:
        f"{V}/benchmarks/bv_table2.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    script:
        "../scripts/bv/table2.py"


rule bv_table9:
    """BV-Test Table 9: Pearson correlation of Bias² and Var across systems, original / max–min normalised,
    random partitions and query-difficulty groups."""
    input:
        [f"{V}/scores/{c}.tsv" for c in sorted(BV_PLAN.table9)],
    output:
        csv=f"{V}/bv/table9.csv",
        md=report(f"{V}/bv/table9.md", caption="../report/bv/table9.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table9.json",
    log:
        f"{V}/logs/bv/table9.log",
    benchmark:
        f"{V}/benchmarks/bv_table9.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        collections=json.dumps(BV_PLAN.table9, sort_keys=True),
        settings=json.dumps({k: v for k, v in config["bv"]["table9"].items() if k != "collections"}, sort_keys=True),
        seed=config["bv"]["seed"],
    script:
        "../scripts/bv/table9.py"


rule bv_table8:
    """BV-Test Table 8: |ZRisk| against the target system and the Var(ρ) decomposition for the top systems."""
    input:
        f"{V}/scores/{BV_PLAN.table8}.tsv" if BV_PLAN.table8 else [],
    output:
        csv=f"{V}/bv/table8.csv",
        md=report(f"{V}/bv/table8.md", caption="../report/bv/table8.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table8.json",
    log:
        f"{V}/logs/bv/table8.log",
    benchmark:
        f"{V}/benchmarks/bv_table8.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        measure=config["bv"]["table8"]["measure"],
        top=config["bv"]["table8"]["top"],
        ddof=config["bv"]["table8"]["ddof"],
    script:
        "../scripts/bv/table8.py"


rule bv_fig1:
    """BV-Test Fig 1: Bias², Var and Bias² + Var of every system, sorted by Bias²."""
    input:
        f"{V}/scores/{{collection}}.tsv",
    output:
        pdf=f"{V}/bv/fig1_{{collection}}.pdf",
        png=report(
            f"{V}/bv/fig1_{{collection}}.png",
            caption="../report/bv/fig1.rst",
            category="Bias-variance",
            labels={"figure": "Fig 1", "collection": "{collection}"},
        ),
    log:
        f"{V}/logs/bv/fig1_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/bv_fig1/{{collection}}.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        measure=lambda wc: BV_PLAN.fig1[wc.collection],
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
        png=report(
            f"{V}/bv/sigir13_figs_{{collection}}.png",
            caption="../report/bv/sigir13.rst",
            category="Bias-variance",
            labels={"figure": "SIGIR 2013 Figs 1-2", "collection": "{collection}"},
        ),
        values=f"{V}/bv/values/sigir13_{{collection}}.json",
    log:
        f"{V}/logs/bv/sigir13_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/bv_sigir13/{{collection}}.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    script:
        "../scripts/bv/sigir13.py"


rule bv_sigir13_tables:
    """SIGIR 2013 Tables 1-2 (toy example, the paper's APs: irrepro.papers.bv.sigir13.SIGIR13_TOY): MAP, Robustness
    Index, <Init, Bias, Var, Bias² + Var of AP and of ρ = AP_T − AP."""
    output:
        t1_csv=f"{V}/bv/sigir13_table1.csv",
        t1_md=report(f"{V}/bv/sigir13_table1.md", caption="../report/bv/sigir13_table1.rst", category="Bias-variance"),
        t2_csv=f"{V}/bv/sigir13_table2.csv",
        t2_md=report(f"{V}/bv/sigir13_table2.md", caption="../report/bv/sigir13_table2.rst", category="Bias-variance"),
        values=f"{V}/bv/values/sigir13_tables.json",
    log:
        f"{V}/logs/bv/sigir13_tables.log",
    benchmark:
        f"{V}/benchmarks/bv_sigir13_tables.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    script:
        "../scripts/bv/sigir13_tables.py"


rule bv_simulate:
    """BV-Test Sec. 3.4: k simulated document collections per topic from the population's runs; per (system, topic)
    the AP, its mean, Bias² and Var over the samples (Eq. 12)."""
    input:
        unpack(bv_sim_inputs),
    output:
        f"{V}/bv/simulated/{{collection}}.tsv",
    log:
        f"{V}/logs/bv/simulate_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/bv_simulate/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(BV_PLAN.simulation),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        k=config["bv"]["simulation"]["k"],
        unretrieved=config["bv"]["simulation"]["unretrieved"],
        rel_threshold=lambda wc: config["bv"]["simulation"]["relevance"].get(wc.collection, 1),
        depth=config["bv"]["simulation"]["depth"],
        shared=config["bv"]["simulation"]["shared"],
        seed=config["bv"]["seed"],
    script:
        "../scripts/bv/simulate.py"


rule bv_table10:
    """BV-Test Table 10: Pearson correlation of the per-topic Bias² and Var averaged over topics (Eqs. 13-14)."""
    input:
        [f"{V}/bv/simulated/{c}.tsv" for c in BV_PLAN.simulation],
    output:
        csv=f"{V}/bv/table10.csv",
        md=report(f"{V}/bv/table10.md", caption="../report/bv/table10.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table10.json",
    log:
        f"{V}/logs/bv/table10.log",
    benchmark:
        f"{V}/benchmarks/bv_table10.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        collections=list(BV_PLAN.simulation),
    script:
        "../scripts/bv/table10.py"


rule bv_table11:
    """BV-Test Table 11: per topic, the Pearson correlation of Bias² and Var across systems."""
    input:
        [f"{V}/bv/simulated/{c}.tsv" for c in BV_PLAN.simulation],
    output:
        csv=f"{V}/bv/table11.csv",
        summary=f"{V}/bv/table11_summary.csv",
        md=report(f"{V}/bv/table11.md", caption="../report/bv/table11.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table11.json",
    log:
        f"{V}/logs/bv/table11.log",
    benchmark:
        f"{V}/benchmarks/bv_table11.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        collections=list(BV_PLAN.simulation),
    script:
        "../scripts/bv/table11.py"


rule bv_table12:
    """BV-Test Table 12 and Figs 2-3 on user-supplied Session-track runs (config bv.table12.tracks)."""
    input:
        list(BV_PLAN.table12_inputs),
    output:
        csv=f"{V}/bv/table12.csv",
        systems=f"{V}/bv/table12_systems.csv",
        md=report(f"{V}/bv/table12.md", caption="../report/bv/table12.rst", category="Bias-variance"),
        png=report(
            f"{V}/bv/fig_session.png",
            caption="../report/bv/fig_session.rst",
            category="Bias-variance",
            labels={"figure": "Figs 2-3", "collection": "Session track"},
        ),
        pdf=f"{V}/bv/fig_session.pdf",
        values=f"{V}/bv/values/table12.json",
    log:
        f"{V}/logs/bv/table12.log",
    benchmark:
        f"{V}/benchmarks/bv_table12.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        tracks=json.dumps(config["bv"]["table12"]["tracks"], sort_keys=True),
        measure=config["bv"]["table12"]["measure"],
        target=config["bv"]["table12"]["target"],
        pattern=config["bv"]["table12"]["pattern"],
    script:
        "../scripts/bv/table12.py"


rule bv_all:
    input:
        f"{V}/bv/table2.csv",
        [f"{V}/bv/table9.csv"] if BV_PLAN.table9 else [],
        [f"{V}/bv/table8.csv"] if BV_PLAN.table8 else [],
        [f"{V}/bv/fig1_{c}.png" for c in BV_PLAN.fig1],
        [f"{V}/bv/sigir13_figs_{c}.png" for c in BV_PLAN.sigir13],
        f"{V}/bv/sigir13_table1.csv",
        f"{V}/bv/sigir13_table2.csv",
        [f"{V}/bv/table10.csv", f"{V}/bv/table11.csv"] if BV_PLAN.simulation else [],
        [f"{V}/bv/table12.csv", f"{V}/bv/fig_session.png"] if BV_PLAN.table12_tracks else [],
        f"{V}/bv/verify.csv",
