"""Self-preference of a labeler: does it overrate the systems built on its own model?

A labeler that shares its model with some of the evaluated systems (an LLM judge scoring rankers or generators
that use the same LLM) may prefer their output: their scores by its labels exceed their scores by human labels
by more than other systems' do. Balog, Metzler & Qin (SIGIR 2025, "Rankers, Judges, and Assistants") describe
this circularity of LLM judges and LLM-based systems; Clarke & Dietz (2024, "LLM-based relevance assessment still
can't replace human relevance assessment") warn that a system can be tuned towards the judge's own preferences.
This package measures it on a population of systems evaluated twice on the same topics, once with human qrels and
once with the labeler's labels, both as the canonical per-topic score table (``collection, system, topic,
measure, value``; :mod:`irrepro.core.scores`):

* :func:`~irrepro.selfpref.bias.self_preference_table` — per system: the mean score by labels and by humans, their
  difference (the system's *bias*) with a 95% interval over topics, and the system's rank under both;
* :func:`~irrepro.selfpref.bias.self_preference_gap` — the mean bias of the same-model systems minus that of the
  others, with its interval from the same topic resamples (a labeler that is lenient to every system has a large bias
  but no gap);
* :func:`~irrepro.selfpref.ranking.ranking_agreement` — Kendall's τ_b and τ_AP
  (:func:`irrepro.stats.rankcorr.tau_ap`) between the system ranking by labels and by humans, with all systems and
  without the same-model systems;
* :func:`~irrepro.selfpref.coverage.coverage_by_group` — the coverage of per-system confidence intervals (e.g. the CI
  paper's PPI / CRC intervals of ``ci.systems``, :mod:`irrepro.papers.ci.systems`) for same-model systems against the
  others;
* :func:`~irrepro.selfpref.coverage.coverage_draws` — those intervals from ``draws`` draws of ``n`` human-labelled
  queries (labels refitted on each draw's queries by a callable), pooled, and their coverage per group (its interval
  clustered by draw: a draw's systems share its queries);
* :func:`~irrepro.selfpref.scores.label_score_tables` — the two score tables from runs, qrels and a labels table,
  computed by the CI paper's evaluator (:mod:`irrepro.papers.ci.systems`): a document's predicted gain is
  ``2^{E_P[r]} − 1`` (the default ``label_gain``, the authors' code) or ``E_P[2^r − 1]`` (Eq. 5), from its label
  distribution ``p_0 .. p_{G-1}``, and a topic's value is DCG@k / nDCG@k of those gains (Eq. 6).

**The interval of a bias.** Topics are the sample: a system's bias ``b = mean_t (L_t − H_t)`` is a mean of
per-topic differences, and ``bias_low, bias_high`` is the paired symmetric bootstrap-t interval of that mean
(Hall 1988; as :func:`irrepro.stats.paired.bootstrap` computes it): ``n_boot`` resamples of
the topics with replacement, drawn once from ``numpy.random.default_rng(seed)`` and shared by every system, every
measure and the gap, so intervals of different systems are computed on the same resampled collections. Pairing
(resampling a topic's label score and human score together) removes the topic difficulty that both share, which
is most of the variance of either. The interval is mean ± c · sd / √T, c the 95% quantile of the resampled
|t*| (the studentised, centred means), so its quantile comes from the differences' own distribution and its
spread from the sample sd; ``t_low, t_high`` add the paired t interval (``mean ± t_{T−1} · sd / √T``,
:func:`irrepro.stats.paired.t_interval`), which agrees with it when the differences are near normal. In the tests'
simulation (300 populations of 4 systems) it covers 95.7% of the true biases and 96.7% of the true gaps at 10
topics, 95.1% and 94.0% at 25 (a percentile interval of the bootstrap means, with the plug-in spread, covered
89% of both at 10 topics). Both treat
the systems and the labels as fixed: the interval covers the sampling of topics, not the labeler's randomness (a
relabelling with another seed or prompt) — the population studied is "topics like these". ``p_value``: the
studentised bootstrap test of bias 0 (null imposed) on the same resamples.

The stage: ``labels.self_preference`` in the config, resolved by :func:`irrepro.selfpref.plan.resolve` (which systems
share a labeler's model: :meth:`irrepro.plan.Plan.same_model`), wired by ``workflow/rules/selfpref.smk``; the
per-(collection, labeler) analysis and its summary in :mod:`irrepro.selfpref.report`, the figure in
:mod:`irrepro.selfpref.plots`.
"""
# the names below are imported on first use (PEP 562): the config's plan imports irrepro.selfpref.plan in every
# Snakemake process, which must not pay for scipy.stats (0.9 s) that only the analyses need
_WHERE = {"TABLE_COLUMNS": "bias", "GAP_COLUMNS": "bias", "self_preference_table": "bias",
          "self_preference_gap": "bias", "COVERAGE_COLUMNS": "coverage", "GROUPS": "coverage",
          "coverage_by_group": "coverage", "coverage_draws": "coverage", "AGREEMENT_COLUMNS": "ranking",
          "SUBSETS": "ranking", "ranking_agreement": "ranking", "label_score_tables": "scores"}

__all__ = ["TABLE_COLUMNS", "GAP_COLUMNS", "AGREEMENT_COLUMNS", "COVERAGE_COLUMNS", "GROUPS", "SUBSETS",
           "self_preference_table", "self_preference_gap", "ranking_agreement", "coverage_by_group",
           "label_score_tables", "coverage_draws"]


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
