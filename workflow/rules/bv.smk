# P1/P1b: bias–variance evaluation (BV-Test, Zhang et al. IP&M 2022; Zhang et al. SIGIR 2013).
# Inputs are per-topic score tables (results/<v>/scores/<c>.tsv) and the query-model family scores.

BVC = config["bv"]
BV_T9 = BVC["table9"]["collections"]
BV_FIG1 = BVC["fig1"]["collections"]
BV_T8 = BVC["table8"]["collection"]
BV_SIM = BVC["simulation"]
BV_SIM_C = list(BV_SIM["collections"])
BV_T12 = BVC["table12"]
for _c in list(BV_T9) + list(BV_FIG1) + ([BV_T8] if BV_T8 else []):
    if _c not in ALL_SCORED:
        raise ValueError(f"config key bv: collection {_c!r} is neither in `collections` nor in `imports`")
for _c in BV_SIM_C:
    if _c not in COLLECTIONS and config["imports"].get(_c, {}).get("type") != "runs":
        raise ValueError(f"config key bv.simulation.collections: {_c!r} is neither a retrieved collection (config "
                         f"`collections`) nor an import of type runs; the simulation resamples run files with scores")
for _t, _spec in BV_T12["tracks"].items():
    for _k in ("qrels", "runs"):
        if not Path(_spec[_k]).exists():
            raise ValueError(f"config key bv.table12.tracks.{_t}.{_k}: {_spec[_k]!r} does not exist")

# SIGIR 2013 Table 1 (two queries): AP of the original model A, expansion models B and C, target model T
SIGIR13_TOY = {"A": [0.3, 0.1], "B": [0.6, 0.08], "C": [0.65, 0.03], "T": [0.7, 0.2]}


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


rule bv_sigir13_tables:
    """SIGIR 2013 Tables 1-2 (toy example): MAP, Robustness Index, <Init, Bias, Var, Bias² + Var of AP and of
    ρ = AP_T − AP."""
    output:
        t1_csv=f"{V}/bv/sigir13_table1.csv",
        t1_md=report(f"{V}/bv/sigir13_table1.md", caption="../report/bv/sigir13_table1.rst", category="Bias-variance"),
        t2_csv=f"{V}/bv/sigir13_table2.csv",
        t2_md=report(f"{V}/bv/sigir13_table2.md", caption="../report/bv/sigir13_table2.rst", category="Bias-variance"),
        values=f"{V}/bv/values/sigir13_tables.json",
    params:
        models=json.dumps(SIGIR13_TOY, sort_keys=True),
        original="A",
        target="T",
        variant_c=json.dumps([0.32, 0.11]),
    log:
        f"{V}/logs/bv/sigir13_tables.log",
    threads: 1
    script:
        "../scripts/bv/sigir13_tables.py"


def bv_sim_inputs(wc):
    """Run files and qrels of a simulated collection: the population's runs, or a user's import of type runs."""
    c = wc.collection
    if c in COLLECTIONS:
        return {"runs": runs_of(c), "qrels": f"{V}/collections/{c}/qrels.txt"}
    spec = config["imports"][c]
    runs = sorted(str(p) for p in Path(spec["runs"]).iterdir() if p.is_file() and not p.name.startswith("."))
    return {"runs": runs, "qrels": spec["qrels"]}


rule bv_simulate:
    """BV-Test Sec. 3.4: k simulated document collections per topic from the population's runs; per (system, topic)
    the AP, its mean, Bias² and Var over the samples (Eq. 12)."""
    input:
        unpack(bv_sim_inputs),
    output:
        f"{V}/bv/simulated/{{collection}}.tsv",
    wildcard_constraints:
        collection=_alt(BV_SIM_C),
    params:
        k=BV_SIM["k"],
        unretrieved=BV_SIM["unretrieved"],
        rel_threshold=lambda wc: BV_SIM["relevance"].get(wc.collection, 1),
        depth=BV_SIM["depth"],
        shared=BV_SIM["shared"],
        seed=BVC["seed"],
    log:
        f"{V}/logs/bv/simulate_{{collection}}.log",
    threads: 1
    resources:
        mem_mb=4000,
    script:
        "../scripts/bv/simulate.py"


rule bv_table10:
    """BV-Test Table 10: Pearson correlation of the per-topic Bias² and Var averaged over topics (Eqs. 13-14)."""
    input:
        [f"{V}/bv/simulated/{c}.tsv" for c in BV_SIM_C],
    output:
        csv=f"{V}/bv/table10.csv",
        md=report(f"{V}/bv/table10.md", caption="../report/bv/table10.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table10.json",
    params:
        collections=BV_SIM_C,
    log:
        f"{V}/logs/bv/table10.log",
    threads: 1
    script:
        "../scripts/bv/table10.py"


rule bv_table11:
    """BV-Test Table 11: per topic, the Pearson correlation of Bias² and Var across systems."""
    input:
        [f"{V}/bv/simulated/{c}.tsv" for c in BV_SIM_C],
    output:
        csv=f"{V}/bv/table11.csv",
        summary=f"{V}/bv/table11_summary.csv",
        md=report(f"{V}/bv/table11.md", caption="../report/bv/table11.rst", category="Bias-variance"),
        values=f"{V}/bv/values/table11.json",
    params:
        collections=BV_SIM_C,
    log:
        f"{V}/logs/bv/table11.log",
    threads: 1
    script:
        "../scripts/bv/table11.py"


def bv_table12_inputs():
    files = []
    for _t, spec in sorted(BV_T12["tracks"].items()):
        files.append(spec["qrels"])
        if spec.get("topic_map"):
            files.append(spec["topic_map"])
        files += sorted(str(p) for p in Path(spec["runs"]).iterdir() if p.is_file() and not p.name.startswith("."))
    return files


rule bv_table12:
    """BV-Test Table 12 and Figs 2-3 on user-supplied Session-track runs (config bv.table12.tracks)."""
    input:
        bv_table12_inputs(),
    output:
        csv=f"{V}/bv/table12.csv",
        systems=f"{V}/bv/table12_systems.csv",
        md=report(f"{V}/bv/table12.md", caption="../report/bv/table12.rst", category="Bias-variance"),
        png=report(f"{V}/bv/fig_session.png", caption="../report/bv/fig_session.rst", category="Bias-variance",
                   labels={"figure": "Figs 2-3", "collection": "Session track"}),
        pdf=f"{V}/bv/fig_session.pdf",
        values=f"{V}/bv/values/table12.json",
    params:
        tracks=json.dumps(BV_T12["tracks"], sort_keys=True),
        measure=BV_T12["measure"],
        target=BV_T12["target"],
        pattern=BV_T12["pattern"],
    log:
        f"{V}/logs/bv/table12.log",
    threads: 1
    script:
        "../scripts/bv/table12.py"


def bv_values():
    v = [f"{V}/bv/values/table2.json"]
    if BV_T9:
        v.append(f"{V}/bv/values/table9.json")
    if BV_T8:
        v.append(f"{V}/bv/values/table8.json")
    v += [f"{V}/bv/values/sigir13_{c}.json" for c in config["querymodels"]["collections"]]
    v.append(f"{V}/bv/values/sigir13_tables.json")
    if BV_SIM_C:
        v += [f"{V}/bv/values/table10.json", f"{V}/bv/values/table11.json"]
    if BV_T12["tracks"]:
        v.append(f"{V}/bv/values/table12.json")
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
        f"{V}/bv/sigir13_table1.csv",
        f"{V}/bv/sigir13_table2.csv",
        [f"{V}/bv/table10.csv", f"{V}/bv/table11.csv"] if BV_SIM_C else [],
        [f"{V}/bv/table12.csv", f"{V}/bv/fig_session.png"] if BV_T12["tracks"] else [],
        f"{V}/bv/verify.csv",
