# Verify: per paper, the paper's numbers (workflow/resources/reference/<paper>.yaml) beside ours (the values files
# its rules wrote, registered in VERIFY_VALUES by the paper's rule file), and one summary of every paper.


rule verify:
    """<paper>/verify.csv: one row per reference row (item, kind, data, paper's value, ours, difference, tolerance,
    basis, ok, verdict, evidence_low, evidence_high, evidence, note), then any computed item without a paper value;
    verify.md with the scorecard line on top; verify.png: every numeric check row against its tolerance. Explained
    rows get their evidence from input.evidence (the score tables the paper's evidence functions read)."""
    input:
        values=lambda wc: VERIFY_VALUES[wc.paper],
        reference=f"{REFERENCE}/{{paper}}.yaml",
        evidence=lambda wc: verify_evidence(wc.paper)[0],
    output:
        csv=f"{V}/{{paper}}/verify.csv",
        md=report(
            f"{V}/{{paper}}/verify.md",
            caption="../report/verify_paper.rst",
            category="Verify",
            labels={"paper": "{paper}"},
        ),
        png=report(
            f"{V}/{{paper}}/verify.png",
            caption="../report/verify_figure.rst",
            category="Verify",
            labels={"paper": "{paper}", "figure": "checks"},
        ),
        pdf=f"{V}/{{paper}}/verify.pdf",
    log:
        f"{V}/logs/{{paper}}/verify.log",
    benchmark:
        f"{V}/benchmarks/verify/{{paper}}.tsv"
    wildcard_constraints:
        paper=_alt(verify_papers()),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        paper=lambda wc: wc.paper,
        context=lambda wc: json.dumps(VERIFY_CONTEXT.get(wc.paper, {}), sort_keys=True),
        evidence=lambda wc: json.dumps(verify_evidence(wc.paper)[1], sort_keys=True),
    script:
        "../scripts/verify.py"


rule verify_summary:
    """results/<version>/verify.md: what each verdict means, per paper the scorecard over check rows (reproduced /
    explained / unexplained / not reproducible; cross-checks and claims apart), and every row that is not
    reproduced, a cross-check that disagrees or a claim that fails."""
    input:
        verify_tables(),
    output:
        md=report(f"{V}/verify.md", caption="../report/verify.rst", category="Verify"),
        csv=f"{V}/verify_summary.csv",
    log:
        f"{V}/logs/verify_summary.log",
    benchmark:
        f"{V}/benchmarks/verify_summary.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    script:
        "../scripts/verify_summary.py"
