"""Packaging for tb-plugin-advisor: the TensorBoard plugin entry point and the tb-advisor CLI."""

from pathlib import Path

from setuptools import Extension, find_packages, setup

HERE = Path(__file__).parent
MCP_SDK = "mcp>=2.3,<3; python_version >= '3.10'"

setup(
    name="tb-plugin-advisor",
    version="0.1.0",
    description=(
        "A TensorBoard 'Advisor' tab and tb-advisor CLI that read TensorFlow/JAX profiles and say "
        "what bounds the step time, whether mixed precision and Tensor Cores are used, and what to change."
    ),
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.9",
    packages=find_packages(include=["tb_plugin_advisor", "tb_plugin_advisor.*"]),
    package_data={"tb_plugin_advisor": ["static/*", "static/**/*", "sample_logdir/**/*"]},
    include_package_data=True,
    # The XLine walker and interval unions in C: optional, so `pip install` from source works
    # without a compiler; numpy then does the same job, slower.
    ext_modules=[
        Extension("tb_plugin_advisor.readers.xplane._wire", ["tb_plugin_advisor/readers/xplane/_wire.c"],
                  optional=True),
        # interval unions for the breakdown, the same way optional (analysis/intervals.py falls back)
        Extension("tb_plugin_advisor.analysis._intervals", ["tb_plugin_advisor/analysis/_intervals.c"],
                  optional=True),
    ],
    install_requires=[
        # TensorBoard's plugin API and file layer (gs://, s3:// via its own filesystems).
        "tensorboard>=2.15",
        # The built-in Profile tab; the Advisor links into it and reads the same runs.
        "tensorboard-plugin-profile>=2.15",
        "werkzeug>=1.0",
        # PyTorch Kineto traces: typed JSON decoding that skips unused fields (memory ≈ file size).
        "msgspec>=0.18",
        # Every protobuf major that tensorboard accepts; the XSpace schema is built at runtime. Not
        # 4.21/4.22: their upb parser segfaults on some corrupt XSpace plane headers
        # (tests/readers/test_fuzz.py found it after other tests had run; 4.23.4 passes the same sequence).
        "protobuf>=4.23,<8",
        # Short kernel names: demangles raw Itanium symbols with the C++ runtime's own __cxa_demangle
        # (ctypes, no build step); without it a symbol keeps the name it opens with.
        "cxxfilt>=0.3",
        # Columnar event storage: per-event Python objects cost ~2 us each on 1 M-event files.
        "numpy>=1.21",
    ],
    extras_require={
        "demo": ["tensorflow-cpu>=2.15"],
        # `tb-advisor report --scheduler tcp://…` / `--advisor_dask_scheduler`: hosts on a Dask cluster.
        "dask": ["dask[distributed]>=2022.1"],
        # s3:// logdirs through TensorBoard's own S3 filesystem (it uses boto3).
        "s3": ["boto3"],
        # `tb-advisor mcp`: the Model Context Protocol server for coding agents. The SDK's major is
        # pinned (its 2.x renamed the server class and changed the client); it needs Python 3.10.
        "mcp": [MCP_SDK],
        # bench/bench_pod.py: process-tree memory sampling, the Dask and S3 modes.
        "bench": ["psutil", "dask[distributed]>=2022.1", "moto[server]>=5", "boto3"],
        "test": [
            "pytest>=7",
            "pytest-timeout",
            "fsspec",
            "ruff",
            "hypothesis>=6",
            "tensorflow-cpu>=2.15",
            "torch==2.13.0",  # the CPU build; newer versions resolve to multi-GB CUDA builds
            # pod scale: a real LocalCluster and a real S3-compatible server on 127.0.0.1
            "dask[distributed]>=2022.1",
            "moto[server]>=5",
            "boto3",
            MCP_SDK,
        ],
    },
    entry_points={
        "tensorboard_plugins": ["advisor = tb_plugin_advisor.plugin:AdvisorLoader"],
        "console_scripts": ["tb-advisor = tb_plugin_advisor.views.cli.main:console_main"],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: Apache Software License",
    ],
)
