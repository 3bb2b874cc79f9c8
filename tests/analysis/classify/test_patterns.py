"""The kernel/op name tables: every rule is exercised by a real name, and each real name is read right.

Sources of the names (comment above each group): files in ../shared/corpus (PyTorch Kineto traces and
XSpace files whose kernel names are what CUDA/ROCm reported), or public GitHub issues / docs / code
found with the code-search tool (quoted by what the page is; the names are copied from it verbatim).
Long mangled names are kept as their real leading part, which is where every decision is made.
"""

from __future__ import annotations

import pytest

from tb_plugin_advisor.analysis.classify.architectures import architecture
from tb_plugin_advisor.analysis.classify.patterns import (
    DTYPE_TOKEN_RULES,
    FAMILIES,
    FAMILY_RULES,
    LOW_PRECISION,
    LOW_PRECISION_FLOATS,
    NVJET_TYPE_CODES,
    OP_RULES,
    PRECISION_RULES,
    PRECISIONS,
    SIXTEEN_BIT,
    TC_VERDICTS,
    TENSILE_TYPE_CODES,
    TENSOR_CORE_RULES,
    TF_DATA_TYPES,
    base_name,
    classify_kernel,
    classify_op,
    dtype_in_text,
    head_name,
    ops_eligible,
)

# (kernel name, precision, Tensor Core verdict, family)
KERNELS = [
    # --- NVIDIA cuBLAS / cuDNN legacy names -----------------------------------------------------
    # corpus hta/tests/data/df_index_resolver/df_index_resolver.json.gz (Tesla V100)
    ("volta_sgemm_128x64_nn", "fp32", "no", "gemm"),
    # corpus kineto/legacy_2021-01/tb_plugin/samples/resnet50_autograd_api_num_workers_0/
    #   worker0.pt.trace.json.gz
    ("volta_scudnn_128x64_relu_interior_nn_v1", "fp32", "no", "conv"),
    ("volta_cgemm_32x32_tn", "fp32", "no", "gemm"),
    # corpus hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz (A100)
    ("ampere_gcgemm_64x64_nt", "fp32", "no", "gemm"),
    # public code search: a cuBLAS kernel-name list in a GPU-tracing tool ("volta_h884gemm_64x64_nt")
    ("volta_h884gemm_64x64_nt", "fp16", "yes", "gemm"),
    # public code search: nvprof output pasted in a GitHub issue (a Turing GPU)
    ("turing_h1688gemm_128x128_ldg8_nt", "fp16", "yes", "gemm"),
    # public code search: TF mixed-precision guide ("operations with s884cudnn … use Tensor cores") and
    # the autocast nvprof listing in a PyTorch issue
    ("volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1", "fp16", "yes", "conv"),
    ("Volta_hmma_implicit_gemm_fprop_fp32_nhwc_128x128x64x1_1x3x3x0x1", "fp16", "yes", "conv"),
    # public code search: nsys kernel table of a vLLM/PyTorch run on A100 (bf16 autocast)
    ("ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn", "bf16", "yes", "gemm"),
    # public code search: a cuBLAS kernel-symbol header listing volta_int8_* kernels
    ("volta_int8_i8816gemm_int8_128x128_ldg16_relu_mods_nt", "int8", "yes", "gemm"),
    # --- NVIDIA xmma (sm70…sm90) -------------------------------------------------------------------
    # corpus hta/tests/data/nccl_parser_config/nccl_data.json.gz (A100, TF32 cuDNN)
    ("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1"
     "_g1_tensor16x8x8_execute_kernel_cudnn_infer", "tf32", "if_low_precision", "conv"),
    # public code search: nsys table of an H100 bf16 run
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off"
     "_kernel__5x_cublas", "bf16", "if_low_precision", "gemm"),
    # public code search: notes on torch matmul kernels on H100 (fp32 GEMM on the FMA path)
    ("sm90_xmma_gemm_f32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_on_kernel"
     "__5x_cublas", "fp32", "if_low_precision", "gemm"),
    # --- cuBLAS nvjet (Hopper/Blackwell) -----------------------------------------------------------
    # public code search: notes on torch matmul kernels on H100 ("h: half precision (FP16)")
    ("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", "fp16", "if_low_precision", "gemm"),
    # public code search: a Blackwell kernel table calling it a "bf16 GEMM (cuBLAS sm_120)"
    ("nvjet_sm120_tst_mma_64x64x128_3_32x32x128_tmaAB_alignCD4_bz_TNNN", "bf16", "if_low_precision", "gemm"),
    # public code search: an LM-head trace analysis ("the TF32 path")
    ("nvjet_sss_tf32_128x256_TNT", "tf32", "if_low_precision", "gemm"),
    # --- CUTLASS ------------------------------------------------------------------------------------
    # corpus hta/tests/data/timeline_analysis/sampled_rank-0.json.gz
    ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>"
     "(cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4::Params)", "tf32", "yes", "gemm"),
    # corpus hta/tests/data/trace_file_list/inference_rank_1.json.gz
    ("void cutlass::Kernel<cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_64x2_tn_align8>"
     "(cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_64x2_tn_align8::Params)", "fp16", "yes", "gemm"),
    # corpus hta/tests/data/nccl_parser_config/nccl_data.json.gz (A100)
    ("void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>"
     "(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)", "fp32", "no", "gemm"),
    ("void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4>"
     "(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4::Params)", "tf32", "yes", "conv"),
    # (leading part of the mangled name)
    ("_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22Implicit"
     "GemmMultistageINS_4gemm9GemmShapeILi128ELi128ELi32EEENS4_52Conv2dWgradOutputGradientTileAccessIterator"
     "OptimizedINS_11MatrixShapeILi128ELi32EEENS_10tfloat32_tENS_9transform29PitchLinearWarpRakedThreadMapINS"
     "_16PitchLinearShapeILi128ELi32EEELi128ENSF_ILi8ELi4EEELi4EEENS_12AlignedArrayISC_Li4ELi16EEEEENSD_11"
     "threadblock25RegularTileAccessIteratorISB_SC_NS_6layout40ColumnMajorTensorOpMultiplicandCongruous",
     "tf32", "yes", "conv"),
    # public code search: CUTLASS 3 profiler naming notes (Hopper)
    ("cutlass3x_sm90_tensorop_gemm_f16_f16_f16_f16_f16_128x256x64_1x2x1_0_tnn_align8_warpspecialized_pingpong"
     "_epi_tma", "fp16", "yes", "gemm"),
    # public code search: CUTLASS-generated Hopper fp8 GEMM (e4m3 inputs, bf16 output)
    ("cutlass3x_sm90_tensorop_s64x128x32gemm_e4m3_e4m3_f32_bf16_bf16_64x128x128_2x1x1_0_tnt_align16"
     "_warpspecialized_epi_nosmem", "fp8", "yes", "gemm"),
    # --- fused attention ------------------------------------------------------------------------------
    # public code search: a profiler table of a flash-attn run (bf16)
    ("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false,"
     " cutlass::bfloat16_t,"
     " Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, false, false, false, false, true,"
     " false, false>(flash::Flash_fwd_params)", "bf16", "if_low_precision", "attention"),
    # public code search: PyTorch SDPA backends table (cuDNN attention, memory-efficient attention)
    ("cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_3_64x64x128_4x1x1_kernel0_0", "fp16",
     "if_low_precision", "attention"),
    # public code search: an xFormers/SDPA analysis of the fp32 fallback on an RTX 4060
    ("fmha_cutlassF_f32_aligned_64x64_rf_sm80", "fp32", "if_low_precision", "attention"),
    # public code search: FlashAttention-2 backward launch order (rowsum(dO*O) pre-pass), profiler table
    ("void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false",
     "unknown", "no", "helper"),
    # corpus tracelens/tests/test_data_jax_te_fused_attn_categorization/934987a2fc2f.xplane.pb (MI355X)
    ("void ck_tile::kentry<ck_tile::gfx950_t, 2, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync"
     "<ck_tile::BlockFmhaPipelineProblem<std::bfloat16_t, std::bfloat16_t, std::bfloat16_t, float, float",
     "bf16", "if_low_precision", "attention"),
    ("void ck_tile::kentry<ck_tile::gfx950_t, 2,"
     " ck_tile::FmhaBwdOGradDotOKernel<ck_tile::BlockFmhaBwdOGradDotO"
     "<ck_tile::BlockFmhaBwdOGradDotOPipelineProblem<std::bfloat16_t, std::bfloat16_t, float, 64, 128, false",
     "bf16", "no", "helper"),
    # corpus tracelens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz (Triton attention, MI300X)
    ("attn_fwd", "unknown", "if_low_precision", "attention"),
    # --- AMD: rocBLAS/hipBLASLt (Tensile), MIOpen, composable_kernel --------------------------------
    # corpus tracelens/tests/traces/mi300/jax08_gemm/tw003.xplane.pb (leading part)
    ("Cijk_Ailk_Bljk_BBS_BH_MT256x224x64_MI16x16x16x1_SN_1LDSB1_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT",
     "bf16", "yes", "gemm"),
    # corpus hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz (leading part)
    ("Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1",
     "fp32", "yes", "gemm"),
    # corpus tracelens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz (leading part)
    ("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT128x144x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1",
     "bf16", "yes", "gemm"),
    # public code search: a ROCm profiling write-up (fp16 Tensile kernels with and without MFMA)
    ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x16_MI16x16x16x1_SN", "fp16", "yes", "gemm"),
    ("Cijk_Ailk_Bljk_HSS_BH_MT64x32x8_SE_1LDSB0_AMAS2", "fp16", "no", "gemm"),
    # corpus tracelens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz (leading part)
    ("igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64"
     ""
     "_gkgs", "bf16", "yes", "conv"),
    # corpus tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz (leading parts)
    ("_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_28GridwiseGemm"
     ""
     "_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorENS6_11ColumnMajorES7_ttfttNS0_12element_wise11",
     "unknown", "yes", "conv"),
    ("batched_transpose_16x32_half", "fp16", "no", "transpose"),
    ("transpose_NCHW2CNHW_V2_2D_WG_off64", "unknown", "no", "transpose"),
    ("SubTensorOpWithScalar1d", "unknown", "no", "other"),
    # corpus tracelens/tests/traces/perf_model/normalization/normalization_layer_test.json.gz
    ("MIOpenBatchNormFwdTrainSpatial", "unknown", "no", "other"),
    # --- XLA (JAX) kernels ----------------------------------------------------------------------------
    # corpus tracelens/tests/test_data_jax_te_fused_attn_categorization/934987a2fc2f.xplane.pb
    ("gemm_fusion_dot_6.kd", "unknown", "if_capable", "gemm"),
    ("__amd_rocclr_fillBufferAligned.kd", "unknown", "no", "copy"),
    # corpus tracelens/tests/traces/mi300/jax08_conv/tw003.xplane.pb
    ("input_transpose_fusion.kd", "unknown", "no", "transpose"),
    ("Im3d2Col.kd", "unknown", "no", "helper"),
    ("__amd_rocclr_copyBuffer.kd", "unknown", "no", "copy"),
    # corpus tracelens/tests/traces/mi300/jax08_elementwise/tw003.xplane.pb
    ("loop_convert_fusion.kd", "unknown", "no", "other"),
    # corpus tracelens/tests/traces/mi300/jax_conv_minimal/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb
    ("CopyDeviceToDevice", "unknown", "no", "copy"),
    # corpus xprof/older_01d85de/xprof/convert/test_xplanes/tpu_inference_2.xplane.pb (TPU op events)
    ("%broadcast_add_fusion.1 = f32[5,1024,1024,256]{3,2,1,0:T(8,128)} fusion(f32[5,1024,1024,256]{3,2,1,0:"
     "T(8,128)} %param.1), kind=kLoop", "fp32", "no", "other"),
    ("%all-reduce = f32[5,1024,1024,256]{3,2,1,0:T(8,128)} all-reduce(f32[5,1024,1024,256]{3,2,1,0:T(8,128)}",
     "fp32", "no", "comm"),
    ("%copy-done.2 = f32[5,1024,1024,256]{3,2,1,0:T(8,128)} copy-done((f32[5,1024,1024,256]{3,2,1"
     ",0:T(8,128)}",
     "fp32", "no", "copy"),
    # --- Triton (PyTorch Inductor) --------------------------------------------------------------------
    # public code search: Inductor max-autotune output ("triton_tem_fused_mm_0.run(...)")
    ("triton_tem_fused_mm_0", "unknown", "if_capable", "gemm"),
    # corpus hta/tests/data/triton_example/triton_example.json.gz
    ("triton_poi_fused_add_cos_sin_0", "unknown", "no", "other"),
    # --- TensorFlow / Eigen / PyTorch elementwise, helpers, collectives --------------------------------
    # corpus xprof/demo/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb (V100, fp16 BERT)
    ("void tensorflow::functor::FillPhiloxRandomKernelLaunch<tensorflow::random::UniformDistribution<"
     "tensorflow::random::PhiloxRandom, Eigen::half> >(unsigned long long const*, unsigned long long const*,",
     "fp16", "no", "other"),
    ("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
     "Eigen::Tensor<Eigen::half, 1, 1, long>, 16, Eigen::MakePointer>,"
         " Eigen::TensorConversionOp<Eigen::half,",
     "fp16", "no", "other"),
    # public code search: a TF GPU trace in a repository (layout transpose around cuDNN)
    ("void tensorflow::functor::SwapDimension1And2InTensor3UsingTiles<float, 256, 32, 32,"
     " false>(float const*,"
     " tensorflow::functor::Dimension<3>, float*)", "fp32", "no", "transpose"),
    # corpus hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz (V100)
    ("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)0>"
     "(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)", "fp32", "no", "transpose"),
    ("void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*,"
     " int, float*,",
     "fp32", "no", "conv"),
    # corpus kineto/legacy_2021-01/tb_plugin/samples/resnet50_autograd_api_num_workers_0/
    #   worker0.pt.trace.json.gz
    ("cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)", "unknown", "no", "helper"),
    ("void splitKreduce_kernel<float, float, float>(cublasSplitKParams<float>, float const*, float const*,"
     " float*, float const*, float const*)", "fp32", "no", "helper"),
    ("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::"
     "WinogradDataParams<float, float>)", "fp32", "no", "helper"),
    ("void fft2d_r2c_32x32<float, false, 1u, false>(float2*, float const*, int, int, int, int, int,"
     " int, int,",
     "fp32", "no", "conv"),
    ("void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>(int, int, int,"
     " float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float,",
     "fp32", "no", "conv"),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, float const*,"
     " int, int, int)", "fp32", "no", "other"),
    # corpus hta/tests/data/negative_queue_length_values_check/rank0.json.gz (A100)
    ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false,"
     " cublasGemvParams"
     "<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>,",
     "fp32", "no", "gemv"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<double, at::native::func_wrapper_t<double,",
     "fp64", "no", "other"),
    # corpus hta/tests/data/trace_file_list/inference_rank_1.json.gz
    ("void gemmk1_kernel<float, 256, 5, false, false, false, false,"
     " cublasGemvTensorStridedBatched<__half const>,",
     "fp32", "no", "gemv"),
    # corpus hta/tests/data/df_index_resolver/df_index_resolver.json.gz (V100)
    ("void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*,"
     " cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, long, int*)",
     "fp32", "no", "helper"),
    # corpus tracelens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float,"
     " c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
     "bf16", "no", "other"),
    # corpus hta/tests/data/timeline_analysis/sampled_rank-0.json.gz (FBGEMM fp8 quantisation, embeddings)
    ("void fbgemm_gpu::(anonymous namespace)::_FP8rowwise_to_float_cuda_kernel<float>(unsigned char const*,"
     " int, int, float*, bool)", "fp8", "no", "other"),
    ("void split_embedding_codegen_forward_weighted_kernel<c10::Half, c10::Half, float, false, long"
     ", 2ul, 32ul>"
     "(at::GenericPackedTensorAccessor<c10::Half, 1ul, at::RestrictPtrTraits, long>, fbgemm_gpu::",
     "fp16", "no", "other"),
    # corpus hta/tests/data/nccl_parser_config/nccl_data.json.gz
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "fp32", "no", "comm"),
    ("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "int8", "no", "comm"),
]


@pytest.mark.parametrize("name,precision,verdict,family", KERNELS, ids=[k[0][:60] for k in KERNELS])
def test_real_kernel_names_are_read_right(name, precision, verdict, family):
    cls = classify_kernel(name)
    assert (cls.precision, cls.tensor_cores, cls.family) == (precision, verdict, family), cls.rules


# (text of a TF `shape` stat, precision). The first three are real stats of kernels in corpus
# xprof/demo/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb; the bf16 one has the same
# format with the type word TensorFlow's DataTypeString gives DT_BFLOAT16.
SHAPES = [
    ("(half[4,384,4096];half[])", "fp16"),
    ("(float[1024,16,64])", "fp32"),
    ("(int32[3])", "unknown"),
    ("(bfloat16[32,128];bfloat16[128,10])", "bf16"),
]


@pytest.mark.parametrize("shape,precision", SHAPES)
def test_shape_stats_give_the_op_input_type(shape, precision):
    assert dtype_in_text(shape)[0] == precision


# (op as the KernelTable records it: `tf_op` "name:Type" or an HLO instruction name, eligible)
OPS = [
    # TF 2.21 CPU profiles made here (Keras Conv2D + Dense model.fit, see tests/tf_profiles.py style runs)
    ("StatefulPartitionedCall/sequential_1/conv2d_1/convolution:Conv2D", True),
    ("StatefulPartitionedCall/sequential_1/dense_1_2/BiasAdd:_FusedMatMul", True),
    ("StatefulPartitionedCall/gradient_tape/sequential_1/conv2d_1/convolution/Conv2DBackpropFilter:"
     "Conv2DBackpropFilter", True),
    ("StatefulPartitionedCall/adam/Sqrt_9:Sqrt", False),
    # corpus xprof/demo/plugins/profile/GPU-multi-worker/*.xplane.pb (`level 0` annotations)
    ("replica_4/bert_span_labeler/bert_encoder_1/transformer/layer_5/dropout_1/dropout/GreaterEqual:"
     "GreaterEqual", False),
    # JAX on MI300X / MI355X: corpus tracelens/**/*.xplane.pb `hlo_op` values
    ("gemm_fusion_dot.6", True),
    ("cudnn-conv.1.0", True),
    ("te_fused_attn_forward_ffi.10", True),
    ("custom-call.1", False),  # decided by its kernel (a Tensile GEMM) instead
    ("loop_convert_fusion", False),
    ("input_transpose_fusion.1", False),
    # JAX's tf_op for every XLA kernel
    ("XlaModule:", False),
    # XLA test HLO (public code search, xla triton gemm tests): "ROOT dot.0 = f32[1024,1024] dot(c0, p1)"
    ("dot.0", True),
]


@pytest.mark.parametrize("op,eligible", OPS)
def test_ops_that_tensor_cores_can_serve(op, eligible):
    assert classify_op(op)[0] is eligible


def _all_rule_ids():
    tables = (PRECISION_RULES, DTYPE_TOKEN_RULES, TENSOR_CORE_RULES, FAMILY_RULES, OP_RULES)
    return {r.id for table in tables for r in table}


def test_every_rule_is_decided_by_a_real_name_above():
    used = set()
    for name, *_ in KERNELS:
        used.update(classify_kernel(name).rules)
    for shape, _ in SHAPES:
        used.add(dtype_in_text(shape)[1])
    for op, _ in OPS:
        used.add(classify_op(op)[1])
    missing = _all_rule_ids() - used
    assert not missing, f"rules without a real name deciding them: {sorted(missing)}"
    assert "tf_matrix_op" in used


def test_rule_ids_are_unique_and_values_are_known():
    tables = (PRECISION_RULES, DTYPE_TOKEN_RULES, TENSOR_CORE_RULES, FAMILY_RULES, OP_RULES)
    ids = [r.id for table in tables for r in table]
    assert len(ids) == len(set(ids))
    assert {r.value for r in TENSOR_CORE_RULES} <= set(TC_VERDICTS)
    assert {r.value for r in FAMILY_RULES} <= set(FAMILIES)
    assert {r.value for r in DTYPE_TOKEN_RULES} <= set(PRECISIONS)
    coded = {"hlo", "tensile", "nvjet"}  # resolved through HLO_TYPES / TENSILE_TYPE_CODES / NVJET_TYPE_CODES
    assert {r.value for r in PRECISION_RULES} <= set(PRECISIONS) | coded


def test_tensile_and_nvjet_type_codes_used_by_real_names():
    # The codes the real names above carry map as Tensile's DataType / cuBLAS's nvjet letters say.
    assert [TENSILE_TYPE_CODES[c] for c in "BSH"] == ["bf16", "fp32", "fp16"]
    assert [NVJET_TYPE_CODES[c] for c in "hts"] == ["fp16", "bf16", "fp32"]


def test_tf_data_type_codes_match_tensorflow():
    # TensorBoard ships TensorFlow's own types.proto, so this needs no TensorFlow install
    from tensorboard.compat.proto import types_pb2

    expected = {
        "DT_FLOAT": "fp32", "DT_DOUBLE": "fp64", "DT_HALF": "fp16", "DT_BFLOAT16": "bf16", "DT_INT8": "int8",
        "DT_FLOAT8_E4M3FN": "fp8", "DT_FLOAT8_E5M2": "fp8",
    }
    for enum_name, precision in expected.items():
        assert TF_DATA_TYPES[types_pb2.DataType.Value(enum_name)] == precision
    assert types_pb2.DataType.Value("DT_INT32") not in TF_DATA_TYPES  # integer work is not float compute


def test_resolving_verdicts_needs_the_device_and_the_type():
    hopper = architecture("Nvidia", "NVIDIA H100 80GB HBM3", (9, 0))
    pascal = architecture("Nvidia", "Tesla P100-PCIE-16GB", (6, 0))
    mi300 = architecture("AMD", "", (9, 4))
    tpu = architecture("Google", "TPU v6 Lite", None, kind="tpu")
    assert (hopper.name, hopper.tensor_cores, hopper.tf32) == ("Hopper", True, True)
    assert (pascal.name, pascal.tensor_cores) == ("pre-Volta", False)
    assert (mi300.name, mi300.tensor_cores) == ("CDNA3", True)
    assert architecture("AMD", "AMD Instinct MI210", (9, 0)).tensor_cores is True
    assert architecture("AMD", "", (9, 0)).tensor_cores is None  # gfx906 and gfx90a both report 9.0
    assert tpu.matrix_ops_always
    xmma = {name: classify_kernel(name) for name, *_ in KERNELS if name.startswith("sm90_xmma")}
    assert len(xmma) == 2
    for name, cls in xmma.items():  # fp32 runs on the FMA units, bf16 on the Tensor Cores
        assert cls.uses_tensor_cores(hopper) is ("bf16" in name), name
    triton = classify_kernel("triton_tem_fused_mm_0")
    assert triton.uses_tensor_cores(hopper) and not triton.uses_tensor_cores(pascal)


def test_name_parts_used_by_the_rules():
    name = "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, int)"
    assert base_name(name) == "softmax_warp_forward"
    assert head_name(name).endswith("<float, float, float, 10, true>")
    cutlass = "void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt::Params)"
    assert head_name(cutlass) == "void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>"


def test_ops_eligible_answers_as_classify_op_does_one_by_one():
    """The batch form decides a TF op by its type once per type; every answer equals classify_op's."""
    ops = ["model/dense/MatMul:MatMul", "a/b:_MklNativeFusedConv2D", "x/relu:Relu", "y:_MklMatMul",
           "dot.12", "fusion.3", "convolution.1.2", "", "odd:", "scope/dot.4:", "w:BatchMatMulV2",
           "v:  MatMul ", "custom-call.7", "q/Conv2DBackpropInput:Conv2DBackpropInput"]
    ops = ops + ops[::-1]
    assert ops_eligible(ops) == [classify_op(op)[0] for op in ops]
    assert any(ops_eligible(ops)) and not all(ops_eligible(ops))


@pytest.mark.parametrize("name, head", [
    ("k", "k"),
    ("k(int)", "k"),
    ("void k<float>(float*)", "void k<float>"),
    ("void k<f<(int)3>>(int)", "void k<f<(int)3>>"),  # a '(' inside template brackets is no cut
    ("void (anonymous namespace)::k(int)", "void k"),
    ("void k<(anonymous namespace)::T>(T)", "void k<T>"),
    ("a>b(c)", "a>b"),  # a stray '>' never makes the depth negative
    ("a<b(c)", "a<b(c)"),  # an unclosed '<': no cut at all
    ("f(g<int>)", "f"),
])
def test_head_name_cuts_at_the_first_paren_outside_template_brackets(name, head):
    assert head_name(name) == head



def test_the_precision_groups_are_nested_sets_of_known_types():
    """16-bit floats ⊂ floats below 32 bits (what mixed precision moves to) ⊂ every type below 32 bits."""
    assert set(SIXTEEN_BIT) == {"fp16", "bf16"}
    assert set(LOW_PRECISION_FLOATS) - set(SIXTEEN_BIT) == {"fp8"}
    assert set(LOW_PRECISION) - set(LOW_PRECISION_FLOATS) == {"int8"}
    assert set(LOW_PRECISION) <= set(PRECISIONS) and "tf32" not in LOW_PRECISION
