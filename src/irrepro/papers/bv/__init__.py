"""The bias–variance papers: BV-Test (Zhang et al., IP&M 2022) and Zhang et al., SIGIR 2013.

* ``biasvariance`` — the decomposition: Eq. 7 (``bias_variance``), Eq. 11 (``maxmin_normalise``), Eq. 16
  (``rho_decomposition``), topic groupings (Sec. 5.3.2), Eqs. 12–14 per topic; bad-input helpers;
* ``tables`` — BV-Test Tables 2, 8, 9 and Fig 1's data; ``simulation`` — the Sec. 3.4 simulated collections;
  ``simulated`` — Tables 10–11; ``session`` — Table 12 and Figs 2–3 (Session track); ``risk`` — URisk, TRisk,
  ZRisk, GeoRisk, Robustness Index, <Init;
* ``sigir13`` — SIGIR 2013 Eqs. 1–7, Tables 1–2, Figs 1–2; ``querymodels`` — its query-model family;
* ``plots`` — the figures; ``plan`` — the workflow plan (``PLAN.papers["bv"]``); ``verify`` — the verify hook.

Modules are imported by name (``from irrepro.papers.bv import tables``); nothing is re-exported here, so that
resolving the plan does not import matplotlib or PISA.
"""
