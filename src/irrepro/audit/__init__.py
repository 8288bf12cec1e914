"""Would a labeler's labels change a study's conclusions? The judge audit of a labeler against the human qrels on
a population of systems (``labels.audit``; docs/labels.md, "Judge audit"):

* :mod:`~irrepro.audit.rankings` — Kendall's τ_b and τ_AP between the systems ordered by label-based and by
  human-based means, over all systems and over the top k by humans, each with a bootstrap interval over topics;
* :mod:`~irrepro.audit.decisions` — for every pair of systems, the stats stage's paired tests and corrections on
  human and on label scores: which decisions agree, which are missed, which are false discoveries;
* :mod:`~irrepro.audit.rerank` — the judge as a ranker: every system's top k re-ranked by the labeler's expected
  grade (the circularity Clarke & Dietz, 2024, measured), a second population to audit the same way;
* :mod:`~irrepro.audit.report` — the Markdown summary and the figure.

Inputs are the canonical per-topic score tables (``collection, system, topic, measure, value``) by humans and by
labels, as :func:`irrepro.selfpref.scores.label_score_tables` computes them.
"""
