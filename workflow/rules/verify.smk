# One summary of every paper's verify table: how many of the paper's numbers we reproduce within tolerance.


def verify_tables():
    """Every paper module with a verify table (the labels stage has none)."""
    skip = {"labels"} | ({"ci"} if "ci" in PAPERS_PRESENT and not CI_COLLS else set())
    return [f"{V}/{p}/verify.csv" for p in PAPERS_PRESENT if p not in skip]


rule verify_summary:
    """results/<version>/verify.md: per paper, rows reproduced within tolerance, and every row that is not."""
    input:
        verify_tables(),
    output:
        md=report(f"{V}/verify.md", caption="../report/verify.rst", category="Verify"),
        csv=f"{V}/verify_summary.csv",
    log:
        f"{V}/logs/verify_summary.log",
    threads: 1
    script:
        "../scripts/verify_summary.py"
