"""Judging a reproduction of IR runs: the measures of Breuer et al. (SIGIR 2020) as ``repro_eval`` computes them
(:mod:`~irrepro.repro.measures`: KTU, RBO, RMSE, effect ratio, ΔRI, paired / unpaired t-tests) and Anserini /
Pyserini regression verdicts for a reproduced score (:mod:`~irrepro.repro.verdict`: OK / OKish / FAIL).

Terms as in ``repro_eval`` and ACM badging v1.1: *reproducibility* = the same test collection as the original,
*replicability* = another one (the SIGIR 2020 paper uses them the other way round; see
:mod:`irrepro.repro.measures`). Pure functions on pandas frames and arrays; no file I/O."""
from irrepro.repro.measures import (DEPTH, MIN_EFFECT, RBO_P, SCORE_DECIMALS, DeltaRI, EffectRatio, PerTopic,
                                    RatioInterval, delta_ri, effect_ratio, effect_ratio_interval, ktu,
                                    ktu_repro_eval, rbo, rmse, ttest_paired, ttest_unpaired)
from irrepro.repro.verdict import (ANSERINI_LUCENE8_TOLERANCE, DECIMALS, FAIL, OK, OKISH, OKISH_TOLERANCE,
                                   regression_verdict)

__all__ = [
    "DEPTH", "MIN_EFFECT", "RBO_P", "SCORE_DECIMALS", "DeltaRI", "EffectRatio", "PerTopic", "delta_ri",
    "effect_ratio", "effect_ratio_interval", "RatioInterval", "ktu", "ktu_repro_eval", "rbo", "rmse", "ttest_paired", "ttest_unpaired",
    "ANSERINI_LUCENE8_TOLERANCE", "DECIMALS", "FAIL", "OK", "OKISH", "OKISH_TOLERANCE", "regression_verdict",
]
