"""The one rule interface: everything about a piece of advice in one record.

A `Rule` holds what the advice says (title, message, the code to show in each framework), when it
fires (`check`, over the facts it reads: the `Facts` of a host, or one deeper view's result), what
the fix is worth (`gain`: advice/gains.py), which trace events show it (`evidence`: span kinds of
analysis/evidence/span.py, best first) and how a later capture tells it was acted on (`outcome`:
read by diff/outcomes.py). The recommendations and the deeper views' findings are the same record;
advice/registry.py lists them, and advice/recommend.py is the engine that runs any of them. So a new
rule is one record in its family's module under advice/rules/, and its tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, Iterable, Mapping, NamedTuple, Optional, Tuple, TypeVar, Union

from tb_plugin_advisor.advice.expected_gain import ExpectedGain
from tb_plugin_advisor.analysis.classify.short_names import short_name

# What a rule reads: the Facts of one host (recommendations) or one deeper view's result (findings).
Subject = TypeVar("Subject")

PYTORCH = "pytorch"  # Facts.framework of a PyTorch run: its own snippets, never TF/JAX ones
SUBJECT_CHARS = 60  # a subject's name (a mangled kernel, an HLO op) in a title is cut to this


def subject_name(name: str, limit: int = SUBJECT_CHARS) -> str:
    """A kernel's or op's name as a title or a sentence names it: its short name
    (analysis/classify/short_names.py), cut to `limit` characters, an ellipsis showing the cut."""
    name = short_name(name)
    return name if len(name) <= limit else name[: limit - 1] + "…"


class Fired(NamedTuple):
    """One time a rule fires: how severe, and the numbers that made it fire (a sentence)."""

    severity: str  # one of facts.SEVERITIES
    evidence: str
    subject: str = ""  # fills "{subject}" in the title: the kernel, allocator or op a finding is about
    case: str = ""  # picks the message from Rule.messages where the remedy depends on the case


@dataclass(frozen=True)
class Snippets:
    """The code a rule shows, per framework. A run of an unknown framework sees the TF/Keras and JAX
    snippets; a PyTorch run sees only its own (none rather than code that does not apply to it)."""

    tf: str = ""  # TF/Keras
    jax: str = ""
    pytorch: str = ""
    every: str = ""  # one snippet with a labelled part per framework (the deeper views' findings)

    def shown(self, framework: str) -> Tuple[str, str, str]:
        """(snippet, JAX snippet, what `snippet` is written for) on a run of `framework`."""
        if self.every:
            return self.every, "", "every framework"
        if framework == PYTORCH:
            return self.pytorch, "", "PyTorch"
        return self.tf, self.jax, "TF/Keras"


# How a diff tells that the baseline's advice was acted on (diff/outcomes.py tests each):
CATEGORY_FELL = "category_fell"  # the target category's time per step fell to a share of the baseline's
SHARE_ROSE = "share_rose"  # the share of compute in `precisions` rose by some points
LAUNCHES_FELL = "launches_fell"  # fewer launches per step, or less launch and idle time
STOPS_FIRING = "stops_firing"  # only the rule no longer firing says it (any rule, whatever its signal)
SIGNALS = (CATEGORY_FELL, SHARE_ROSE, LAUNCHES_FELL, STOPS_FIRING)


@dataclass(frozen=True)
class Outcome:
    """Where the fix's gain shows (a breakdown category; None: on the step time only) and the signal
    that says the candidate acted on it."""

    category: Optional[str] = None
    signal: str = STOPS_FIRING
    precisions: Tuple[str, ...] = ()  # SHARE_ROSE: the numeric types whose share should rise


def category_fell(category: str) -> Outcome:
    return Outcome(category, CATEGORY_FELL)


def share_rose(category: str, precisions: Tuple[str, ...]) -> Outcome:
    return Outcome(category, SHARE_ROSE, precisions)


def launches_fell() -> Outcome:
    return Outcome("kernel_launch", LAUNCHES_FELL)


@dataclass(frozen=True)
class Rule(Generic[Subject]):
    """One piece of advice, whole (module docstring). `check` yields a `Fired` each time the rule
    fires on its subject (a finding may fire once per kernel, allocator or op), nothing when quiet."""

    id: str  # stable: scripts test for it (docs/ARCHITECTURE.md §2)
    title: str  # may hold "{subject}"
    message: str  # what to do, in words
    check: Callable[[Subject], Iterable[Fired]]
    gain: Callable[[Subject], ExpectedGain]  # step time the fix can save, or none and why
    evidence: Tuple[str, ...]  # span kinds that show it, best first
    # the code to show; a function of the subject where it depends on the device (precision.mixed)
    snippets: Union[Snippets, Callable[[Subject], Snippets]] = Snippets()
    outcome: Outcome = Outcome()
    messages: Mapping[str, str] = field(default_factory=dict)  # Fired.case → the message in that case

    def title_for(self, fired: Fired) -> str:
        return self.title.replace("{subject}", fired.subject)

    def message_for(self, fired: Fired) -> str:
        return self.messages.get(fired.case, self.message)

    def snippets_for(self, subject: Subject) -> Snippets:
        return self.snippets(subject) if callable(self.snippets) else self.snippets
