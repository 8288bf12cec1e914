# P2: unbiased comparative evaluation by sampling (Schnabel et al., ICTIR 2016).

SMC = config["sampling"]


rule sampling_synth:
    """SYNTH Tables 2–4: true U(S), ShallowPool, DeepPool and Û(S) (approximate Q*); sd under Q*, QP, uniform;
    CI half-width and coverage."""
    output:
        csv=f"{V}/sampling/synth_tables.csv",
        t2=report(f"{V}/sampling/table2.md", caption="../report/sampling/table2.rst", category="Sampling"),
        t3=report(f"{V}/sampling/table3.md", caption="../report/sampling/table3.rst", category="Sampling"),
        t4=report(f"{V}/sampling/table4.md", caption="../report/sampling/table4.rst", category="Sampling"),
        values=f"{V}/sampling/values/synth.json",
    params:
        settings=json.dumps(SMC, sort_keys=True),
    log:
        f"{V}/logs/sampling/synth.log",
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    script:
        "../scripts/sampling/synth.py"


SM_TREC = [c for c in SMC["trec"]["collections"]]
for _c in SM_TREC:
    if _c not in COLLECTIONS:
        raise ValueError(f"config key sampling.trec.collections: {_c!r} is not a retrieved collection")


def _sampling_inputs(wc):
    if wc.data == "synth":
        return {}
    return {"runs": runs_of(wc.data), "qrels": f"{V}/collections/{wc.data}/qrels.txt"}


rule sampling_comparative:
    """Tables 5–7 (Σ(Q)·n of naive vs Q* for pairwise, vs-baseline and ranking; approximate and true utilities)
    and Figs 1–3 (accuracy against budget), on SYNTH or on a collection of our population (the TREC substitute)."""
    input:
        unpack(_sampling_inputs),
    output:
        tables=f"{V}/sampling/tables5-7_{{data}}.csv",
        md=report(f"{V}/sampling/tables5-7_{{data}}.md", caption="../report/sampling/tables57.rst",
                  category="Sampling"),
        accuracy=f"{V}/sampling/accuracy_{{data}}.csv",
        tables24=f"{V}/sampling/tables2-4_{{data}}.csv",
        pdf=f"{V}/sampling/figs1-3_{{data}}.pdf",
        png=report(f"{V}/sampling/figs1-3_{{data}}.png", caption="../report/sampling/figs.rst", category="Sampling",
                   labels={"figure": "Figs 1-3", "data": "{data}"}),
        values=f"{V}/sampling/values/comparative_{{data}}.json",
    params:
        settings=json.dumps(SMC, sort_keys=True),
    log:
        f"{V}/logs/sampling/comparative_{{data}}.log",
    threads: 1
    resources:
        mem_mb=8000,
    script:
        "../scripts/sampling/comparative.py"


rule sampling_verify:
    input:
        values=[f"{V}/sampling/values/synth.json"]
        + [f"{V}/sampling/values/comparative_{d}.json" for d in ["synth"] + SM_TREC],
        reference=f"{REPO}/config/reference/sampling.yaml",
    output:
        csv=f"{V}/sampling/verify.csv",
        md=report(f"{V}/sampling/verify.md", caption="../report/sampling/verify.rst", category="Verify"),
    log:
        f"{V}/logs/sampling/verify.log",
    threads: 1
    script:
        "../scripts/sampling/verify.py"


rule sampling_all:
    input:
        f"{V}/sampling/synth_tables.csv",
        [f"{V}/sampling/figs1-3_{d}.png" for d in ["synth"] + SM_TREC],
        f"{V}/sampling/verify.csv",
