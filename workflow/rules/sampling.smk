# P2: unbiased comparative evaluation by sampling (Schnabel et al., ICTIR 2016). Plan: irrepro.papers.sampling.plan.

SAMPLING = PLAN.papers["sampling"]
_S = config["sampling"]


rule sampling_synth:
    """SYNTH Tables 2–4: true U(S), ShallowPool, DeepPool and Û(S) (approximate Q*); sd under Q*, QP, uniform;
    CI half-width and coverage."""
    output:
        csv=f"{V}/sampling/synth_tables.csv",
        t2=report(f"{V}/sampling/table2.md", caption="../report/sampling/table2.rst", category="Sampling"),
        t3=report(f"{V}/sampling/table3.md", caption="../report/sampling/table3.rst", category="Sampling"),
        t4=report(f"{V}/sampling/table4.md", caption="../report/sampling/table4.rst", category="Sampling"),
        values=f"{V}/sampling/values/synth.json",
    log:
        f"{V}/logs/sampling/synth.log",
    benchmark:
        f"{V}/benchmarks/sampling_synth.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    params:
        synth=json.dumps(_S["synth"], sort_keys=True),
        seed=_S["seed"],
        budget_per_query=_S["budget_per_query"],
        trials=_S["trials"],
        alpha=_S["alpha"],
    script:
        "../scripts/sampling/synth.py"


rule sampling_halfwidth_readings:
    """Table 4's CI half-width (Eq. 6) under every reading of the formula, side by side on the same draws, and its
    expectation on two further SYNTH draws (irrepro.papers.sampling.readings)."""
    output:
        csv=f"{V}/sampling/ci_halfwidth_readings.csv",
        md=report(
            f"{V}/sampling/ci_halfwidth_readings.md",
            caption="../report/sampling/halfwidth_readings.rst",
            category="Sampling",
        ),
    log:
        f"{V}/logs/sampling/halfwidth_readings.log",
    benchmark:
        f"{V}/benchmarks/sampling_halfwidth_readings.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    params:
        synth=json.dumps(_S["synth"], sort_keys=True),
        seed=_S["seed"],
        budget_per_query=_S["budget_per_query"],
        trials=_S["trials"],
        alpha=_S["alpha"],
    script:
        "../scripts/sampling/halfwidth_readings.py"


rule sampling_comparative:
    """Tables 5–7 (Σ(Q)·n of naive vs Q* for pairwise, vs-baseline and ranking; approximate and true utilities)
    and Figs 1–3 (accuracy against budget), on SYNTH or on a collection of our population (the TREC substitute)."""
    input:
        unpack(_sampling_inputs),
    output:
        tables=f"{V}/sampling/tables5-7_{{collection}}.csv",
        md=report(
            f"{V}/sampling/tables5-7_{{collection}}.md", caption="../report/sampling/tables57.rst", category="Sampling"
        ),
        accuracy=f"{V}/sampling/accuracy_{{collection}}.csv",
        tables24=f"{V}/sampling/tables2-4_{{collection}}.csv",
        pdf=f"{V}/sampling/figs1-3_{{collection}}.pdf",
        png=report(
            f"{V}/sampling/figs1-3_{{collection}}.png",
            caption="../report/sampling/figs.rst",
            category="Sampling",
            labels={"figure": "Figs 1-3", "collection": "{collection}"},
        ),
        values=f"{V}/sampling/values/comparative_{{collection}}.json",
    log:
        f"{V}/logs/sampling/comparative_{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/sampling_comparative/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(SAMPLING.data_sets),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=8000,
    params:
        seed=_S["seed"],
        window=_S["window"],
        budgets_per_query=_S["budgets_per_query"],
        accuracy_trials=_S["accuracy_trials"],
        synth=_synth_only(json.dumps(_S["synth"], sort_keys=True)),
        synth_replicates=_synth_only(_S["synth_replicates"]),
        depth=_trec_only(_S["trec"]["depth"]),
        budget_per_query=_trec_only(_S["budget_per_query"]),
        trials=_trec_only(_S["trials"]),
        alpha=_trec_only(_S["alpha"]),
    script:
        "../scripts/sampling/comparative.py"


VERIFY_VALUES["sampling"] = [f"{V}/sampling/values/synth.json"] + [
    f"{V}/sampling/values/comparative_{c}.json" for c in SAMPLING.data_sets
]
# the verify hook leaves out rows of systems / collections the config did not ask for
VERIFY_CONTEXT["sampling"] = {
    "systems": list(_S["synth"]["systems"]),
    "collections": list(SAMPLING.trec_collections),
}


rule sampling_all:
    input:
        f"{V}/sampling/synth_tables.csv",
        f"{V}/sampling/ci_halfwidth_readings.md",
        [f"{V}/sampling/figs1-3_{c}.png" for c in SAMPLING.data_sets],
        f"{V}/sampling/verify.csv",
