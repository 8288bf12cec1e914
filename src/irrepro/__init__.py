"""irrepro: reproducible information-retrieval evaluation experiments.

The library is pure: arrays and data frames in, arrays and data frames out, seeds passed in.
The Snakemake workflow (``Snakefile``, ``workflow/``) does the I/O and calls into it.
"""

__version__ = "0.1.0"


def compare(runs, qrels, *, baseline=None, measures=None, test="t", correction="holm", alpha=0.05,
            n_permutations=10_000, n_bootstrap=10_000, seed=0):
    """The table a paper prints from run files and qrels (PyTerrier's ``pt.Experiment`` layout): one row per system,
    each measure's mean, and against ``baseline`` the difference, the paired ``test``'s p-value, its
    ``correction``-corrected p-value, Cohen's d_z and a ▲ / ▼ mark. ``runs``: run files or folders (compressed or
    not), or ``{system: path}``. The workflow's evaluator and stats stage compute it
    (:func:`irrepro.stats.experiment.experiment`, which also returns the per-pair rows and per-topic scores);
    docs/compare.md."""
    from irrepro.stats.experiment import experiment

    return experiment(runs, qrels, baseline=baseline, measures=measures, test=test, correction=correction,
                      alpha=alpha, n_permutations=n_permutations, n_bootstrap=n_bootstrap, seed=seed)[0]
