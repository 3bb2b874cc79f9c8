"""What PyTorch's own names mean in a Kineto trace: the DataLoader's next() and its iterator classes,
host-to-device copies and the ops that pin or copy batches, Optimizer.zero_grad and its fills, the
aten ops that could run on matrix units, the ops that only allocate, and the autograd node of a
convolution.

One table, read by the DataLoader panel, the PyTorch signals the rules see, the precision of CPU ops,
the FLOP counter and the memory view, so each name is read one way everywhere; every entry is backed
by a real name in tests/analysis/classify/test_torch_names.py.
"""

from __future__ import annotations

import re
from typing import Dict

TORCH_NAMES: Dict[str, re.Pattern] = {
    # next() on a DataLoader iterator; the class says how batches are loaded (ITERATOR_WORKERS)
    "dataloader_next": re.compile(r"^enumerate\(DataLoader\)#(?P<iterator>_?\w*DataLoaderIter)\.__next__$"),
    # a host-to-device copy on a GPU stream; its source memory is Pinned or Pageable (a pageable one is
    # staged through a bounce buffer and never asynchronous)
    "h2d_copy": re.compile(r"^Memcpy HtoD \((?P<source>\w+) -> Device\)$"),
    # the op whose `Concrete Inputs` hold non_blocking: copy_(self, src, non_blocking)
    "copy_op": re.compile(r"^aten::copy_$"),
    # pinning a batch (DataLoader(pin_memory=True) runs it on its pin-memory thread)
    "pin_op": re.compile(r"^aten::_?pin_memory$"),
    # page-locked host allocations: the pinned-memory allocator growing
    "host_alloc": re.compile(r"^(cudaHostAlloc|cudaMallocHost|cuMemHostAlloc|cuMemAllocHost(_v2)?|"
                             r"hipHostMalloc|hipHostAlloc)$"),
    # default_collate stacks the samples into one batch tensor
    "collate": re.compile(r"^aten::(stack|cat|_cat)$"),
    # Optimizer.zero_grad, and the zero-filling ops it runs when set_to_none=False
    "zero_grad": re.compile(r"^Optimizer\.zero_grad#"),
    "zero_fill": re.compile(r"^aten::(zero_|fill_)$"),
    # aten ops that could run on matrix units (Tensor Cores / AMX / matrix cores)
    "matrix_op": re.compile(
        r"^aten::(mm|addmm|bmm|baddbmm|addbmm|matmul|linear|_addmm_activation|"
        r"conv\w*|_convolution\w*|convolution\w*|cudnn_convolution\w*|miopen_convolution\w*|mkldnn_convolution|"
        r"scaled_dot_product_attention|_scaled_dot_product_\w+|_flash_attention_\w+|_efficient_attention_\w+|"
        r"_scaled_mm|_int_mm|einsum)$"
    ),
    # the autograd node of a convolution, whose only input is the forward's grad_output: it names the
    # forward's output size in traces that record no strides (its `Sequence number` is the forward's)
    "conv_backward_node": re.compile(r"(^|: )\w*Conv\w*Backward\d*$"),
}

# What each DataLoader iterator class means (torch.utils.data.dataloader). A class not listed (a
# subclass, torchdata) is reported by name with the worker count unknown.
ITERATOR_WORKERS: Dict[str, str] = {
    "_SingleProcessDataLoaderIter": "none",  # num_workers=0: batches are made in the training process
    "_MultiProcessingDataLoaderIter": "processes",  # num_workers > 0 (the count is not in the trace)
}

# The ops that only allocate: the tensor they make is described by their own arguments (sizes first,
# then the dtype code), while the op around them is the one the allocation is for.
TORCH_ALLOCATING_OPS = frozenset({"aten::empty", "aten::empty_strided", "aten::empty_like", "aten::new_empty",
                                  "aten::new_empty_strided"})


def dataloader_iterator(name: str) -> str:
    """The iterator class of a DataLoader next() event ("_SingleProcessDataLoaderIter"); "" for any
    other name."""
    match = TORCH_NAMES["dataloader_next"].match(name) if "DataLoader" in name else None
    return match.group("iterator") if match else ""


def copy_source(name: str) -> str:
    """The source memory of a host-to-device copy, lower case ("pinned", "pageable"); "" for any other
    name."""
    match = TORCH_NAMES["h2d_copy"].match(name) if name.startswith("Memcpy") else None
    return match.group("source").lower() if match else ""
