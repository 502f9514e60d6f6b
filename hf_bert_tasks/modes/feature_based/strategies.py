"""Layer strategies of the feature-based approach (paper §5.3, Table 7; its F1s are in :mod:`hf_bert_tasks.paper`)
and ELMo's learned scalar mix. Strategies index ``hidden_states`` (``output_hidden_states=True``): ``L + 1`` tensors
``[batch, seq, hidden]``, **index 0 the embedding output**, index ``i`` transformer layer ``i``. Table 7's rows, as
``name`` (indices used, combination): ``embeddings`` ([0]), ``second_to_last`` ([L-1]), ``last`` ([L]),
``sum_last_four`` ([L-3 .. L], sum), ``concat_last_four`` ([L-3 .. L], concatenation: 4H wide), ``sum_all`` ([1 ..
L], sum); then ``scalar_mix`` ([0 .. L], ELMo's learned mix). Sums are plain (equal weights; why: docs/design.md,
"Plain sums").

Imports only torch: this file is also part of a saved model's remote code (:mod:`.modeling`), so Table 7's numbers come
from :mod:`hf_bert_tasks.paper` through :data:`TABLE7_DEV_F1`, filled by the package (:mod:`hf_bert_tasks.modes.feature_based.mode`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

#: strategy name -> Table 7's dev F1 (x100); filled from :mod:`hf_bert_tasks.paper` when the package imports this module
#: (empty in a saved model's remote code, which imports nothing from hf_bert_tasks)
TABLE7_DEV_F1: dict[str, float] = {}


@dataclass(frozen=True)
class Strategy:
    """One ``--feature_strategy`` (``name``) and how its ``hidden_states`` are combined (``combine``: ``"single"``,
    ``"sum"``, ``"concat"`` or ``"scalar_mix"``)."""

    name: str
    combine: str

    @property
    def paper_f1(self) -> float | None:
        """Table 7's dev F1 (x100, BERT-BASE, CoNLL-2003) from :mod:`hf_bert_tasks.paper` (:data:`TABLE7_DEV_F1`);
        ``None`` without a row."""
        return TABLE7_DEV_F1.get(self.name)

    def layers(self, num_hidden_layers: int) -> list[int]:
        """Indices into ``hidden_states`` (0 = embeddings, ``L`` = last layer) used by this strategy (with ``L < 3``
        the "last four" reach into the embeddings); ``ValueError`` for ``second_to_last`` when ``L = 0``."""
        L = num_hidden_layers
        need = 1 if self.name == "second_to_last" else 0
        if L < need:
            raise ValueError(
                f"feature strategy {self.name!r} needs an encoder with at least {need} layer(s); it has {L}"
            )
        four = list(range(max(L - 3, 0), L + 1))
        return {
            "embeddings": [0],
            "last": [L],
            "second_to_last": [L - 1],
            "sum_last_four": four,
            "concat_last_four": four,
            "sum_all": list(range(1, L + 1)) or [0],
            "scalar_mix": list(range(L + 1)),
        }[self.name]

    def output_size(self, hidden_size: int, num_hidden_layers: int) -> int:
        """Feature width fed to the head: ``hidden_size``, or ``len(layers) * hidden_size`` for concatenation."""
        return hidden_size * (len(self.layers(num_hidden_layers)) if self.combine == "concat" else 1)


#: ``--feature_strategy`` choices in Table 7's order, then the learned ELMo mix.
STRATEGIES: dict[str, Strategy] = {
    name: Strategy(name, combine)
    for name, combine in (
        ("embeddings", "single"),
        ("second_to_last", "single"),
        ("last", "single"),
        ("sum_last_four", "sum"),
        ("concat_last_four", "concat"),
        ("sum_all", "sum"),
        ("scalar_mix", "scalar_mix"),
    )
}


def get_strategy(name: str) -> Strategy:
    """The :class:`Strategy` called ``name``; ``ValueError`` (the closest name, "did you mean", and the known ones) for
    an unknown one. Standard library only: this file ships with a saved model as remote code (no package import)."""
    if name not in STRATEGIES:
        import difflib

        close = difflib.get_close_matches(name, list(STRATEGIES), n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown feature strategy {name!r}{hint}; expected one of {', '.join(STRATEGIES)}")
    return STRATEGIES[name]


class ScalarMix(nn.Module):
    """ELMo's learned layer mix (Peters et al., 2018, eq. 1): ``gamma * sum_j softmax(w)_j * h_j``; ``w`` starts at
    zeros (every layer weighted ``1/n``), ``gamma`` at 1."""

    def __init__(self, num_layers: int):
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(num_layers))
        self.gamma = nn.Parameter(torch.ones(()))

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.weights.zero_()
            self.gamma.fill_(1.0)

    def forward(self, stacked: torch.Tensor) -> torch.Tensor:
        """``stacked``: float ``[..., num_layers, hidden]`` -> ``[..., hidden]``."""
        w = torch.softmax(self.weights, dim=0).to(stacked.dtype)
        return self.gamma.to(stacked.dtype) * torch.einsum("...nh,n->...h", stacked, w)


#: ``Strategy.combine`` -> ``[..., n, hidden]`` -> the head's input (``scalar_mix`` is :class:`ScalarMix`)
_COMBINE = {"single": lambda s: s[..., 0, :], "sum": lambda s: s.sum(dim=-2), "concat": lambda s: s.flatten(-2)}


class LayerCombiner(nn.Module):
    """Combine layers into one feature vector per position, as a :class:`Strategy` says: ``forward(stacked,
    available)``: ``stacked`` float ``[..., n_available, hidden]`` holds the hidden states whose
    indices are ``available``; returns ``[..., hidden]`` (``[..., n_layers * hidden]`` for concatenation).
    ``ValueError`` when a needed layer is not among ``available``.
    """

    def __init__(self, strategy: str, num_hidden_layers: int):
        super().__init__()
        self.strategy = get_strategy(strategy)
        self.layers = self.strategy.layers(num_hidden_layers)
        self.mix = ScalarMix(len(self.layers)) if self.strategy.combine == "scalar_mix" else None

    def forward(self, stacked: torch.Tensor, available: list[int]) -> torch.Tensor:
        missing = [i for i in self.layers if i not in available]
        if missing:
            raise ValueError(
                f"strategy {self.strategy.name!r} needs hidden_states {missing}; only {available} were given"
            )
        if list(available) != self.layers:
            stacked = stacked[..., [available.index(i) for i in self.layers], :]
        return self.mix(stacked) if self.mix is not None else _COMBINE[self.strategy.combine](stacked)
