"""What PyTorch's names mean (analysis/classify/torch_names.py) and what allocator names say
(analysis/classify/allocator_names.py): every entry matches a real name as Kineto or TF writes it
(the H200 captures, the corpus traces, torch's own sources) and stays off the names beside it."""

from __future__ import annotations

import pytest

from tb_plugin_advisor.analysis.classify.allocator_names import device_ordinal, holds_host_memory
from tb_plugin_advisor.analysis.classify.torch_names import (
    ITERATOR_WORKERS,
    TORCH_NAMES,
    copy_source,
    dataloader_iterator,
)

NAME_CASES = [
    ("dataloader_next", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", True),
    ("dataloader_next", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", True),
    ("dataloader_next", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__iter__", False),
    ("h2d_copy", "Memcpy HtoD (Pinned -> Device)", True),
    ("h2d_copy", "Memcpy HtoD (Pageable -> Device)", True),
    ("h2d_copy", "Memcpy DtoH (Device -> Pageable)", False),
    ("copy_op", "aten::copy_", True),
    ("copy_op", "aten::_copy_from", False),
    ("pin_op", "aten::pin_memory", True),
    ("pin_op", "aten::_pin_memory", True),
    ("pin_op", "aten::is_pinned", False),
    ("host_alloc", "cudaHostAlloc", True),
    ("host_alloc", "hipHostMalloc", True),
    ("host_alloc", "cudaMalloc", False),
    ("collate", "aten::stack", True),
    ("collate", "aten::cat", True),
    ("collate", "aten::div", False),
    ("zero_grad", "Optimizer.zero_grad#SGD.zero_grad", True),
    ("zero_grad", "Optimizer.step#SGD.step", False),
    ("zero_fill", "aten::zero_", True),
    ("zero_fill", "aten::fill_", True),
    ("zero_fill", "aten::zeros", False),
    ("matrix_op", "aten::addmm", True),
    ("matrix_op", "aten::cudnn_convolution", True),
    ("matrix_op", "aten::add", False),
    ("conv_backward_node", "autograd::engine::evaluate_function: ConvolutionBackward0", True),
    ("conv_backward_node", "CudnnConvolutionBackward", True),
    ("conv_backward_node", "CudnnBatchNormBackward", False),
]


@pytest.mark.parametrize("key, name, matches", NAME_CASES)
def test_torch_name_table(key, name, matches):
    assert bool(TORCH_NAMES[key].search(name)) == matches


def test_every_name_table_entry_has_a_real_name_that_matches():
    assert {key for key, _, matches in NAME_CASES if matches} == set(TORCH_NAMES)


@pytest.mark.parametrize("name, iterator, workers", [
    ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "_SingleProcessDataLoaderIter", "none"),
    ("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "_MultiProcessingDataLoaderIter",
     "processes"),
    # a subclass (torchdata, a user's own): its worker count is not known
    ("enumerate(DataLoader)#_PrefetchingDataLoaderIter.__next__", "_PrefetchingDataLoaderIter", None),
    ("ProfilerStep#3", "", None),
])
def test_the_iterator_class_says_how_batches_are_loaded(name, iterator, workers):
    assert dataloader_iterator(name) == iterator
    assert ITERATOR_WORKERS.get(iterator) == workers


@pytest.mark.parametrize("name, source", [
    ("Memcpy HtoD (Pageable -> Device)", "pageable"),
    ("Memcpy HtoD (Pinned -> Device)", "pinned"),
    ("Memcpy DtoH (Device -> Pageable)", ""),
    ("aten::copy_", ""),
])
def test_a_copy_names_its_source_memory(name, source):
    assert copy_source(name) == source


@pytest.mark.parametrize("allocator, host, ordinal", [
    ("GPU_0_bfc", False, 0),  # TF
    ("gpu_host_bfc", True, None),
    ("bfc_cpu_allocator_for_gpu", True, None),
    ("mklcpu", True, None),
    ("CPU", True, None),  # Kineto
    ("GPU 1", False, 1),
    ("device", False, None),  # TPU runtimes name none: the reader's stand-in
])
def test_allocator_names_say_host_or_device_and_which(allocator, host, ordinal):
    assert holds_host_memory(allocator) == host
    if not host:
        assert device_ordinal(allocator) == ordinal
