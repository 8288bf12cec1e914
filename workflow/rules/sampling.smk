# P2: unbiased comparative evaluation by sampling (Schnabel et al., ICTIR 2016).

SMC = config["sampling"]


rule sampling_synth:
    """SYNTH Tables 2–4: true U(S), ShallowPool, DeepPool and Û(S) (approximate Q*); sd under Q*, QP, uniform;
    CI half-width and coverage."""
    output:
        csv=f"{V}/sampling/synth_tables.csv",
        t2=report(f"{V}/sampling/table2.md", caption="../report/sampling/table2.rst", category="Sampling"),
        t3=f"{V}/sampling/table3.md",
        t4=f"{V}/sampling/table4.md",
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


rule sampling_verify:
    input:
        values=f"{V}/sampling/values/synth.json",
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
        f"{V}/sampling/verify.csv",
