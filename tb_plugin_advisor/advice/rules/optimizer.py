"""Rules about the optimizer's own per-step work: PyTorch's zero_grad filling every gradient with
zeros instead of dropping it. The check reads only `Facts`."""

from __future__ import annotations

from typing import Iterator, Tuple

from tb_plugin_advisor.advice import gains
from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rule import PYTORCH, Fired, Rule, Snippets
from tb_plugin_advisor.formatting import fixed


def zero_grad_set_to_none(f: Facts) -> Iterator[Fired]:
    """zero_grad fills every gradient with zeros (set_to_none=False)."""
    if f.framework != PYTORCH or f.torch_zero_grad_fills < 1:
        return
    yield Fired("low", (
        f"Optimizer.zero_grad runs {fixed(f.torch_zero_grad_fills, 0)} zero-filling ops "
        "(aten::zero_/fill_) per "
        "step: gradients are overwritten with zeros instead of being dropped."
    ))


ZERO_GRAD_SET_TO_NONE = Rule(
    id="optimizer.zero_grad_set_to_none",
    title="Drop gradients instead of zero-filling them",
    message="zero_grad(set_to_none=False) launches a fill for every parameter's gradient each step; "
    "set_to_none=True skips that work and its memory traffic.",
    check=zero_grad_set_to_none,
    gain=gains.zero_grad_fills,
    evidence=("worst_step",),
    snippets=Snippets(pytorch="optimizer.zero_grad(set_to_none=True)  # the default since torch 2.0"),
)

RULES: Tuple[Rule[Facts], ...] = (ZERO_GRAD_SET_TO_NONE,)
