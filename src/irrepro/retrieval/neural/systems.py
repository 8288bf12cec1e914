"""Neural system names: a first stage and re-ranking stages (:class:`NeuralSystem`), read back by
:func:`parse_system`."""
from __future__ import annotations

import re
from dataclasses import dataclass

from irrepro.errors import InputError
from irrepro.retrieval.neural.encoders import FIRST_STAGE, MODELS

_RERANK = re.compile(r"(?P<model>[a-z0-9][a-z0-9.-]*?)-rerank_k-(?P<k>[1-9][0-9]*)")


@dataclass(frozen=True)
class Rerank:
    """A re-ranking stage: ``model`` (of :data:`MODELS`) scores the top ``k``."""
    model: str
    k: int

    @property
    def name(self) -> str:
        return f"{self.model}-rerank_k-{self.k}"


@dataclass(frozen=True)
class NeuralSystem:
    """A first stage (a model of :data:`FIRST_STAGE` or a PISA system name) and the re-ranking stages after it."""
    first: str
    rerank: tuple = ()

    @property
    def name(self) -> str:
        return "+".join([self.first, *(r.name for r in self.rerank)])

    @property
    def neural_first(self) -> bool:
        return self.first in FIRST_STAGE

    @property
    def models(self) -> tuple:
        """The neural models the system runs, in order (its first stage when neural, then its re-rankers), each once."""
        return tuple(dict.fromkeys(([self.first] if self.neural_first else []) + [r.model for r in self.rerank]))

    def first_system(self):
        """The PISA :class:`~irrepro.retrieval.pisa.System` of the first stage (None for a neural one)."""
        if self.neural_first:
            return None
        from irrepro.retrieval.pisa import parse_system as parse_pisa
        return parse_pisa(self.first)

    def to_dict(self) -> dict:
        return {"first": self.first, "rerank": [{"model": r.model, "k": r.k} for r in self.rerank]}


def parse_system(name: str) -> NeuralSystem:
    """Inverse of :attr:`NeuralSystem.name`: trailing ``+<model>-rerank_k-<k>`` stages, the rest a first stage
    (a model of :data:`FIRST_STAGE` or a PISA name that :func:`irrepro.retrieval.pisa.parse_system` reads back to
    itself). Anything else, or a name not in canonical form, is an :class:`~irrepro.errors.InputError`."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", name or ""):
        raise InputError(f"system name {name!r}: expected characters [A-Za-z0-9._+-] only")
    parts = name.split("+")
    stages = []
    while len(parts) > 1 and (m := _RERANK.fullmatch(parts[-1])):
        if m["model"] not in MODELS:
            raise InputError(f"system {name!r}: unknown re-ranking model {m['model']!r}; models: {sorted(MODELS)}")
        stages.insert(0, Rerank(m["model"], int(m["k"])))
        parts.pop()
    first = "+".join(parts)
    sy = NeuralSystem(first, tuple(stages))
    if not sy.neural_first:
        from irrepro.retrieval.pisa import parse_system as parse_pisa
        try:
            pisa_name = parse_pisa(first).name
        except (InputError, ValueError, KeyError) as e:
            raise InputError(f"system {name!r}: first stage {first!r} is neither a neural model "
                             f"{list(FIRST_STAGE)} nor a PISA system ({e})") from None
        if pisa_name != first:
            raise InputError(f"system {name!r}: first stage {first!r} is not in canonical form ({pisa_name!r})")
    if sy.name != name:
        raise InputError(f"system {name!r} is not in canonical form ({sy.name!r})")
    return sy
