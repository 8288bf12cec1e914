"""Every figure function of the library, rendered on small synthetic inputs: each figure must be readable alone.

The functions are discovered, not listed: every public function of a ``plots`` module or ``irrepro.core.figures``,
and every public function elsewhere under ``src/irrepro`` whose source draws (``plt.subplots(``). A new figure
function without an entry in :data:`BUILDERS` fails :func:`test_every_figure_function_is_rendered`; one without axis
labels, a title naming what it shows or a legend over several series fails :func:`test_figure_is_readable_alone`.
"""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"

#: public functions of the figure modules that draw no figure, and why
NOT_FIGURES = {
    "irrepro.core.figures.save": "writes a figure it is given",
    "irrepro.papers.bv.plots.save": "writes a figure it is given",
    "irrepro.papers.sampling.plots.save": "writes a figure it is given",
    "irrepro.retrieval.plots.mean_with_ci": "a table (mean and t-interval per system), drawn by population_figure",
}


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(SRC).with_suffix("").parts)


def figure_functions() -> list[str]:
    """Qualified names of the library's figure functions (see the module docstring)."""
    out = []
    for path in sorted((SRC / "irrepro").rglob("*.py")):
        text = path.read_text()
        figure_module = path.name == "plots.py" or _module_name(path) == "irrepro.core.figures"
        if not figure_module and "subplots(" not in text:
            continue
        mod = importlib.import_module(_module_name(path))
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if name.startswith("_") or fn.__module__ != mod.__name__:
                continue
            if figure_module or "subplots(" in inspect.getsource(fn):
                out.append(f"{mod.__name__}.{name}")
    return sorted(set(out) - set(NOT_FIGURES))


# ---- synthetic inputs: each builder returns [(figure, words its titles must name)] ----

RNG = np.random.default_rng(0)
COLL = "mycollection"


def _scores(systems=("bm25", "bm25+rm3", "dph"), measures=("AP", "nDCG@10"), topics=6):
    rows = [(COLL, s, str(t), m, float(RNG.uniform(0, 1))) for s in systems for t in range(topics) for m in measures]
    return pd.DataFrame(rows, columns=["collection", "system", "topic", "measure", "value"])


def _verify_table():
    from irrepro.core.verify import build_verify_table
    return build_verify_table(
        [{"item": "a", "paper": 1.0, "tolerance": 0.1, "basis": "b"}, {"item": "b", "paper": 2.0},
         {"item": "huge", "paper": 1.0, "tolerance": 0.01, "basis": "b"},
         {"item": "infinite", "paper": 1.0, "tolerance": 0.01, "basis": "b"},
         {"item": "c", "kind": "claim", "paper": True}, {"item": "d", "kind": "claim", "paper": True}],
        {"a": 1.05, "huge": 1e6, "infinite": float("inf"), "c": True, "d": False})


def _bv_fig1():
    from irrepro.papers.bv.plots import fig1
    from irrepro.papers.bv.tables import fig1_data
    m = pd.DataFrame(RNG.uniform(0, 1, (8, 5)), columns=[f"s{i}" for i in range(5)])
    t, r, why = fig1_data(m)
    return [(fig1(t, r, why, COLL, "AP"), [COLL])]


def _bv_sigir13():
    from irrepro.papers.bv.plots import sigir13_figs
    t = pd.DataFrame({"bias2": [0.01, 0.02, 0.015, 0.03], "var": [0.02, 0.01, 0.012, 0.02]},
                     index=["rm3_l0.2", "rm3_l0.5", "rm1_rn0.5", "bm25"])
    return [(sigir13_figs(t, 0.31, COLL), [COLL])]


def _bv_session():
    from irrepro.papers.bv.plots import session_figs
    rows = [("track1", s, c, float(RNG.uniform()), float(RNG.uniform())) for s in ("a", "b", "c") for c in ("RL1", "RL2")]
    per = pd.DataFrame(rows, columns=["track", "system", "condition", "total", "total_norm"])
    return [(session_figs(per, {"track1": {"conditions": ["RL1", "RL2"]}}, "nDCG"), ["track1"])]


def _ci_summary(by, values):
    rows = []
    for m in ("bootstrap", "ppi", "crc"):
        for x in values:
            w = float(RNG.uniform(1, 3))
            c = float(RNG.uniform(0.85, 1))
            rows.append({"method": m, by: x, "width": w, "width_lo": w - 0.5, "width_hi": w + 0.5, "coverage": c,
                         "coverage_lo": c - 0.05, "coverage_hi": min(1.0, c + 0.05)})
    return pd.DataFrame(rows)


def _ci_fig2():
    from irrepro.papers.ci.plots import fig2
    return [(fig2(_ci_summary("n", [5, 10, 20]), f"{COLL}, labels: x (20 queries, 10 repetitions)"), [COLL])]


def _ci_fig3():
    from irrepro.papers.ci.plots import fig3
    return [(fig3(_ci_summary("beta", [0, 0.5, 1]), _ci_summary("zeta", [0, 0.5, 1]), f"{COLL}, labels: x"), [COLL])]


def _ci_fig4():
    from irrepro.papers.ci.plots import fig4
    rows = [{"zeta": z, "query_id": str(q), "true": float(q), "low": q - 1.0, "high": q + 0.5 + z,
             "covered": bool(q % 3), "predicted": q + 0.3} for z in (0.0, 0.5) for q in range(6)]
    return [(fig4(pd.DataFrame(rows), f"{COLL}, labels: x: per-query CRC"), [COLL])]


def _ci_systems():
    from irrepro.papers.ci.plots import systems_figure
    rows = [{"system": s, "measure": m, "method": meth, "estimate": 1.0 + i, "low": 0.5 + i, "high": 1.5 + i,
             "truth": 1.1 + i} for i, s in enumerate(("sysA", "sysB")) for m in ("DCG@10", "nDCG@10")
            for meth in ("bootstrap", "ppi", "ppi++", "crc")]
    return [(systems_figure(pd.DataFrame(rows), f"{COLL}: 95% intervals, 10 human-labelled queries"), [COLL])]


def _ci_systems_plan():
    from irrepro.papers.ci.plots import systems_plan_figure
    rows = [{"system": s, "measure": meas, "method": meth, "m": m, "width": (1 + j) / np.sqrt(m), "n": 10}
            for s in ("sysA", "sysB") for meas in ("DCG@10", "nDCG@10")
            for j, meth in enumerate(("bootstrap", "ppi", "ppi++", "crc")) for m in (2, 5, 10, 50)]
    return [(systems_plan_figure(pd.DataFrame(rows), f"{COLL}: width vs human-labelled queries"), [COLL])]


def _labels_agreement():
    from irrepro.labels.plots import PANELS, agreement_figure
    rows = [{"collection": c, "labeler": lab, **{k: float(RNG.uniform(-0.1, 0.9)) for k in PANELS}}
            for c in (COLL, "other") for lab in ("bi-encoder", "smollm2")]
    return [(agreement_figure(pd.DataFrame(rows), "labels against the human grades"), ["human grades"])]


def _self_preference():
    from irrepro.selfpref.report import self_preference_figure
    rows = [{"collection": COLL, "labeler": lab, "system": f"s{i}", "same_model": i < 2, "measure": "DCG@10",
             "by_humans": float(RNG.uniform()), "bias": b, "bias_low": b - 0.1, "bias_high": b + 0.1, "topics": 50}
            for lab in ("minilm", "smollm2") for i in range(6) for b in [float(RNG.normal(0, 0.2))]]
    return [(self_preference_figure(pd.DataFrame(rows), "DCG@10", "self-preference"), ["minilm", "smollm2"])]


def _audit():
    from irrepro.audit.report import audit_figure
    units = [(COLL, "minilm"), ("other", "flant5-large")]
    means = pd.DataFrame([{"collection": c, "labeler": lab, "measure": "DCG@10", "population": pop, "system": f"s{i}",
                           "humans": h, "labels": h + float(RNG.normal(0, 0.1)) + (0.3 if pop != "as-is" else 0)}
                          for c, lab in units for pop in ("as-is", "judge-reranked") for i in range(8)
                          for h in [float(RNG.uniform())]])
    ranks = pd.DataFrame([{"collection": c, "labeler": lab, "measure": "DCG@10", "population": pop, "top": "all",
                           "tau_b": float(RNG.uniform(0.3, 0.9))} for c, lab in units
                          for pop in ("as-is", "judge-reranked")])
    return [(audit_figure(means, ranks, "DCG@10"), [COLL, "minilm", "flant5-large"])]


def _population():
    from irrepro.retrieval.plots import population_figure
    return [(population_figure(_scores(), ["AP", "nDCG@10"], COLL), [COLL])]


def _sampling():
    from irrepro.papers.sampling.plots import fig_accuracy
    rows = [{"sampler": s, "budget": b, "pair_accuracy": RNG.uniform(), "baseline_accuracy": RNG.uniform(),
             "kendall_tau": RNG.uniform()} for s in ("naive", "qstar") for b in (10, 20, 50, 100)]
    return [(fig_accuracy(pd.DataFrame(rows), COLL, 7), [COLL, "7 trials"])]


def _vb_summary():
    rows = [{"gain": "binary", "prior": "uniform", "k": k, "alpha": a, "system": s, "ES": RNG.uniform(),
             "VB": RNG.uniform(-0.2, 0.5)} for k in (5, 10) for a in (0.0, 0.5) for s in ("bm25", "dph")]
    return pd.DataFrame(rows)


def _vb_forest_frame():
    rows = []
    for over, prior in (("queries", "uniform"), ("queries", "mass"), ("intents", "pooled")):
        for s in ("bm25", "dph", "pl2"):
            v, e = RNG.uniform(-0.2, 0.5), RNG.uniform(0, 1)
            rows.append({"gain": "binary", "alpha": 0.5, "k": 10, "system": s, "ci_over": over, "prior": prior,
                         "VB": v, "VB_lo": v - 0.1, "VB_hi": v + 0.1, "ES": e, "ES_lo": e - 0.1, "ES_hi": e + 0.1})
    return pd.DataFrame(rows)


def _vb_across_k():
    from irrepro.papers.vb.plots import fig_across_k
    return [(fig_across_k(_vb_summary(), [5, 10], [0.0, 0.5], collection=COLL), [COLL])]


def _vb_forest():
    from irrepro.papers.vb.plots import fig_forest
    return [(fig_forest(_vb_forest_frame(), m, 0.5, collection=COLL), [COLL]) for m in ("VB", "ES")]


def _verify():
    from irrepro.core.figures import verify_figure
    claims_only = _verify_table().query("kind == 'claim'")
    from irrepro.core.verify import build_verify_table
    tall = build_verify_table([{"item": f"r{i}", "paper": 1.0, "tolerance": 0.1, "basis": "b"} for i in range(120)],
                              {f"r{i}": 1.0 + i / 1000 for i in range(120)})
    return [(verify_figure(_verify_table(), "ci: 4 checks"), ["ci"]), (verify_figure(tall, "bv: 120 checks"), ["bv"]),
            (verify_figure(claims_only, "ci: 0 checks"), ["ci"])]


def _verify_panels():
    from irrepro.core.figures import verify_panels
    return [(verify_panels(_verify_table(), "ci: 4 checks"), ["ci"])]


def _cost():
    from irrepro.core.cost import plot_cost
    t = pd.DataFrame({"rule": ["a", "b", "c", "total"], "wall_s": [3.0, 2.0, 1.0, 6.0]})
    return [(plot_cost(t, top=2), ["Cost per rule"])]


def _effects(baselines=None):
    from irrepro.stats.plots import effect_heatmap
    systems = ["s1", "s2", "s3"]
    means = dict(zip(systems, [0.5, 0.4, 0.3]))
    if baselines is None:
        pairs = [(a, b, "") for i, a in enumerate(systems) for b in systems[i + 1:]]
    else:
        pairs = [(a, b, b) for b in baselines for a in systems if a != b]
    rows = [{"test": t, "correction": c, "system_a": a, "system_b": b, "baseline": base,
             "delta": means[a] - means[b], "p_adjusted": p, "significant": p < 0.05}
            for t, corrs in (("t-test", ("holm", "bh")), ("tukey", ("hsd",))) for c in corrs
            for (a, b, base), p in zip(pairs, RNG.uniform(0, 0.1, len(pairs)))]
    return [(effect_heatmap(pd.DataFrame(rows), systems, COLL, "AP", alpha=0.05), [COLL, "AP"])]


def _effect_heatmaps():
    from irrepro.stats.plots import effect_heatmap
    empty = pd.DataFrame(columns=["test", "correction", "system_a", "system_b", "baseline", "delta", "p_adjusted",
                                  "significant"])
    return (_effects() + _effects(["s1"]) + _effects(["s3", "s1"])
            + [(effect_heatmap(empty, ["s1"], COLL, "AP", alpha=0.05), [COLL])])


def _dstudy():
    from irrepro.stats.plots import dstudy_figure
    rel = pd.DataFrame([{"measure": m, "e_rho2": 0.8, "phi": 0.7, "n_topics": 50, "topics_e_rho2": 70,
                         "topics_phi": 90} for m in ("AP", "nDCG@10")])
    n = np.arange(1, 121)
    curves = {m: pd.DataFrame({"n_topics": n, "e_rho2": n / (n + 10), "phi": n / (n + 20)}) for m in rel.measure}
    return [(dstudy_figure(rel, curves, COLL, 0.95), [COLL])]


def _repro_differences():
    from irrepro.repro.plots import plot_differences
    from irrepro.repro.table import Comparison, repro_table
    topics = [str(t) for t in range(1, 16)]

    def run(seed):
        rng = np.random.default_rng(seed)
        return pd.DataFrame([(t, f"d{d}", float(s)) for t in topics
                             for d, s in zip(rng.permutation(30)[:20], np.sort(rng.random(20))[::-1])],
                            columns=["query_id", "doc_id", "score"])
    base = RNG.uniform(0.2, 0.5, len(topics))
    vals = {"o-b": base, "o-a": base + 0.05, "r-b": base + RNG.normal(0, 0.02, len(topics)), "r-a": base + 0.04}
    scores = pd.DataFrame([(s, t, m, v) for s, arr in vals.items() for t, v in zip(topics, arr)
                           for m in ("AP", "nDCG@10")], columns=["system", "topic", "measure", "value"])
    t = repro_table([Comparison("o vs r", ("o-b", "o-a"), ("r-b", "r-a"))],
                    {k: run(i) for i, k in enumerate(vals)}, scores, ["AP", "nDCG@10"], depth=20)
    return [(plot_differences(t, scores, ["AP", "nDCG@10"], title=COLL), [COLL, "AP", "nDCG@10"])]


BUILDERS = {
    "irrepro.audit.report.audit_figure": _audit,
    "irrepro.core.cost.plot_cost": _cost,
    "irrepro.core.figures.verify_figure": _verify,
    "irrepro.core.figures.verify_panels": _verify_panels,
    "irrepro.labels.plots.agreement_figure": _labels_agreement,
    "irrepro.selfpref.report.self_preference_figure": _self_preference,
    "irrepro.papers.bv.plots.fig1": _bv_fig1,
    "irrepro.papers.bv.plots.session_figs": _bv_session,
    "irrepro.papers.bv.plots.sigir13_figs": _bv_sigir13,
    "irrepro.papers.ci.plots.fig2": _ci_fig2,
    "irrepro.papers.ci.plots.fig3": _ci_fig3,
    "irrepro.papers.ci.plots.fig4": _ci_fig4,
    "irrepro.papers.ci.plots.systems_figure": _ci_systems,
    "irrepro.papers.ci.plots.systems_plan_figure": _ci_systems_plan,
    "irrepro.papers.sampling.plots.fig_accuracy": _sampling,
    "irrepro.papers.vb.plots.fig_across_k": _vb_across_k,
    "irrepro.papers.vb.plots.fig_forest": _vb_forest,
    "irrepro.repro.plots.plot_differences": _repro_differences,
    "irrepro.retrieval.plots.population_figure": _population,
    "irrepro.stats.plots.dstudy_figure": _dstudy,
    "irrepro.stats.plots.effect_heatmap": _effect_heatmaps,
}


# ---- the checks ----

def _series(ax) -> int:
    """Data series of an axes: lines in data coordinates with at least two points, scatters, bar groups."""
    n = 0
    for line in ax.get_lines():
        if line.get_transform() == ax.transData and len(np.atleast_1d(line.get_xdata())) >= 2:
            n += 1
    n += sum(isinstance(c, PathCollection) for c in ax.collections)
    n += sum(isinstance(c, BarContainer) for c in ax.containers)
    return n


def _labelled(ax, axes, which) -> bool:
    """``ax`` has a label on ``which`` ('x'/'y'), shares that axis with an axes that has one, or shows no tick
    labels of its own and lines up (same column for x, same row for y) with an axes that has one."""
    get = (lambda a: a.get_xlabel()) if which == "x" else (lambda a: a.get_ylabel())
    if get(ax).strip():
        return True
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    if any(get(a).strip() for a in shared.get_siblings(ax)):
        return True
    axis = ax.xaxis if which == "x" else ax.yaxis
    if any(t.get_text().strip() for t in axis.get_ticklabels()):
        return False
    pos = ax.get_position()
    key = (lambda p: round(p.x0, 3)) if which == "x" else (lambda p: round(p.y0, 3))
    return any(get(a).strip() and key(a.get_position()) == key(pos) for a in axes if a is not ax)


def problems(fig, names) -> list[str]:
    """What keeps ``fig`` from being read alone; empty when nothing does."""
    fig.canvas.draw()
    out = []
    axes = [a for a in fig.axes if a.axison and (a.get_lines() or a.collections or a.containers or a.images)]
    if not axes and not any(t.get_text() for a in fig.axes for t in a.texts):
        out.append("no axes with data and no text")
    sup = fig._suptitle.get_text() if fig._suptitle is not None else ""
    for i, ax in enumerate(axes):
        for which in ("x", "y"):
            if not _labelled(ax, axes, which):
                out.append(f"axes {i} ({ax.get_title()!r}): no {which} label")
        if not (ax.get_title().strip() or sup.strip()):
            out.append(f"axes {i}: no title and no suptitle")
    if any(_series(ax) >= 2 for ax in axes) and not (fig.legends or any(a.get_legend() for a in fig.axes)):
        out.append("several series and no legend")
    text = " ".join([sup] + [a.get_title() for a in fig.axes])
    for w in names:
        if w not in text:
            out.append(f"titles do not name {w!r}: {text!r}")
    if sup:
        top = fig._suptitle.get_window_extent(fig.canvas.get_renderer())
        for a in fig.axes:
            if a.get_title() and top.overlaps(a.title.get_window_extent(fig.canvas.get_renderer())):
                out.append(f"suptitle covers the title {a.get_title()!r}")
    legends = list(fig.legends) + [a.get_legend() for a in fig.axes if a.get_legend()]
    renderer = fig.canvas.get_renderer()
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for a in fig.axes:
            for lab in (a.xaxis.label, a.yaxis.label, a.title):
                if lab.get_text() and box.overlaps(lab.get_window_extent(renderer)):
                    out.append(f"legend covers {lab.get_text()!r}")
    return out


def test_every_figure_function_is_rendered():
    found = figure_functions()
    assert len(found) >= 15, found  # the discovery itself must find the known ones
    assert set(found) == set(BUILDERS), (f"figure functions without a builder here: {set(found) - set(BUILDERS)}; "
                                         f"builders of no function: {set(BUILDERS) - set(found)}")


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_figure_is_readable_alone(name):
    for fig, names in BUILDERS[name]():
        try:
            assert problems(fig, names) == []
        finally:
            plt.close(fig)


def test_checks_can_fail():
    """A bare two-line figure without labels, title or legend, and a legend over the x label, are caught."""
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.plot([0, 1], [1, 0])
    p = problems(fig, ["somewhere"])
    plt.close(fig)
    assert any("no x label" in x for x in p) and any("no y label" in x for x in p)
    assert any("no title" in x for x in p) and any("no legend" in x for x in p) and any("somewhere" in x for x in p)
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="a")
    ax.set_xlabel("the x label")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.05))
    p = problems(fig, [])
    plt.close(fig)
    assert any("legend covers 'the x label'" in x for x in p)


def test_verify_figure_shows_out_of_range_and_infinite_points_inside_the_axis():
    from irrepro.core.figures import verify_figure
    fig = verify_figure(_verify_table(), "t")
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    xs = [x for line in ax.get_lines() for x in np.atleast_1d(line.get_xdata()) if line.get_transform() == ax.transData]
    assert xs and all(lo <= x <= hi for x in xs)
    finite = [x for x in xs if abs(x) < hi]
    assert max(finite) == pytest.approx(1e6 - 1)  # the huge difference is drawn where it is, not clipped
    assert np.log10(hi) - np.log10(max(finite)) >= np.log10(1.5) - 1e-9  # with room to the edge
    assert hi in xs  # the infinite one at the edge ...
    assert any("inf" in t.get_text() for t in ax.texts)  # ... with its value beside it
    plt.close(fig)


def test_verify_figure_of_claims_only_is_not_empty():
    """A paper whose verify table holds claims and no numeric check (the CI paper) still gets a figure of them."""
    from irrepro.core.figures import verify_figure
    fig = verify_figure(_verify_table().query("kind == 'claim'"), "t")
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c", "d"]
    marks = {line.get_marker(): line.get_xdata()[0] for line in ax.get_lines()}
    assert marks == {"o": 1, "x": 0}  # c holds, d fails
    plt.close(fig)


def test_sampling_points_are_labelled_by_budget():
    fig, _ = _sampling()[0]
    for ax in fig.axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == ["10", "20", "50", "100"]
        assert ax.get_ylabel() and ax.get_legend()
    plt.close(fig)


def test_ci_fig2_legend_explains_bands_and_dashed_line():
    fig, _ = _ci_fig2()[0]
    texts = [t.get_text() for a in fig.axes if a.get_legend() for t in a.get_legend().get_texts()]
    assert any("percentiles of the width" in t for t in texts)
    assert any("Wilson" in t for t in texts) and any("dashed" in t and "0.95" in t for t in texts)
    plt.close(fig)
