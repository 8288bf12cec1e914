"""Confidence intervals for IR evaluation with LLM relevance labels (Oosterhuis, Jagerman, Qin, Wang & Bendersky,
"Reliable Confidence Intervals for Information Retrieval Evaluation Using Generative A.I.", KDD 2024).

Notation (paper → code)
-----------------------
* ``G`` relevance grades ``r ∈ R = {0, …, G−1}``; a *label distribution* ``P̂(R = r | d, q)`` is an array whose last
  axis (length G) sums to one.  Human labels enter as one-hot distributions (:func:`hard_to_dist`).
* gain ``r' = 2^r − 1`` (Sec. 7, "all labels were transformed accordingly") — :func:`gains`; expected gain
  ``μ̂(d) = Σ_r P̂(r|d) r'`` (Eq. 5) — :func:`expected_gain`.
* rank weights ``ω(rank)``; DCG@k: ``ω(x) = 1/log2(x + 1)`` for ``x ≤ k`` (Eq. 1) — :func:`dcg_weights`.
* per-query metric ``U(q) = Σ_d ω(rank(d|q)) μ(d|q)`` (Eq. 1; with predicted labels Û(q), Eq. 6) —
  :func:`query_utility`.  The ranked documents of ``n`` queries are an array ``dists`` of shape
  ``(n, depth, G)``; ``weights`` broadcasts against ``(n, depth)``.  **Padding**: a query with fewer than ``depth``
  ranked documents gets weight 0 at the missing ranks (:func:`truncate_weights`); the padded distributions must
  still be valid (any distribution, e.g. uniform) — they contribute nothing.
* Methods: empirical bootstrap (:func:`bootstrap_ci`), prediction-powered inference (PPI, Eqs. 7–11,
  :func:`ppi_mean_ci`), conformal risk control (CRC, Eqs. 16–25: :func:`perturb`, :func:`crc_expected_gain`,
  :func:`crc_query_utility`, :func:`calibrate_crc` (several label sets at once: :func:`calibrate_crc_sets`),
  :func:`crc_interval`, per query :func:`crc_per_query`).
* LLM-label manipulations of Sec. 8.2/8.3: :func:`adversarial_bias` (β) and :func:`oracle_mix` (ζ).
* The experiment protocol of Figs. 2–3 (random 50:50 validation/test splits, ``n`` human-labelled validation
  queries, three methods, many repetitions): :func:`ci_experiment`.

Randomness only through an explicit ``numpy.random.Generator`` (or a seed given to ``numpy.random.default_rng``).
All functions are pure: arrays in, arrays out.  Bad input raises :class:`irrepro.errors.InputError`
(a ``ValueError``) that names the argument and what was expected.

Modules
-------
This module re-exports the public names of: :mod:`~irrepro.papers.ci.metric` (ω, gains, Eqs. 1/5/6),
:mod:`~irrepro.papers.ci.distributions` (hard labels, β, ζ), :mod:`~irrepro.papers.ci.bootstrap`,
:mod:`~irrepro.papers.ci.ppi` (Eqs. 7–11), :mod:`~irrepro.papers.ci.crc` (perturbation, Eqs. 16–19),
:mod:`~irrepro.papers.ci.calibration` (Eqs. 20–25, the vectorised calibration, per-query CRC) and
:mod:`~irrepro.papers.ci.experiment` (Figs. 2–3).  The literal per-batch calibration loop, the reference the
vectorised :func:`calibrate_crc` is tested against, is ``tests/reference_crc.py``.

Readings of the paper worth knowing
-----------------------------------
* Eq. 24 as printed puts the number of *batches* M in the finite-sample term, so with M = 10,000 the bound is
  positive for any n and the dataset-level calibration never fails; ``correction="queries"`` uses the n distinct
  calibration queries instead (Eq. 15's data points), which fails for n ≤ (1 − α)/α.  Per-query calibration
  (M = n) fails for n ≤ (1 − α)/α = 19 at α = 0.05 either way.
* PPI with the paper's Eq. 8 (labelled predictions counted in the mean prediction) and Eq. 10 (no covariance
  term) under-estimates the variance when predictions and errors covary; ``include_labelled=False`` is the
  textbook (ppi_py) interval over disjoint sets.
* The Figs. 2–3 protocol defaults to the authors' code (:func:`ci_experiment`: one split, coverage of the test
  half's true mean, basic bootstrap, gain ``2^{E_P[r]} − 1``); ``split="resplit"``, ``target="all"``,
  ``bootstrap="percentile"`` and ``label_gain="expected_gain"`` are the other readings.  Over re-drawn splits the
  test-half mean is a second sample: an interval built for the variation of n validation queries covers it less
  often as n approaches the test-half size (for a Gaussian estimator roughly ``1 − 2Φ(−z/√(1 + n/N_test))``).
"""
from __future__ import annotations
from __future__ import annotations

from irrepro.papers.ci.bootstrap import Interval, bootstrap_ci
from irrepro.papers.ci.calibration import (CRCCalibration, calibrate_crc, calibrate_crc_sets, crc_bound,
                                           crc_interval, crc_per_query, sample_batches, single_query_batches)
from irrepro.papers.ci.crc import crc_expected_gain, crc_query_utility, perturb
from irrepro.papers.ci.distributions import adversarial_bias, hard_to_dist, oracle_mix
from irrepro.papers.ci.experiment import METHODS, RESULT_COLUMNS, ci_experiment, covers
from irrepro.papers.ci.metric import dcg_weights, expected_gain, gains, query_utility, truncate_weights
from irrepro.papers.ci.ppi import PPIInterval, ppi_mean_ci

__all__ = [
    "dcg_weights", "truncate_weights", "gains", "expected_gain", "query_utility", "hard_to_dist",
    "adversarial_bias", "oracle_mix", "Interval", "bootstrap_ci", "PPIInterval", "ppi_mean_ci", "perturb",
    "crc_expected_gain", "crc_query_utility", "CRCCalibration", "crc_bound", "sample_batches",
    "single_query_batches", "calibrate_crc", "calibrate_crc_sets", "crc_interval", "crc_per_query", "covers",
    "RESULT_COLUMNS", "METHODS", "ci_experiment",
]
