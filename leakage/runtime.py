"""Where and how models run: the device policy (``auto``, ``cpu``, ``cuda``, ``cuda:N``,
``mps``), the precision a device gets, the one decision of a local model's runtime
(``decide_runtime``: device, precision, and the client, torch or CTranslate2, that the LLM
layer opens and the ensemble's shipped fit follows), and the process set-up every model load
shares.

The public face of ``leakage._runtime`` (its docstring states the policy), for the service,
the benchmarks and other callers outside the library's own modules.
"""

from leakage._runtime import (
    CLIENTS,
    DEVICES,
    ModelRuntime,
    PassBudget,
    RuntimeChoice,
    check_device,
    cpu_isa_capped,
    cpu_name,
    cpu_supports_bf16,
    cuda_may_be_present,
    decide_runtime,
    device_is_cpu,
    device_name,
    open_model_runtime,
    pass_budget,
    prepare_model_runtime,
    resolve_device,
    resolve_precision,
)

__all__ = [
    "CLIENTS",
    "DEVICES",
    "ModelRuntime",
    "PassBudget",
    "RuntimeChoice",
    "check_device",
    "cpu_isa_capped",
    "cpu_name",
    "cpu_supports_bf16",
    "cuda_may_be_present",
    "decide_runtime",
    "device_is_cpu",
    "device_name",
    "open_model_runtime",
    "pass_budget",
    "prepare_model_runtime",
    "resolve_device",
    "resolve_precision",
]
