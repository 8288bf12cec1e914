"""Comparing systems on one collection: paired tests with multiple-comparison corrections and effect sizes
(:mod:`~irrepro.stats.paired`), the randomised Tukey HSD (:mod:`~irrepro.stats.tukey`), the reliability of the
collection from generalizability theory (:mod:`~irrepro.stats.gstudy`), discriminative power and swap rates
(:mod:`~irrepro.stats.power`), the per-pair table (:mod:`~irrepro.stats.compare`) and figures
(:mod:`~irrepro.stats.plots`). Every function takes a topic-by-system matrix (rows topics, columns systems) or frames
derived from it; randomness only through a passed ``numpy.random.Generator`` or seed."""
