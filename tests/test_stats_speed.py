"""The cheaper computations of the stats_compare job give the same bytes as the plain ones they replace: Holm's
correction without statsmodels, the resampling tests' in-place arithmetic, the heat maps' fixed title position."""
import numpy as np
import pandas as pd
import pytest

from irrepro.stats import paired


def _families(rng):
    """p-value families like the tests': continuous, on a resampling grid (many ties), with ones and tiny values."""
    for m in (1, 2, 3, 17, 378, 2000):
        yield rng.random(m)
        yield rng.integers(1, 1002, m) / 1001
        yield np.where(rng.random(m) < 0.3, 1.0, rng.random(m) * 1e-3)
        yield np.round(rng.random(m) ** 3, 3)


def test_holm_is_multipletests_to_the_bit(multipletests):
    for p in _families(np.random.default_rng(0)):
        ours = paired.adjust(p, "holm")
        assert ours.tobytes() == multipletests(p, method="holm")[1].tobytes()
    assert paired.adjust(np.array([]), "holm").size == 0


def _differences(T=30, P=40, seed=4):
    rng = np.random.default_rng(seed)
    D = rng.normal(0.01, 0.05, (T, P))
    D[:, 0] = 0.0  # identical systems
    D[:, 1] = 0.02  # a constant difference
    return D


def test_randomisation_and_bootstrap_equal_the_plain_expressions_to_the_bit():
    D = _differences()
    T, P = D.shape
    tol = paired._rel_tol
    # randomisation: |signs @ D| / T against |mean d|, the same generator calls
    rng = np.random.default_rng(7)
    signs = rng.integers(0, 2, size=(199, T)).astype(float) * 2 - 1
    obs = np.abs(D.mean(axis=0))
    want = ((np.abs(signs @ D) / T >= obs - tol(obs)).sum(axis=0) + 1) / 200
    assert paired.randomisation(D, 199, np.random.default_rng(7)).tobytes() == want.tobytes()
    # bootstrap: the studentised test with the null imposed and the symmetric bootstrap-t interval, written plainly
    rng = np.random.default_rng(8)
    W = rng.multinomial(T, np.full(T, 1.0 / T), size=199).astype(float)
    m = D.mean(axis=0)
    const = (D == D[:1]).all(axis=0)
    se = np.where(const, 0.0, D.std(axis=0, ddof=1) / np.sqrt(T))
    Z = np.where(const, 0.0, D - m)
    mz = (W @ Z) / T
    var = np.maximum((W @ (Z * Z)) / T - mz * mz, 0.0) / (T - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.nan_to_num(np.abs(mz) / np.sqrt(var), nan=0.0, posinf=np.inf)
        t_obs = np.abs(np.where(se > 0, m / np.where(se > 0, se, 1.0), np.where(m == 0, 0.0, np.inf)))
    finite = np.isfinite(t_obs)
    p = ((t_star >= np.where(finite, t_obs - tol(np.where(finite, t_obs, 0.0)), t_obs)).sum(axis=0) + 1) / 200
    p[~(D != 0).any(axis=0)] = 1.0
    half = np.where(se > 0, np.quantile(t_star, 0.95, axis=0) * se, 0.0)
    got = paired.bootstrap(D, 199, np.random.default_rng(8), 0.05)
    assert [a.tobytes() for a in got] == [a.tobytes() for a in (p, m - half, m + half)]
    assert got[0][0] == 1.0 and got[1][1] == got[2][1] == m[1]  # identical systems; a constant difference: [m, m]
    assert got[0][1] == 1 / 200  # a constant non-zero difference: as extreme as a test of 199 resamples can say


def _table(baseline):
    from irrepro.stats.compare import compare

    rng = np.random.default_rng(5)
    base = rng.uniform(0.2, 0.6, 25)
    mat = pd.DataFrame({f"sys{k}": base + rng.normal(0.02 * k, 0.05, 25) for k in range(6)},
                       index=[str(t) for t in range(25)])
    t = compare(mat, tests=["t", "sign", "tukey"], corrections=["holm", "bh"], alpha=0.05, n_permutations=99,
                n_bootstrap=99, seed=1, baseline=baseline)
    return t, sorted(mat.columns, key=lambda s: -mat[s].mean())


@pytest.mark.parametrize("baseline", [None, ["sys0", "sys3"], "empty"])
def test_heatmap_titles_sit_where_matplotlib_places_them(baseline, tmp_path, monkeypatch):
    """The fixed title position (y = 1) gives the bytes of matplotlib's automatic placement, PDF and PNG."""
    from irrepro.core.figures import save
    from irrepro.stats import plots

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    if baseline == "empty":
        table, systems = pd.DataFrame(columns=["test", "correction", "system_a", "system_b", "baseline", "delta",
                                               "significant"]), ["sys0"]
    else:
        table, systems = _table(baseline)
    save(plots.effect_heatmap(table, systems, "c", "AP", alpha=0.05), tmp_path / "fixed.pdf", tmp_path / "fixed.png")
    monkeypatch.setattr(plots, "_title", lambda ax, text, fontsize: ax.set_title(text, fontsize=fontsize))
    save(plots.effect_heatmap(table, systems, "c", "AP", alpha=0.05), tmp_path / "auto.pdf", tmp_path / "auto.png")
    for ext in ("pdf", "png"):
        assert (tmp_path / f"fixed.{ext}").read_bytes() == (tmp_path / f"auto.{ext}").read_bytes(), ext
