# P4, VB-Score (Ding 2025, seed 000): variance-bounded evaluation across query intents.
# Intents = TREC Web diversity subtopics; systems = the configured run files. Outputs under results/<v>/vb/.

VBC = config["vb"]
VB_COLL = sorted(VBC["collections"])


def _vb_run_name(spec):
    if spec.get("name"):
        return spec["name"]
    src = spec.get("artifact") or spec.get("path") or ""
    name = Path(src).name
    for ext in (".gz", ".txt", ".run"):
        name = name[: -len(ext)] if name.endswith(ext) else name
    return name


def _vb_check():
    from irrepro.errors import InputError
    from irrepro.datasets.mirror import ARTIFACTS

    for c, spec in VBC["collections"].items():
        names = []
        for i, r in enumerate(spec.get("runs", [])):
            key = f"vb.collections.{c}.runs[{i}]"
            if bool(r.get("artifact")) == bool(r.get("path")):
                raise InputError(f"config key {key}: give exactly one of 'artifact' or 'path'")
            if r.get("artifact") and r["artifact"] not in ARTIFACTS:
                raise InputError(f"config key {key}.artifact: unknown artifact {r['artifact']!r} "
                                 f"(declared artifacts: src/irrepro/data/artifacts.tsv)")
            if r.get("path") and not os.path.isfile(r["path"]):
                raise InputError(f"config key {key}.path: run file {r['path']!r} not found")
            names.append(_vb_run_name(r))
        if len(set(names)) != len(names):
            raise InputError(f"config key vb.collections.{c}.runs: two runs have the same name {names}; set 'name'")
    for key, sub, allowed in (("forest_k", VBC["forest_k"], VBC["ks"]), ("compare_k", VBC["compare_k"], VBC["ks"]),
                              ("forest_alpha", VBC["forest_alpha"], VBC["alphas"])):
        if VB_COLL and sub not in allowed:
            raise InputError(f"config key vb.{key}: {sub} must be one of {allowed}")


_vb_check()
VB_RUNS = {c: {_vb_run_name(r): (artifact(r["artifact"]) if r.get("artifact") else r["path"])
               for r in VBC["collections"][c].get("runs", [])} for c in VB_COLL}
VB_WITH_RUNS = [c for c in VB_COLL if VB_RUNS[c]]
VB_INTENT_PARAMS = {k: VBC[k] for k in ("min_relevance", "mass", "temperature", "truncation")}
VB_SCORE_PARAMS = {k: VBC[k] for k in ("seed", "alphas", "ks", "gains", "priors", "min_relevance", "n_boot",
                                       "ci_level", "forest_k", "replicas", "concentration", "flip_prob",
                                       "truncation")}


def vb_targets():
    t = [f"{V}/vb/table1.csv", f"{V}/vb/table1.md", f"{V}/vb/case_studies.csv", f"{V}/vb/case_studies.md",
         f"{V}/vb/verify.csv", f"{V}/vb/verify.md"]
    if VB_COLL:
        t += [f"{V}/vb/intents_summary.csv", f"{V}/vb/intents_summary.md"]
    for c in VB_WITH_RUNS:
        t += [f"{V}/vb/{c}/summary.csv", f"{V}/vb/{c}/summary.md", f"{V}/vb/{c}/compare.csv", f"{V}/vb/{c}/compare.md"]
        t += [f"{V}/vb/{c}/fig{n}.{ext}" for n in (2, 3, 4) for ext in ("pdf", "png")]
        t += [f"{V}/vb/{c}/sensitivity.csv", f"{V}/vb/{c}/sensitivity.md"]
    return t


wildcard_constraints:
    vbcoll=_alt(VB_COLL),


rule vb_paper:
    """Table 1 recomputed from its ES column; the Sec. 5 case studies; the paper's range/monotonicity claims."""
    input:
        reference=f"{REPO}/config/reference/vb.yaml",
    output:
        table1=f"{V}/vb/table1.csv",
        table1_md=f"{V}/vb/table1.md",
        cases=f"{V}/vb/case_studies.csv",
        cases_md=f"{V}/vb/case_studies.md",
        reproduced=f"{V}/vb/paper_items.json",
    params:
        alphas=VBC["alphas"],
    log:
        f"{V}/logs/vb/paper.log",
    threads: 1
    script:
        "../scripts/vb/paper.py"


rule vb_data:
    """Topics, per-subtopic qrels (subtopic in column 2) and the intent table of a diversity collection."""
    output:
        topics=f"{V}/vb/data/{{vbcoll}}/topics.tsv",
        qrels=f"{V}/vb/data/{{vbcoll}}/qrels.txt",
        intents=f"{V}/vb/data/{{vbcoll}}/intents.csv",
    params:
        dataset=lambda wc: VBC["collections"][wc.vbcoll]["ir_datasets"],
        intents=VB_INTENT_PARAMS,
        mirror=MIRROR,
        home=f"{RES}/ir_datasets",
    log:
        f"{V}/logs/vb/data_{{vbcoll}}.log",
    threads: 1
    resources:
        mem_mb=2000,
    script:
        "../scripts/vb/data.py"


rule vb_intents_summary:
    """Intents per topic and how peaked the judged-mass prior is, for every configured diversity collection."""
    input:
        intents=expand(f"{V}/vb/data/{{c}}/intents.csv", c=VB_COLL),
        topics=expand(f"{V}/vb/data/{{c}}/topics.tsv", c=VB_COLL),
    output:
        csv=f"{V}/vb/intents_summary.csv",
        md=f"{V}/vb/intents_summary.md",
    params:
        collections=VB_COLL,
    log:
        f"{V}/logs/vb/intents_summary.log",
    threads: 1
    script:
        "../scripts/vb/intents_summary.py"


rule vb_scores:
    """Per-topic ES/VB of every run (gains x priors x k x alpha), collection VB@k with CIs over queries and over
    pooled intents, and Monte Carlo replicas (Algorithm 1)."""
    input:
        runs=lambda wc: list(VB_RUNS[wc.vbcoll].values()),
        qrels=f"{V}/vb/data/{{vbcoll}}/qrels.txt",
        intents=f"{V}/vb/data/{{vbcoll}}/intents.csv",
    output:
        per_topic=f"{V}/vb/{{vbcoll}}/per_topic.csv",
        summary=f"{V}/vb/{{vbcoll}}/summary.csv",
        summary_md=f"{V}/vb/{{vbcoll}}/summary.md",
        forest=f"{V}/vb/{{vbcoll}}/forest.csv",
        per_topic_ci=f"{V}/vb/{{vbcoll}}/per_topic_ci.csv",
        replicas=f"{V}/vb/{{vbcoll}}/replicas.csv",
    params:
        systems=lambda wc: list(VB_RUNS[wc.vbcoll]),
        vb=VB_SCORE_PARAMS,
    log:
        f"{V}/logs/vb/scores_{{vbcoll}}.log",
    threads: 1
    resources:
        mem_mb=4000,
    script:
        "../scripts/vb/scores.py"


rule vb_sensitivity:
    """VB@forest_k of every run across temperatures of the mass prior and truncation rules (Sec. 3.5 knobs)."""
    input:
        runs=lambda wc: list(VB_RUNS[wc.vbcoll].values()),
        qrels=f"{V}/vb/data/{{vbcoll}}/qrels.txt",
    output:
        csv=f"{V}/vb/{{vbcoll}}/sensitivity.csv",
        md=f"{V}/vb/{{vbcoll}}/sensitivity.md",
    params:
        systems=lambda wc: list(VB_RUNS[wc.vbcoll]),
        sensitivity=VBC["sensitivity"],
        base=VB_INTENT_PARAMS,
        k=VBC["forest_k"],
        gains=VBC["gains"],
        alphas=VBC["alphas"],
    log:
        f"{V}/logs/vb/sensitivity_{{vbcoll}}.log",
    threads: 1
    script:
        "../scripts/vb/sensitivity.py"


rule vb_compare:
    """VB and ES beside the intent-aware measures (alpha-nDCG, ERR-IA; pyndeval) on the same runs."""
    input:
        runs=lambda wc: list(VB_RUNS[wc.vbcoll].values()),
        qrels=f"{V}/vb/data/{{vbcoll}}/qrels.txt",
        per_topic=f"{V}/vb/{{vbcoll}}/per_topic.csv",
    output:
        csv=f"{V}/vb/{{vbcoll}}/compare.csv",
        md=f"{V}/vb/{{vbcoll}}/compare.md",
        agreement=f"{V}/vb/{{vbcoll}}/compare_agreement.csv",
        per_topic=f"{V}/vb/{{vbcoll}}/intent_aware_per_topic.csv",
    params:
        systems=lambda wc: list(VB_RUNS[wc.vbcoll]),
        measures=VBC["compare_measures"],
        k=VBC["compare_k"],
        alphas=VBC["alphas"],
    log:
        f"{V}/logs/vb/compare_{{vbcoll}}.log",
    threads: 1
    script:
        "../scripts/vb/compare.py"


rule vb_figures:
    """Fig. 2 (ES/VB across k), Fig. 3 (forest plot of VB_alpha at forest_k), Fig. 4 (forest plot of ES)."""
    input:
        summary=f"{V}/vb/{{vbcoll}}/summary.csv",
        forest=f"{V}/vb/{{vbcoll}}/forest.csv",
    output:
        fig2_pdf=f"{V}/vb/{{vbcoll}}/fig2.pdf",
        fig2_png=report(
            f"{V}/vb/{{vbcoll}}/fig2.png",
            caption="../report/vb/fig2.rst",
            category="VB-Score",
            labels={"collection": "{vbcoll}", "figure": "fig2"},
        ),
        fig3_pdf=f"{V}/vb/{{vbcoll}}/fig3.pdf",
        fig3_png=report(
            f"{V}/vb/{{vbcoll}}/fig3.png",
            caption="../report/vb/fig3.rst",
            category="VB-Score",
            labels={"collection": "{vbcoll}", "figure": "fig3"},
        ),
        fig4_pdf=f"{V}/vb/{{vbcoll}}/fig4.pdf",
        fig4_png=report(
            f"{V}/vb/{{vbcoll}}/fig4.png",
            caption="../report/vb/fig4.rst",
            category="VB-Score",
            labels={"collection": "{vbcoll}", "figure": "fig4"},
        ),
    params:
        fig2_ks=[k for k in VBC["ks"] if k in (1, 3, 5, 10)] or VBC["ks"],
        alphas=VBC["alphas"],
        forest_alpha=VBC["forest_alpha"],
        forest_k=VBC["forest_k"],
        ci_level=VBC["ci_level"],
    log:
        f"{V}/logs/vb/figures_{{vbcoll}}.log",
    threads: 1
    script:
        "../scripts/vb/figures.py"


rule vb_verify:
    """The verify table: every number the paper prints that we can recompute, beside ours."""
    input:
        reference=f"{REPO}/config/reference/vb.yaml",
        reproduced=f"{V}/vb/paper_items.json",
        per_topic=[f"{V}/vb/{c}/per_topic.csv" for c in VB_WITH_RUNS if c == "web2012"],
        compare=[f"{V}/vb/{c}/intent_aware_per_topic.csv" for c in VB_WITH_RUNS if c == "web2012"],
    output:
        csv=f"{V}/vb/verify.csv",
        md=report(f"{V}/vb/verify.md", caption="../report/vb/verify.rst", category="VB-Score"),
    log:
        f"{V}/logs/vb/verify.log",
    threads: 1
    script:
        "../scripts/vb/verify.py"


rule vb_all:
    input:
        vb_targets(),

