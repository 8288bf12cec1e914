"""Figures. Each function takes frames and returns a matplotlib Figure; scripts save it as PDF and PNG."""


def save(fig, pdf, png):
    """Write ``fig`` as PDF (dated by SOURCE_DATE_EPOCH, not the clock) and a 150-dpi PNG, then close it."""
    import matplotlib.pyplot as plt

    fig.savefig(pdf, bbox_inches="tight")
    fig.savefig(png, dpi=150, bbox_inches="tight")
    plt.close(fig)


def verify_figure(table, title: str = ""):
    """Every numeric ``check`` row of a verify table: ours − the paper's (a dot; an x when not ok, orange when the
    difference is explained, red when not) against the
    row's tolerance (the error bar around 0: the accepted band), on a symmetric-log axis so that rows of every
    scale fit; a row without a value is a grey "missing" at 0. Labels give the item, the paper's value and ours."""
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def num(x):
        try:
            v = float(x)
        except (TypeError, ValueError):
            return None
        return None if math.isnan(v) else v

    t = table[table["kind"].fillna("check").eq("check")]
    t = t[t["paper"].map(lambda p: num(p) is not None and not isinstance(p, bool)
                         and str(p).lower() not in ("true", "false"))]
    n = max(len(t), 1)
    fig, ax = plt.subplots(figsize=(9, 0.8 + 0.16 * n))
    labels = []
    for i, r in enumerate(t.itertuples(index=False)):
        paper, ours, tol = num(r.paper), num(r.reproduced), num(r.tolerance) or 0.0
        ok = str(r.ok).strip().lower() == "true"
        y = n - 1 - i
        ax.errorbar(0, y, xerr=tol, fmt="none", ecolor="0.6", capsize=2, lw=1)
        if ours is None:
            ax.text(0, y, "missing", color="0.5", fontsize=6, ha="center", va="center")
            labels.append(f"{r.item}  paper {paper:.4g}, ours -")
        else:
            explained = str(r.note).startswith("explained:")
            ax.plot(ours - paper, y, "o" if ok else "x", ms=4,
                    color="tab:green" if ok else "tab:orange" if explained else "tab:red")
            labels.append(f"{r.item}  paper {paper:.4g}, ours {ours:.4g}")
    ax.set_yticks(range(n - 1, n - 1 - len(labels), -1), labels, fontsize=6)
    ax.set_xscale("symlog", linthresh=1e-4)
    ax.axvline(0, color="0.8", lw=0.5, zorder=0)
    ax.set_xlabel("ours − paper (bar: ± tolerance; green o within; x not: orange explained, red not)", fontsize=8)
    ax.set_title(title, fontsize=8)
    ax.set_ylim(-0.8, n - 0.2)
    fig.tight_layout()
    return fig
