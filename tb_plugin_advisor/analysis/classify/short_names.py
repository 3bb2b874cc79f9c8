"""The name a person reads for a kernel or an op: demangled, then cut to the function it names.

Profiles name kernels three ways: demangled C++ signatures (`void cudnn::…::nchwToNhwcKernel<float, …>
(…)`), raw Itanium symbols (`_ZN17cutlass__5x_cudnn6Kernel…`, written where the runtime had no
demangled name), and plain names (`sm90_xmma_gemm_f32f32_tf32f32_…`, `aten::conv2d`). A raw symbol is
demangled by the C++ runtime's own `__cxa_demangle` through the `cxxfilt` package: the same demangler
the compiler's toolchain uses, so no grammar is re-implemented here. Where cxxfilt or the runtime is
missing, or a symbol does not demangle, the qualified name the symbol opens with is read off its
length-prefixed parts (`leading_name`), and any other name is kept as it is.

`short_name` is the one place a short name is made: the report JSON writes it beside every name a
person reads (`short_name`), and the tab, the text, Markdown and HTML exports and the CLI show it with
the full name on hover or in detail.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Callable, List, Optional

from tb_plugin_advisor.analysis.classify.event_names import short_op_name
from tb_plugin_advisor.analysis.classify.patterns import ANONYMOUS_NAMESPACE, short_kernel_name

MANGLED_PREFIX = "_Z"  # every Itanium C++ ABI symbol starts so; a demangled name never does
# The longest short name: cuDNN's and cuBLAS's generated kernel names run past 130 characters with no
# space, and a table cell can only wrap them mid-word. Longer ones keep their head and tail.
SHORT_NAME_CHARS = 96
ELLIPSIS = "…"
_NAME_PARTS = re.compile(r"(?<=[/:,<>( ])")
_WORD_PARTS = re.compile(r"(?<=_)")


@cache
def demangler() -> Optional[Callable[[str], str]]:
    """cxxfilt's demangle, or None where the package or a C++ runtime cannot be loaded. Loaded at the
    first raw symbol, not at import: cxxfilt looks for the C and C++ runtimes by running `ldconfig -p`
    twice, 7 ms a process, and most profiles (TF on CPU, XLA fusions) hold no raw symbol."""
    try:
        import cxxfilt  # type: ignore[import-untyped]

        cxxfilt.demangle("_Z1fv")  # loads libstdc++ / libc++ once: fails here, not per name
    except Exception:  # noqa: BLE001 - any failure means "no demangler", and the raw name is kept
        return None
    return cxxfilt.demangle


def demangled(name: str) -> str:
    """The demangled form of an Itanium symbol (its leading name where it does not demangle); any
    other name as is."""
    if not name.startswith(MANGLED_PREFIX):
        return name
    demangle = demangler()
    if demangle is None:
        return leading_name(name)
    try:
        text = demangle(name)
    except Exception:  # noqa: BLE001 - cxxfilt raises its own error types for invalid symbols
        return leading_name(name)
    return text if isinstance(text, str) and text else name


_SOURCE_NAME = re.compile(r"(\d+)")


def leading_name(symbol: str) -> str:
    """The qualified name an Itanium symbol opens with (`_ZN17cutlass__5x_cudnn6KernelI…` →
    `cutlass__5x_cudnn::Kernel`), for a symbol the runtime's demangler declines: cuDNN's and
    CUTLASS's deepest template kernels are past what libstdc++'s demangler accepts. Only the
    length-prefixed source names before the first template or parameter are read; anything else
    gives the symbol back unchanged."""
    body = symbol[len(MANGLED_PREFIX):]
    if body.startswith("N"):
        body = body[1:]
    parts = []
    while body[:1].isdigit():
        digits = _SOURCE_NAME.match(body)
        if digits is None:
            break
        length = int(digits.group(1))
        start = digits.end()
        part = body[start:start + length]
        if len(part) < length or not part:
            break
        parts.append(part)
        body = body[start + length:]
    return "::".join(parts) if parts else symbol


@lru_cache(maxsize=65536)
def short_name(name: str, limit: int = SHORT_NAME_CHARS) -> str:
    """The name a table shows: demangled, without return type, template arguments or parameter list
    (`void cudnn::engines_precompiled::nchwToNhwcKernel<float, …>(…)` →
    `cudnn::engines_precompiled::nchwToNhwcKernel`); a name that is only a template's one argument
    (`cutlass::Kernel2<cutlass_80_simt_sgemm_…>`) keeps it, and a plain name is itself; past `limit`
    characters elided (a sentence asks for fewer than a table). Cached per distinct name: a report
    asks for the same few hundred names many times."""
    if name.startswith("%"):  # HLO text: `%copy-done.2 = f32[…] copy-done(…)` → `copy-done.2`
        return elided(short_op_name(name), limit)
    text = demangled(name)
    return elided(short_kernel_name(text) if is_signature(text) else text, limit)


def elided(name: str, limit: int = SHORT_NAME_CHARS) -> str:
    """A name within `limit` characters: its first part, "…", then as many whole trailing parts as fit
    (`StatefulPartitionedCall/…/convolution/Conv2DBackpropFilter`), a name cut mid-word reading as a
    different op. Parts end at `/ : , < > ( ` and a space; a name with none (cuDNN's and cuBLAS's
    generated kernels) at `_`, keeping its first words too; a name with neither is cut in the
    middle."""
    if len(name) <= limit:
        return name
    parts = [p for p in _NAME_PARTS.split(name) if p]
    first = parts[:1]
    if len(parts) == 1:  # one word of `_`-joined words: keep half of them at each end
        parts = [p for p in _WORD_PARTS.split(name) if p]
        first = []
        for part in parts:
            if len("".join(first)) + len(part) > limit // 2:
                break
            first.append(part)

    def joined(head: List[str], tail: List[str]) -> str:
        dropped = parts[len(head): len(parts) - len(tail)]
        sep = dropped[-1][-1] if dropped and not dropped[-1][-1].isalnum() else ""
        return "".join(head) + ELLIPSIS + sep + "".join(tail)

    for head in (first, []):  # keep the first part(s) if they fit beside a tail, else only a tail
        tail: List[str] = []
        for part in reversed(parts[len(head):]):
            if len(joined(head, [part, *tail])) > limit:
                break
            tail.insert(0, part)
        if tail and len(parts) > len(head) + len(tail):
            return joined(head, tail)
    keep = limit - 1
    return name[: keep // 2] + ELLIPSIS + name[len(name) - (keep - keep // 2):]


def is_signature(name: str) -> bool:
    """Whether a name is a C++ function's signature or template (`void ns::f<…>(…)`, `ns::f(int)`,
    `cutlass::Kernel2<…>`, `ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long)`),
    the names shortening is for; an op with parentheses of its own (`jit(train)/dot_general`,
    `jit(train_step)`, `Memcpy HtoD (Pageable -> Device)`) is no signature and stays whole."""
    text = name.replace(ANONYMOUS_NAMESPACE, "")
    paren = text.find("(")
    head = text if paren < 0 else text[:paren]
    if head.startswith("void ") or "<" in head or (paren >= 0 and "::" in head):
        return True
    arguments = text[paren:] if paren > 0 else ""  # a C parameter list: pointers, references, commas
    return (arguments.endswith(")") and " " not in head and "/" not in head
            and any(c in arguments for c in "*&,"))
