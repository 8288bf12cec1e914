"""Figures. Each function takes frames and returns a matplotlib Figure; scripts save it as PDF and PNG."""


def save(fig, pdf, png):
    """Write ``fig`` as PDF (dated by SOURCE_DATE_EPOCH, not the clock) and a 150-dpi PNG, then close it."""
    import matplotlib.pyplot as plt

    fig.savefig(pdf, bbox_inches="tight")
    fig.savefig(png, dpi=150, bbox_inches="tight")
    plt.close(fig)


def _num(x):
    """A finite-or-infinite float from a verify-table cell; None for empty, NaN, text and booleans."""
    import math

    if isinstance(x, bool) or str(x).strip().lower() in ("true", "false"):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _verdict(x):
    s = str(x).strip().lower()
    return True if s == "true" else False if s == "false" else None


def verify_figure(table, title: str = ""):
    """A verify table as a figure: every ``check`` row with a numeric paper value in the top panel, every ``claim``
    row (and every ``check`` row whose paper value is not a number) in the bottom panel; a table with neither says
    so in the axes.

    Top: ours − the paper's (a dot within the row's tolerance; an x when not ok, orange when the difference is
    explained, red when not) against the tolerance (the error bar around 0: the accepted band), on a symmetric-log
    axis whose limits hold every finite difference and tolerance with room to spare, so no point sits on or beyond
    the edge; a difference that is not finite (ours ±inf) is a triangle at the edge with its value written beside
    it; a row without a value is a grey "missing" at 0. Labels give the item, the paper's value and ours.
    Bottom: a claim's verdict (holds / fails / not tested), one row each."""
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kind = table["kind"].fillna("check")
    numeric = table["paper"].map(lambda p: _num(p) is not None)
    t = table[kind.eq("check") & numeric]
    c = table[kind.eq("claim") | (kind.eq("check") & ~numeric)]
    panels = [p for p in (t, c) if len(p)] or [t]
    heights = [max(len(p), 1) for p in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 1.2 * len(panels) + 0.16 * sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    axes = list(axes[:, 0])
    if len(t) or not len(c):
        ax = axes[0]
        n = max(len(t), 1)
        diffs = []
        for r in t.itertuples(index=False):
            ours = _num(r.reproduced)
            if ours is not None and math.isfinite(ours - _num(r.paper)):
                diffs.append(abs(ours - _num(r.paper)))
            diffs.append(abs(_num(r.tolerance) or 0.0))
        # the smallest power of ten above 1.5 x the largest finite |difference| or tolerance: on the symlog axis
        # that leaves at least log10(1.5) of a decade between any point and the edge
        lim = 10.0 ** math.ceil(math.log10(max(diffs + [1e-3]) * 1.5))
        labels = []
        for i, r in enumerate(t.itertuples(index=False)):
            paper, ours, tol = _num(r.paper), _num(r.reproduced), _num(r.tolerance) or 0.0
            ok = _verdict(r.ok) is True
            y = n - 1 - i
            ax.errorbar(0, y, xerr=tol, fmt="none", ecolor="0.6", capsize=2, lw=1)
            if ours is None:
                ax.text(0, y, "missing", color="0.5", fontsize=6, ha="center", va="center")
                labels.append(f"{r.item}  paper {paper:.4g}, ours -")
                continue
            explained = str(r.note).startswith("explained:")
            color = "tab:green" if ok else "tab:orange" if explained else "tab:red"
            d = ours - paper
            if math.isfinite(d):
                ax.plot(d, y, "o" if ok else "x", ms=4, color=color)
            else:  # at the edge, its value beside it
                edge = lim if d > 0 else -lim
                ax.plot(edge, y, ">" if d > 0 else "<", ms=5, color=color, clip_on=False)
                ax.text(edge * 0.5, y, f"{d:+g} ", color=color, fontsize=6, ha="right" if d > 0 else "left",
                        va="center")
            labels.append(f"{r.item}  paper {paper:.4g}, ours {ours:.4g}")
        ax.set_yticks(range(n - 1, n - 1 - len(labels), -1), labels, fontsize=6)
        ax.set_xscale("symlog", linthresh=1e-4)
        ax.set_xlim(-lim, lim)
        top = round(math.log10(lim))
        step = max(1, math.ceil((top + 4) / 4))  # at most five decades a side, from the linear threshold 1e-4 up
        decades = [10.0 ** e for e in range(top, -5, -step)][::-1]
        ticks = [-d for d in decades[::-1]] + [0.0] + decades
        ax.set_xticks(ticks, [f"{x:g}" for x in ticks], fontsize=6)
        ax.minorticks_off()
        ax.axvline(0, color="0.8", lw=0.5, zorder=0)
        ax.set_xlabel("ours − paper (symmetric log scale; bar: ± the row's tolerance)", fontsize=7)
        from matplotlib.lines import Line2D

        keys = [("o", "tab:green", "within tolerance"), ("x", "tab:orange", "differs, explained"),
                ("x", "tab:red", "differs, unexplained"), (">", "0.4", "not finite: at the edge, value beside")]
        ax.legend([Line2D([], [], ls="none", marker=m, color=c) for m, c, _ in keys], [k[2] for k in keys],
                  fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.set_title(f"{len(t)} numeric check rows", fontsize=8)
        ax.set_ylabel("numeric check (item, paper, ours)", fontsize=7)
        ax.set_ylim(-0.8, n - 0.2)
        if not len(t):
            ax.text(0, 0, "no numeric check rows and no claims", ha="center", va="center", fontsize=8)
    if len(c):
        ax = axes[-1]
        n = len(c)
        names = {True: "holds", False: "fails", None: "not tested"}
        styles = {True: ("o", "tab:green"), False: ("x", "tab:red"), None: ("s", "0.6")}
        for i, r in enumerate(c.itertuples(index=False)):
            v = _verdict(r.ok)
            mk, color = styles[v]
            ax.plot([1, 0, 2][[True, False, None].index(v)], n - 1 - i, mk, ms=5, color=color)
        ax.set_yticks(range(n - 1, -1, -1), [str(r.item) for r in c.itertuples(index=False)], fontsize=6)
        ax.set_xticks([0, 1, 2], [names[False], names[True], names[None]], fontsize=7)
        ax.set_xlim(-0.5, 2.5)
        ax.set_ylim(-0.8, n - 0.2)
        ax.set_xlabel("verdict of the claim on our data", fontsize=7)
        ax.set_ylabel("claim", fontsize=7)
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(f"{n} claims", fontsize=8)
    fig.suptitle(title, fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_figheight()))  # 0.3 in at the top for the suptitle
    return fig


VERDICT_COLOURS = {"reproduced": "#4daf4a", "explained": "#ff9f1c", "within noise": "#fee08b", "paper inconsistent": "#8c6bb1", "unexplained": "#e41a1c",
                   "not reproducible": "#bdbdbd", "agrees": "#377eb8", "disagrees": "#984ea3", "not computed": "#bdbdbd",
                   "holds": "#a6d96a", "fails": "#7f0000", "not testable": "#d9d9d9", "": "#f0f0f0"}


def verify_panels(table, title: str = "", max_rows: int = 24):
    """A verify table as one panel per table or group of rows (the item's first path part; items of two parts
    form one group), each a grid of cells coloured by the row's ``verdict``: rows are the item's middle parts
    (e.g. the collection), columns its last part (e.g. the column of the table). A cell of a numeric ``check`` row
    is annotated with ours - the paper's. A group with more than ``max_rows`` rows is split into panels. The
    figure keeps a normal size (about 16 inches wide) whatever the number of rows."""
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    t = table[table["paper"].notna()] if "paper" in table else table
    deep = {str(i).split("/")[0] for i in t["item"] if str(i).count("/") >= 2}
    groups = {}
    for r in t.itertuples(index=False):
        parts = str(r.item).split("/")
        if len(parts) > 2 or parts[0] in deep:  # e.g. table9/<collection>/<column>, table2/<cell>
            g, row, col = parts[0], "/".join(parts[1:-1]) or "-", parts[-1]
        else:  # e.g. true/<system>: one group, a row per first part
            g, row, col = "", parts[0] if len(parts) == 2 else "-", parts[-1]
        groups.setdefault(g, {}).setdefault(row, {})[col] = r
    panels = []
    for g, rows in groups.items():
        names = list(rows)
        for k in range(0, len(names), max_rows):
            chunk = names[k:k + max_rows]
            label = g or "items"
            panels.append((label + (f" ({k // max_rows + 1})" if len(names) > max_rows else ""),
                           {n: rows[n] for n in chunk}))
    if not panels:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.text(0.5, 0.5, "no rows", ha="center", va="center")
        ax.set_axis_off()
        return fig
    ncols = 2 if len(panels) > 1 else 1
    nrows = math.ceil(len(panels) / ncols)
    heights = [max(len(p[1]) for p in panels[i * ncols:(i + 1) * ncols]) + 4 for i in range(nrows)]
    fig, axes = plt.subplots(nrows, ncols, figsize=(16, min(22, 1.2 + 0.28 * sum(heights))), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax in axes.flat[len(panels):]:
        ax.set_axis_off()
    for ax, (name, rows) in zip(axes.flat, panels):
        cols = list(dict.fromkeys(c for r in rows.values() for c in r))
        for i, rname in enumerate(rows):
            for j, c in enumerate(cols):
                r = rows[rname].get(c)
                if r is None:
                    continue
                v = "" if r.verdict is None or (isinstance(r.verdict, float) and math.isnan(r.verdict)) \
                    else str(r.verdict)
                ax.add_patch(plt.Rectangle((j, i), 1, 1, color=VERDICT_COLOURS.get(v, "#f0f0f0"), ec="white"))
                ours, paper = _num(r.reproduced), _num(r.paper)
                if str(r.kind) in ("check", "cross-check", "nan") and ours is not None and paper is not None \
                        and math.isfinite(ours - paper):
                    ax.text(j + 0.5, i + 0.5, f"{ours - paper:+.2g}", ha="center", va="center", fontsize=6)
        ax.set_xlim(0, max(len(cols), 1))
        ax.set_ylim(len(rows), 0)
        ax.set_xticks([j + 0.5 for j in range(len(cols))], [c[:24] for c in cols], rotation=35, ha="right",
                      fontsize=7)
        ax.set_yticks([i + 0.5 for i in range(len(rows))], [n[:32] for n in rows], fontsize=7)
        ax.set_title(name, fontsize=9, loc="left")
        ax.tick_params(length=0)
        for s in ax.spines.values():
            s.set_visible(False)
    used = {str(v) for v in t["verdict"].fillna("")} if "verdict" in t else set()
    handles = [Patch(color=c, label=v or "no verdict (key, info)") for v, c in VERDICT_COLOURS.items() if v in used]
    fig.legend(handles=handles, loc="upper center", ncol=min(len(handles), 6), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 1.0))
    fig.suptitle(title + "\ncells: ours - paper's value", fontsize=10, y=1.04)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig
