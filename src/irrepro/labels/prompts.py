"""Relevance-assessment prompts for LLM labelers in "scoring mode" (Oosterhuis et al., KDD 2024, Appendix A).

A :class:`Prompt` is a template with a ``{query}`` placeholder and one document placeholder (``{passage}`` or
``{document}``), plus one *suffix* per relevance grade r = 0..G-1. In scoring mode the labeler computes, for each
grade r, log P(suffix_r | prompt) and normalises with a softmax over the G grades (KDD 2024, Sec. 5: "for each
relevance label r, we compute the log-probability of the LLM outputting the relevance rating r. The
log-probabilities are then normalized via a softmax function").

Labels are cached per prompt *content*: :attr:`Prompt.hash` is the first 12 hex digits of the sha256 of the template
and the suffixes, so editing either one gives new cache keys while the prompt's id (e.g. ``trecdl``) stays readable.

Shipped prompts (:data:`PROMPTS`):

- ``trecdl``   Listing 1 of the paper (TREC-DL passages, 4 grades), suffixes ``"0" "1" "2" "3"``.
- ``robust04`` Listing 2 of the paper (Robust04 documents, 3 grades), suffixes ``"[0]" "[1]" "[2]"`` (the paper
  found the bracketed suffixes more effective for Robust04).
- ``binary``   OURS, not from the paper: the same style for binary collections (e.g. vaswani, cranfield with
  binarised judgments), 2 grades, suffixes ``"0" "1"``.

The two paper prompts are transcribed from the PDF text; the PDF wraps long lines, and we joined each wrapped
line with a single space (the listing's logical lines are kept as lines).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from irrepro.errors import InputError

DOC_PLACEHOLDERS = ("passage", "document")
_PLACEHOLDER = re.compile(r"\{(query|passage|document)\}")


@dataclass(frozen=True)
class Prompt:
    """A scoring-mode prompt: ``template`` with ``{query}`` and ``{passage}`` or ``{document}``; one suffix per grade.

    ``suffixes[r]`` is the text whose log-probability is the score of grade r (no leading space: it is what the
    model outputs as its answer, e.g. the first tokens of a chat assistant's reply or of a seq2seq decoder).
    """

    id: str
    template: str
    suffixes: tuple[str, ...]
    description: str = field(default="", compare=False)
    source: str = field(default="", compare=False)

    def __post_init__(self):
        object.__setattr__(self, "suffixes", tuple(str(s) for s in self.suffixes))
        if not self.id or not isinstance(self.id, str):
            raise InputError("a prompt needs a non-empty string id")
        found = set(_PLACEHOLDER.findall(self.template))
        if "query" not in found:
            raise InputError(f"prompt {self.id!r}: the template has no {{query}} placeholder")
        docs = found & set(DOC_PLACEHOLDERS)
        if len(docs) != 1:
            raise InputError(f"prompt {self.id!r}: the template needs exactly one of {{passage}} or {{document}}, "
                             f"found {sorted(docs) or 'none'}")
        if len(self.suffixes) < 2:
            raise InputError(f"prompt {self.id!r}: needs at least 2 grade suffixes, got {list(self.suffixes)}")
        if len(set(self.suffixes)) != len(self.suffixes) or any(not s for s in self.suffixes):
            raise InputError(f"prompt {self.id!r}: grade suffixes must be distinct and non-empty, "
                             f"got {list(self.suffixes)}")

    @property
    def n_grades(self) -> int:
        """G, the number of relevance grades (0..G-1)."""
        return len(self.suffixes)

    @property
    def doc_field(self) -> str:
        """The document placeholder's name: ``passage`` or ``document``."""
        return next(m for m in _PLACEHOLDER.findall(self.template) if m in DOC_PLACEHOLDERS)

    @property
    def hash(self) -> str:
        """sha256 of the template and the suffixes (canonical JSON), first 12 hex digits: the cache version."""
        blob = json.dumps({"template": self.template, "suffixes": list(self.suffixes)},
                          sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    @property
    def key(self) -> str:
        """``<id>@<hash>``: readable and versioned (for provenance records)."""
        return f"{self.id}@{self.hash}"

    def format(self, query: str, doc: str) -> str:
        """The prompt text for one (query, document) pair.

        Substitution is one pass over the template, so braces or placeholder-like text inside the query or the
        document are left as they are (``str.format`` would choke on them).
        """
        values = {"query": str(query), "passage": str(doc), "document": str(doc)}
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.template)

    def to_dict(self) -> dict:
        return {"id": self.id, "template": self.template, "suffixes": list(self.suffixes),
                "hash": self.hash, "description": self.description, "source": self.source}

    @classmethod
    def from_dict(cls, d: dict) -> "Prompt":
        """A prompt from a config mapping ``{id, template, suffixes[, description, source]}``."""
        missing = [k for k in ("id", "template", "suffixes") if k not in d]
        if missing:
            raise InputError(f"a prompt mapping needs the keys id, template, suffixes; missing {missing}")
        return cls(id=d["id"], template=d["template"], suffixes=tuple(d["suffixes"]),
                   description=d.get("description", ""), source=d.get("source", ""))


TRECDL = Prompt(
    id="trecdl",
    template=(
        "Assess the relevance of the passage to the query on a four-point scale:\n"
        "[0] Irrelevant: The passage has nothing to do with the query.\n"
        "[1] Related: The passage seems related to the query but does not answer it.\n"
        "[2] Highly relevant: The passage has some answer for the query, but the answer may be a bit unclear, "
        "or hidden amongst extraneous information.\n"
        "[3] Perfectly relevant: The passage is dedicated to the query and contains the exact answer.\n"
        "Query: {query}\n"
        "Passage: {passage}\n"
        "Relevance:"
    ),
    suffixes=("0", "1", "2", "3"),
    description="TREC Deep Learning passages, four-point scale (NIST definitions).",
    source="Oosterhuis et al., KDD 2024, Appendix A, Listing 1; suffixes '0'..'3'",
)

ROBUST04 = Prompt(
    id="robust04",
    template=(
        "Assess the relevance of the document to the query on a three-point scale:\n"
        "[0] Not relevant: The document is not relevant to the query.\n"
        "[1] Relevant: Parts of the document may be relevant to the query.\n"
        "[2] Highly Relevant: The document is highly relevant to the query.\n"
        "Query: {query}\n"
        "Document: {document}\n"
        "Relevance:"
    ),
    suffixes=("[0]", "[1]", "[2]"),
    description="TREC Robust04 documents, three-point scale.",
    source="Oosterhuis et al., KDD 2024, Appendix A, Listing 2; suffixes '[0]'..'[2]'",
)

BINARY = Prompt(
    id="binary",
    template=(
        "Assess the relevance of the document to the query on a two-point scale:\n"
        "[0] Not relevant: The document is not relevant to the query.\n"
        "[1] Relevant: The document is relevant to the query.\n"
        "Query: {query}\n"
        "Document: {document}\n"
        "Relevance:"
    ),
    suffixes=("0", "1"),
    description="OURS (not in the paper): binary relevance, in the style of the paper's Robust04 prompt.",
    source="irrepro (not from Oosterhuis et al. 2024)",
)

CRANFIELD = Prompt(
    id="cranfield",
    template=(
        "Assess the relevance of the document to the query on a five-point scale:\n"
        "[0] Not relevant: The document is of no interest for the query.\n"
        "[1] Minimum interest: The document is of minimum interest, for example from a historical viewpoint.\n"
        "[2] Useful: The document is useful, as general background or for suggesting methods.\n"
        "[3] High relevance: The document is highly relevant; without it the work would be impracticable.\n"
        "[4] Complete answer: The document is a complete answer to the query.\n"
        "Query: {query}\n"
        "Document: {document}\n"
        "Relevance:"
    ),
    suffixes=("0", "1", "2", "3", "4"),
    description="OURS (not in the paper): Cranfield's five relevance levels as grades 0-4, 4 = complete answer "
                "(the qrels' codes mapped by collections.<c>.grades: Cleverdon's code 1 or ir_datasets' 4 is grade "
                "4; negative grades as 0), in the style of the paper's prompts.",
    source="irrepro (not from Oosterhuis et al. 2024); level definitions from the Cranfield collection",
)

PROMPTS: dict[str, Prompt] = {p.id: p for p in (TRECDL, ROBUST04, BINARY, CRANFIELD)}


def get_prompt(prompt) -> Prompt:
    """A :class:`Prompt` from itself, a shipped id (``trecdl``, ``robust04``, ``binary``) or a config mapping."""
    if isinstance(prompt, Prompt):
        return prompt
    if isinstance(prompt, dict):
        return Prompt.from_dict(prompt)
    if isinstance(prompt, str) and prompt in PROMPTS:
        return PROMPTS[prompt]
    raise InputError(f"unknown prompt {prompt!r}: expected one of {sorted(PROMPTS)} or a mapping "
                     "{id, template, suffixes}")
