"""Where and how models run: the device policy (``auto``, ``cpu``, ``cuda``, ``cuda:N``,
``mps``), the precision a device gets, and the process set-up every model load shares.

The public face of ``leakage._runtime`` (its docstring states the policy), for the service,
the benchmarks and other callers outside the library's own modules.
"""

from leakage._runtime import (
    DEVICES,
    ModelRuntime,
    PassBudget,
    check_device,
    cpu_isa_capped,
    cpu_name,
    cpu_supports_bf16,
    cuda_may_be_present,
    device_is_cpu,
    device_name,
    open_model_runtime,
    pass_budget,
    prepare_model_runtime,
    resolve_device,
    resolve_precision,
)

__all__ = [
    "DEVICES",
    "ModelRuntime",
    "PassBudget",
    "check_device",
    "cpu_isa_capped",
    "cpu_name",
    "cpu_supports_bf16",
    "cuda_may_be_present",
    "device_is_cpu",
    "device_name",
    "open_model_runtime",
    "pass_budget",
    "prepare_model_runtime",
    "resolve_device",
    "resolve_precision",
]
