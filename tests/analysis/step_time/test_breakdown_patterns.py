"""Every entry of the event-name tables (analysis/event_names.py) against real names from real profiles.

The names below were read from the TF 2.21 CPU fixtures, the corpus' V100 TF, MI300 JAX and TPU
profiles, and the CUDA/ROCm API names CUPTI/roctracer record. The coverage test fails when a table
entry is matched by none of them (an untested pattern) — add a real name when adding an entry.
"""

from __future__ import annotations

import pytest

from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.classify import tf_data_names as tf_data
from tb_plugin_advisor.analysis.step_time.breakdown import device_kernel_category

TABLES = {
    "HOST_INPUT": names.HOST_INPUT,
    "HOST_KERNEL_LAUNCH": names.HOST_KERNEL_LAUNCH,
    "HOST_MEMCPY_H2D": names.HOST_MEMCPY_H2D,
    "HOST_MEMCPY_OTHER": names.HOST_MEMCPY_OTHER,
    "HOST_COMMUNICATION": names.HOST_COMMUNICATION,
    "HOST_COMPUTE": names.HOST_COMPUTE,
    "INPUT_PRODUCER_LINES": names.INPUT_PRODUCER_LINES,
    "DEVICE_COMMUNICATION": names.DEVICE_COMMUNICATION,
    "DEVICE_MEMCPY": names.DEVICE_MEMCPY,
    "STEP_LAUNCHES": names.STEP_LAUNCHES,
    "NOT_STEP_ROOTS": names.NOT_STEP_ROOTS,
    "CUPTI_PROBLEMS": names.CUPTI_PROBLEMS,
    "XLA_MODULE_NAME": (names.XLA_MODULE_NAME,),
    "TRAIN_HINT": (names.TRAIN_HINT,),
    "EAGER_OP": (names.EAGER_OP,),
    "TF_OP_EVENT": (names.TF_OP_EVENT,),
    "TORCH_ATEN_OP": (names.TORCH_ATEN_OP,),
}

# (table, real name, id of the first entry that must match it)
POSITIVE = [
    ("TF_OP_EVENT", "sequential/dense/MatMul:MatMul", "tf_op_event"),
    ("TF_OP_EVENT", "model/custom:my_custom_op", "tf_op_event"),
    ("TORCH_ATEN_OP", "aten::addmm", "torch_aten_op"),
    ("HOST_INPUT", "IteratorGetNextOp::DoCompute", "get_next_op"),
    ("HOST_INPUT", "IteratorGetNextAsOptionalOp::DoCompute", "get_next_op"),
    ("HOST_INPUT", "IteratorGetNextAsOptional_4:IteratorGetNextAsOptional", "get_next_tf_op"),
    ("HOST_INPUT", "IteratorGetNext:IteratorGetNext", "get_next_tf_op"),
    ("HOST_INPUT", "EagerLocalExecute: IteratorGetNext", "get_next_eager"),
    (
        "HOST_INPUT",
        "MultiDeviceIteratorGetNextFromShard:MultiDeviceIteratorGetNextFromShard",
        "multi_device_get_next",
    ),
    ("HOST_INPUT", "Iterator::Root::BatchV2::Map", "iterator_consumer"),
    ("HOST_INPUT", "DevicePutWithSharding", "jax_device_put"),
    ("HOST_INPUT", "batched_device_put", "jax_device_put"),
    ("HOST_INPUT", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "torch_dataloader_next"),
    ("HOST_COMPUTE", "aten::addmm", "torch_aten_op"),
    ("HOST_COMPUTE", "aten::_convolution", "torch_aten_op"),
    ("HOST_INPUT", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "torch_dataloader_next"),
    ("HOST_KERNEL_LAUNCH", "cudaLaunchKernel", "cuda_runtime_launch"),
    ("HOST_KERNEL_LAUNCH", "cudaLaunchKernel_v7000", "cuda_runtime_launch"),
    ("HOST_KERNEL_LAUNCH", "cudaGraphLaunch", "cuda_runtime_launch"),
    ("HOST_KERNEL_LAUNCH", "cuLaunchKernel", "cuda_driver_launch"),
    ("HOST_KERNEL_LAUNCH", "cuLaunchKernelEx", "cuda_driver_launch"),
    ("HOST_KERNEL_LAUNCH", "hipModuleLaunchKernel", "hip_launch"),
    ("HOST_KERNEL_LAUNCH", "hipExtModuleLaunchKernel", "hip_launch"),
    ("HOST_KERNEL_LAUNCH", "hipLaunchKernel", "hip_launch"),
    ("HOST_KERNEL_LAUNCH", "PjitFunction(forward_3d_conv)", "xla_dispatch"),
    ("HOST_KERNEL_LAUNCH", "PJRT_LoadedExecutable_Execute", "xla_dispatch"),
    ("HOST_KERNEL_LAUNCH", "PjRtStreamExecutorLoadedExecutable::ExecuteHelper", "xla_dispatch"),
    ("HOST_KERNEL_LAUNCH", "TfrtTpuLoadedExecutable::Execute", "xla_dispatch"),
    ("HOST_KERNEL_LAUNCH", "Scheduled TfrtTpuLoadedExecutable::Execute", "xla_dispatch"),
    ("HOST_KERNEL_LAUNCH", "GpuExecutable::ExecuteThunks", "xla_dispatch"),
    ("HOST_MEMCPY_H2D", "hipMemcpyHtoDAsync", "api_memcpy_h2d"),
    ("HOST_MEMCPY_H2D", "cuMemcpyHtoDAsync_v2", "api_memcpy_h2d"),
    ("HOST_MEMCPY_H2D", "MemcpyH2D", "tf_memcpy_h2d"),
    ("HOST_MEMCPY_OTHER", "hipMemcpyDtoDAsync", "api_memcpy"),
    ("HOST_MEMCPY_OTHER", "cudaMemsetAsync", "api_memcpy"),
    ("HOST_MEMCPY_OTHER", "MemcpyD2H", "tf_memcpy_other"),
    ("HOST_COMMUNICATION", "ncclAllReduce", "nccl_api"),
    ("HOST_COMMUNICATION", "replica_1/CollectiveReduceV2:CollectiveReduceV2", "tf_collective_op"),
    ("HOST_COMMUNICATION", "BaseCollectiveExecutor::ExecuteAsync", "tf_collective_executor"),
    (
        "HOST_COMPUTE",
        "gradient_tape/sequential_1/conv2d_1/convolution/Conv2DBackpropFilter:Conv2DBackpropFilter",
        "tf_op",
    ),
    ("HOST_COMPUTE", "sequential_1_1/conv2d_4_1/Relu:_FusedConv2D", "tf_op"),
    ("HOST_COMPUTE", "ExecutorState::Process", "tf_executor"),
    ("HOST_COMPUTE", "ParallelFor", "tf_executor"),
    ("HOST_COMPUTE", "EagerLocalExecute: __inference_train_step_870", "tf_eager_execute"),
    ("HOST_COMPUTE", "KernelAndDeviceFunc::Run", "tf_eager_execute"),
    ("HOST_COMPUTE", "TfrtCpuExecutable::ExecuteHelper", "xla_cpu_execute"),
    ("INPUT_PRODUCER_LINES", "tf_data_private_threadpool/-4064103396331394057", "tf_data_producer"),
    ("INPUT_PRODUCER_LINES", "tf_data_iterator_resource/752716656161018557", "tf_data_producer"),
    ("DEVICE_COMMUNICATION", "all-reduce", "xla_collective"),
    ("DEVICE_COMMUNICATION", "all-gather-start.1", "xla_collective"),
    ("DEVICE_COMMUNICATION", "reduce-scatter.3", "xla_collective"),
    ("DEVICE_MEMCPY", "copy-done.2", "xla_async_copy"),
    ("DEVICE_MEMCPY", "copy-start.4", "xla_async_copy"),
    ("STEP_LAUNCHES", "EagerLocalExecute: __inference_multi_step_on_iterator_419", "tf_function_eager"),
    ("STEP_LAUNCHES", "__inference_train_function_1234", "tf_function_graph"),
    ("STEP_LAUNCHES", "PjitFunction(loss_fn)", "jax_pjit"),
    ("STEP_LAUNCHES", "jit_forward_3d_conv:XLA GPU module", "xla_gpu_module"),
    ("STEP_LAUNCHES", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "torch_dataloader_next"),
    ("NOT_STEP_ROOTS", "FunctionRun", "tf_function_run_root"),
    (
        "CUPTI_PROBLEMS",
        "cupti_interface->Subscribe: error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        "cupti_privileges",
    ),
    (
        "CUPTI_PROBLEMS",
        "Could not load dynamic library 'libcupti.so.12'; dlerror: libcupti.so.12",
        "cupti_missing",
    ),
    ("CUPTI_PROBLEMS", "CUPTI error CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", "cupti_other"),
    ("XLA_MODULE_NAME", "jit_f(12190760917235803885)", "xla_module"),
    ("TRAIN_HINT", "__inference_train_function_55", "train_hint"),
    ("TRAIN_HINT", "EagerLocalExecute: __inference_multi_step_on_iterator_419", "train_hint"),
    ("EAGER_OP", "EagerLocalExecute: MatMul", "eager_op"),
]

NEGATIVE = [
    ("TF_OP_EVENT", "ExecutorState::Process"),
    ("TF_OP_EVENT", "EagerLocalExecute: MatMul"),
    ("TORCH_ATEN_OP", "cudaLaunchKernel"),
    ("HOST_COMPUTE", "Iterator::Root"),
    ("HOST_COMPUTE", "RemoteCall: Instantiate: __inference__next_func_331 on /job:worker"),
    ("HOST_COMPUTE", "jit_forward_3d_conv:XLA GPU module"),
    ("HOST_INPUT", "IteratorGetNextOp::DoComputeMore"),
    ("HOST_INPUT", "PrefetchProduce"),
    ("HOST_INPUT", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__init__"),
    ("HOST_KERNEL_LAUNCH", "cudaLaunchKernelFoo"),
    ("HOST_MEMCPY_H2D", "hipMemcpyDtoHAsync"),
    ("INPUT_PRODUCER_LINES", "tf_data_iterator_get_next/7230508711113849680"),
    ("INPUT_PRODUCER_LINES", "tf_data_iterator_get_next_as_optional/-1990981912"),
    ("INPUT_PRODUCER_LINES", "tf_Compute/-7418663231109377524"),
    ("DEVICE_COMMUNICATION", "fusion.1"),
    ("DEVICE_COMMUNICATION", "all_reduce_helper_kernel_that_is_not_hlo"),
    ("DEVICE_MEMCPY", "copy.3"),
    ("STEP_LAUNCHES", "EagerLocalExecute: IteratorGetNext"),
    ("NOT_STEP_ROOTS", "train"),
    ("TRAIN_HINT", "PjitFunction(evaluate)"),
    ("EAGER_OP", "EagerLocalExecute: __inference_train_step_870"),
]


def _table(key):
    return TABLES[key]


@pytest.mark.parametrize(("table", "name", "entry"), POSITIVE)
def test_real_name_is_matched_by_the_expected_entry(table, name, entry):
    matched = names.first_match(_table(table), name)
    assert matched is not None and matched.id == entry, (name, matched)


@pytest.mark.parametrize(("table", "name"), NEGATIVE)
def test_name_is_not_matched(table, name):
    assert names.first_match(_table(table), name) is None


def test_every_table_entry_is_backed_by_a_real_name():
    covered = {(table, entry) for table, _, entry in POSITIVE}
    missing = [
        (table, pattern.id)
        for table, patterns in TABLES.items()
        for pattern in patterns
        if (table, pattern.id) not in covered
    ]
    assert not missing, f"table entries without a test name: {missing}"


def test_train_hint_and_step_launch_function_names():
    assert names.TRAIN_HINT.compiled.search("PjitFunction(train_step)")
    assert not names.TRAIN_HINT.compiled.search("PjitFunction(evaluate)")
    match = names.first_match(names.STEP_LAUNCHES, "PjitFunction(train_step)").compiled.search(
        "PjitFunction(train_step)"
    )
    assert match.group("fn") == "train_step"


@pytest.mark.parametrize(
    ("event", "kind", "parent", "stage"),
    [
        ("Iterator::Root::BatchV2::Map", "Map", "Iterator::Root::BatchV2", "map"),
        ("Iterator::Root::BatchV2", "BatchV2", "Iterator::Root", "batch"),
        ("Iterator::Root::Prefetch::MapAndBatch", "MapAndBatch", "Iterator::Root::Prefetch", "map"),
        (
            "Iterator::Root::Prefetch::MapAndBatch::ForeverRepeat[2]::TensorSlice",
            "TensorSlice",
            "Iterator::Root::Prefetch::MapAndBatch::ForeverRepeat",
            "source",
        ),
        ("Iterator::Prefetch", "Prefetch", None, "prefetch"),
        (
            "Iterator::Root::ParallelInterleaveV4::TFRecord",
            "TFRecord",
            "Iterator::Root::ParallelInterleaveV4",
            "source",
        ),
        ("Iterator::Root::Shuffle", "Shuffle", "Iterator::Root", "other"),
        ("Iterator::Prefetch::Generator", "Generator", "Iterator::Prefetch", "other"),
        ("Iterator::Root", "Root", None, "other"),
    ],
)
def test_tf_data_iterator_names(event, kind, parent, stage):
    assert tf_data.iterator_kind(event) == kind
    assert tf_data.iterator_parent(event) == parent
    assert tf_data.stage_of_kind(kind) == stage


def test_every_tf_data_stage_kind_maps_back_to_its_stage():
    for stage, kinds in tf_data.TF_DATA_STAGES.items():
        for kind in kinds:
            assert tf_data.stage_of_kind(tf_data.iterator_kind(f"Iterator::Root::{kind}")) == stage, kind


@pytest.mark.parametrize(
    ("kernel", "category"),
    [
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "communication"),
        (
            "%all-reduce = f32[5,1024]{1,0} all-reduce(f32[5,1024]{1,0} %bitcast), channel_id=1",
            "communication",
        ),
        ("%copy-done.2 = f32[5]{0} copy-done((f32[5]{0}, u32[]) %copy-start.2)", "memcpy"),
        ("__amd_rocclr_copyBuffer.kd", "memcpy"),
        ("%fusion.3 = f32[8]{0} fusion(f32[8]{0} %all-reduce.1), kind=kLoop", "device_compute"),
        ("ampere_sgemm_128x64_nn", "device_compute"),
    ],
)
def test_device_kernel_categories(kernel, category):
    assert device_kernel_category(kernel) == category


def test_short_op_names_of_hlo_text():
    assert names.short_op_name("%copy-done.2 = f32[5]{0} copy-done(f32[5]{0} %x)") == "copy-done.2"
    assert names.short_op_name("volta_sgemm_128x64_nn") == "volta_sgemm_128x64_nn"
