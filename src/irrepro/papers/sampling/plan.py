"""The plan of the sampling paper (Schnabel et al., ICTIR 2016): config section ``sampling`` checked and resolved
into what the rules of workflow/rules/sampling.smk wire (called by :func:`irrepro.plan.resolve`)."""
from __future__ import annotations

from dataclasses import dataclass

from irrepro.errors import InputError


@dataclass(frozen=True)
class SamplingPlan:
    trec_collections: tuple  # retrieved collections used as the TREC substitute, in config order
    data_sets: tuple  # "synth" and the TREC collections: the data sets of Tables 5–7 and Figs 1–3


def resolve(config: dict, spine) -> SamplingPlan:
    """Check that every ``sampling.trec.collections`` entry is a retrieved collection of the spine."""
    trec = tuple(config["sampling"]["trec"]["collections"])
    for c in trec:
        if c not in spine.collections:
            raise InputError(f"config key sampling.trec.collections: {c!r} is not a retrieved collection")
    return SamplingPlan(trec_collections=trec, data_sets=("synth",) + trec)
