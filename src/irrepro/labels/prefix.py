"""Shared prompt prefixes of a causal labeler, computed once.

A scoring-mode prompt is ``[chat header + instructions] [query] [document + answer header]``. The first part is the
same for every pair of a prompt, the first two for every document of a query. Causal attention makes the keys and
values of a prefix independent of what follows, so their KV cache is computed once — the instruction prefix once
per prompt, the query's tokens once per query, *extending* the instruction prefix's cache — and only each pair's
remaining tokens are run (:class:`PrefixStore`).

Token boundaries are found on the tokenizer's own output, never on text: the instruction prefix is the common
token prefix of the prompts of two sentinel queries (:data:`SENTINELS`), the query prefix that of two sentinel
documents; a pair uses a prefix only if its own token ids start with it (:meth:`PrefixStore.split`), so a tokenizer
that merges across the boundary costs speed, never correctness.
"""
from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, fields
from typing import Callable, Sequence

#: two texts that share no first character class (a letter, a digit): the common token prefix of two prompts that
#: differ only in one field filled with these ends before that field's first token
SENTINELS = ("a", "0")


@dataclass
class TokenStats:
    """Tokens a labeler ran through the model: ``prefix_tokens`` (shared prefixes, once each), ``row_tokens``
    (per-pair rows including padding, and grade continuations), ``real_tokens`` (rows without padding),
    ``prompt_tokens`` (the full prompts of the ``pairs`` scored, what a labeler without sharing would run)."""
    pairs: int = 0
    prompt_tokens: int = 0
    prefix_tokens: int = 0
    row_tokens: int = 0
    real_tokens: int = 0

    @property
    def computed_tokens(self) -> int:
        """Every token position the model ran: shared prefixes + rows (padding included)."""
        return self.prefix_tokens + self.row_tokens

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, 0)


def group_by_prefix(prefixes: Sequence[tuple], lengths: Sequence[int]) -> list[tuple[tuple, list[int]]]:
    """``[(prefix, indices)]``: the rows of each distinct prefix (in order of first appearance), each group's
    indices sorted by ``lengths`` (stable), so that batches of a group need little padding."""
    groups: dict[tuple, list[int]] = {}
    for i, p in enumerate(prefixes):
        groups.setdefault(p, []).append(i)
    return [(p, sorted(idx, key=lambda i: lengths[i])) for p, idx in groups.items()]


class PrefixStore:
    """KV caches of token prefixes, computed by ``extend(cache_or_None, tokens) -> cache`` (one row).

    :meth:`split` picks a pair's prefix and records the shorter prefix it extends (its parent: the instruction
    prefix of a query prefix). A prefix is computed once, from its parent's cache; for plain caches (keys and
    values per layer) only its own positions are kept (a query's ~20 tokens, not the instructions again), so the
    store holds every query of a collection within ``max_bytes`` (least recently used children dropped beyond).
    :meth:`rows` returns the batched cache of one prefix per row — rows of different queries stacked, each
    left-padded — and the attention mask of its positions. Models whose cache holds other state (e.g. the
    convolution state of hybrid models) keep whole caches, and a batch then holds one prefix only
    (:meth:`stackable`). :attr:`computed` counts computations per prefix (tests check that none is repeated).
    """

    def __init__(self, extend: Callable, max_bytes: int = 2 << 30):
        self._extend = extend
        self.max_bytes = int(max_bytes)
        self._own: OrderedDict[tuple, object] = OrderedDict()  # prefix -> own (k, v) per layer, or a whole cache
        self._parent: dict[tuple, tuple] = {}
        self._pinned: set[tuple] = set()
        self._bytes = 0
        self._stackable: bool | None = None
        self.computed: dict[tuple, int] = {}

    def split(self, tokens: Sequence[int], *candidates: tuple) -> tuple:
        """The longest of ``candidates`` that is a proper prefix of ``tokens`` (``()`` if none); a shorter
        candidate that is a prefix of the chosen one becomes its parent (computed first, kept)."""
        tokens = tuple(tokens)
        ok = sorted((c for c in candidates if c and len(c) < len(tokens) and tokens[:len(c)] == c), key=len,
                    reverse=True)
        if not ok:
            return ()
        if len(ok) > 1 and ok[0] not in self._parent and ok[0] not in self._own:  # (stored: whole, no parent)
            self._parent[ok[0]] = ok[1]
            self._pinned.add(ok[1])
        return ok[0]

    def stackable(self, prefixes: Sequence[tuple]) -> bool:
        """Whether caches are plain per-layer keys/values, so that rows of different prefixes share a batch;
        decided on the first prefix computed."""
        if self._stackable is None:
            first = next((p for p in prefixes if p), None)
            if first is None:
                return False
            self._ensure(first)
        return bool(self._stackable)

    def _chain(self, prefix: tuple) -> list[tuple]:
        chain = [prefix]
        while chain[-1] in self._parent and self._stackable:
            chain.append(self._parent[chain[-1]])
        return chain[::-1]

    def _ensure(self, prefix: tuple) -> None:
        if prefix in self._own:
            self._own.move_to_end(prefix)
            return
        import torch
        parent = self._parent.get(prefix, ())
        if parent:
            self._ensure(parent)
        base = self.get(parent) if parent else None
        self.computed[prefix] = self.computed.get(prefix, 0) + 1
        cache = self._extend(base, prefix[len(parent):])
        if self._stackable is None:
            self._stackable = _plain_layers(cache)
        if self._stackable:
            p = len(parent)
            # one tensor (layers, 2, 1, heads, positions, head_dim): a batch is stacked with a few copies
            own = torch.stack([torch.stack([layer.keys[..., p:, :], layer.values[..., p:, :]])
                               for layer in cache.layers])
            self._bytes += own.nbytes
        else:
            own = cache
        self._own[prefix] = own
        self._evict()

    def _evict(self) -> None:
        if self._stackable:
            over = lambda: self._bytes > self.max_bytes  # noqa: E731
        else:
            over = lambda: len(self._own) > 8  # noqa: E731  (whole caches: a few queries)
        for key in list(self._own):
            if not over():
                break
            if key in self._pinned or key == next(reversed(self._own)):
                continue
            own = self._own.pop(key)
            if self._stackable:
                self._bytes -= own.nbytes

    def get(self, prefix: tuple):
        """A fresh one-row cache of ``prefix`` (the caller may grow it)."""
        self._ensure(prefix)
        if not self._stackable:
            return copy.deepcopy(self._own[prefix])
        return self.rows([prefix])[0]

    def rows(self, prefixes: Sequence[tuple]):
        """``(cache, mask)``: a batched cache with row b holding ``prefixes[b]`` (left-padded with zeros to the
        longest; ``()`` for none) and its attention mask (0 on padding)."""
        import torch
        for p in prefixes:
            if p:
                self._ensure(p)
        if not self._stackable:
            if len(set(prefixes)) != 1 or not prefixes[0]:
                raise ValueError("this model's caches hold more than keys and values: one prefix per batch")
            cache = copy.deepcopy(self._own[prefixes[0]])
            cache.batch_repeat_interleave(len(prefixes))
            return cache, torch.ones((len(prefixes), len(prefixes[0])), dtype=torch.long)
        per_row = [[self._own[c] for c in self._chain(p)] if p else [] for p in prefixes]
        return stack_caches(per_row)


def _plain_layers(cache) -> bool:
    from transformers.cache_utils import DynamicCache, DynamicLayer
    return isinstance(cache, DynamicCache) and all(type(layer) is DynamicLayer for layer in cache.layers)


def stack_caches(rows: Sequence[Sequence]):
    """``(cache, mask)``: one batched DynamicCache from per-row chains of pieces (row b: a list of tensors
    ``(layers, 2, 1, heads, positions, head_dim)`` — keys and values — to concatenate along positions; empty for
    no prefix), each row left-padded with zeros to the longest, and the attention mask of the cached positions (0 on
    padding). Keys carry their rotary positions already, so padding between a row's prefix and the rest needs only
    mask 0 and explicit position ids for the rest. A few large copies, not one per layer and row: small tensor ops
    are slow when the cores are shared."""
    import torch
    from transformers import DynamicCache
    ref = next(r for r in rows if r)[0]
    lens = [sum(piece.shape[-2] for piece in r) for r in rows]
    L = max(lens)
    nl, two, _, h, _, hd = ref.shape
    buf = torch.zeros((nl, two, len(rows), h, L, hd), dtype=ref.dtype, device=ref.device)
    mask = torch.zeros((len(rows), L), dtype=torch.long)
    for b, (r, n) in enumerate(zip(rows, lens)):
        off = L - n
        for piece in r:
            k = piece.shape[-2]
            buf[:, :, b:b + 1, :, off:off + k] = piece
            off += k
        mask[b, L - n:] = 1
    return DynamicCache(ddp_cache_data=[(buf[li, 0], buf[li, 1]) for li in range(nl)]), mask
