"""The CI paper's plan: the ``ci`` config section checked against the label stage's and resolved into what the rules
of ``workflow/rules/ci.smk`` wire (:func:`resolve`, called by :func:`irrepro.plan.resolve` after the label stage's
plan, which it reads from ``spine.papers["labels"]``).
"""
from __future__ import annotations

from dataclasses import dataclass

from irrepro.errors import InputError

FIGURES = ("fig2", "fig3", "fig4")


@dataclass(frozen=True)
class CIPlan:
    """What the CI rules need.

    ``collections``: the analysed collections (config order); ``combos``: every (collection, labeler) pair, the
    labelers of a collection being those of its ``labels.collections`` entry that label every pair (not those of
    its ``sample``); ``values``: the values files of
    Table 1 and Figs 2-4 (the verify table's inputs); ``verify_context``: what the verify table needs besides them
    (the combos the reference rows expand over).
    """
    collections: list
    combos: list
    values: list
    verify_context: dict


def resolve(config: dict, spine) -> CIPlan:
    """Check the ``ci`` section (the label stage is included and labels every analysed collection) and resolve it;
    errors are :class:`~irrepro.errors.InputError` naming the dotted config key."""
    if spine.papers.get("labels") is None:
        raise InputError("config key papers: `ci` needs the `labels` stage (add labels to papers)")
    lc = config["labels"]["collections"]
    collections = list(config["ci"]["collections"])
    for c in collections:
        if c not in lc:
            raise InputError(f"config key ci.collections: {c!r} has no entry under labels.collections (which ranking "
                             f"and which labelers)")
    combos = [(c, lab) for c in collections for lab in lc[c]["labelers"] if lab not in (lc[c].get("sample") or {})]
    values = [f"{spine.V}/ci/values/table1_{c}.json" for c in collections]
    for fig in FIGURES:
        values += [f"{spine.V}/ci/values/{fig}_{c}_{lab}.json" for c, lab in combos]
    return CIPlan(collections=collections, combos=combos, values=values,
                  verify_context={"combos": [list(t) for t in combos]})
