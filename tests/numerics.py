"""How far apart two floats computed from the same numbers may honestly be.

Tests compare numbers that one computation gives in two ways: a prompt scored beside one
clue and then beside two (another batch shape), from a cache or afresh, on one thread or
several, by FAISS or by numpy, in bf16 or in fp32. The arithmetic is the same; the order of
the floating-point operations is not (a BLAS kernel blocks a matrix product by its shape, by
the CPU's vector width and by the thread count), and every order rounds differently. So the
results agree up to rounding error, and how much that is follows from the numbers, not from
what one machine happened to give:

* one rounding to a format with unit roundoff ``u`` (half its machine epsilon: 2**-24 for
  fp32, 2**-8 for bf16, 2**-53 for float64) is off by at most ``u`` relative;
* a sum of ``n`` terms is off by at most ``n u Σ|x_i|`` in the worst case, and by about
  ``λ √n u Σ|x_i|`` when the roundings behave like independent zero-mean errors, as they do
  in practice: the probabilistic bound of Higham & Mary (SIAM J. Sci. Comput. 41(5), 2019)
  and Ipsen & Zhou (2020), exceeded with a probability that falls like exp(-λ²/2);
* a value that passes through several such sums in turn (a network's layers) collects one
  such error per stage, independent of each other, so they add in quadrature; the last
  rounding of each stage is to the format the result is stored in (bf16 results are
  accumulated in fp32 on the CPU and rounded to bf16 once);
* two evaluations in different orders are each within the bound of the exact value, so
  within twice the bound of each other.

The scale of the errors is the size of the values compared (``Σ|x_i|`` of a dot product of
unit vectors is at most 1; a log-probability of ten nats comes from logits of that size).
For a network this is an estimate, not a proof (normalisations damp errors, cancellation
can amplify them), and a pessimistic one: with ``LAMBDA`` = 2 the largest difference
measured between two orders of the local LLMs' scoring was 0.17 of the tolerance in fp32
(1 and 2 threads, torch's generic and AVX2 kernels, MKL's default and compatible paths) and
0.09 in bf16. In fp32 the tolerance is about 1e-3 at ten nats, and scoring after another
prompt's cached states is off by 500 to 5,000 times that; in bf16 it is 2 to 3 nats, too
coarse to tell such a fault from rounding, which is why exactness is tested in fp32.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

LAMBDA = 2.0
"""Multiple of the random-walk estimate λ √n u taken as the bound of one sum."""

_UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "bfloat16": 2.0**-8,
    "float16": 2.0**-11,
}
_ALIASES = {"fp64": "float64", "fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def unit_roundoff(dtype: Any) -> float:
    """``u`` of a format named like numpy or torch (``float32``, ``torch.bfloat16``) or like
    the ``precision`` options (``fp32``, ``bf16``)."""
    name = str(dtype).removeprefix("torch.")
    name = _ALIASES.get(name, name)
    if name not in _UNIT_ROUNDOFF:
        name = str(np.dtype(name))
    return _UNIT_ROUNDOFF[name]


def rounding_bound(dtype: Any, reductions: Sequence[int], scale: float) -> float:
    """Probable bound on the rounding error of one evaluation of a value of size ``scale``
    that passes through sums of ``reductions[i]`` terms in turn (1 for an elementwise
    operation), each stored in ``dtype``; bf16 and fp16 sums are accumulated in fp32, as CPU
    kernels do."""
    u_store = unit_roundoff(dtype)
    u_acc = min(u_store, _UNIT_ROUNDOFF["float32"])
    per_stage = ((math.sqrt(n) * u_acc + u_store) ** 2 for n in reductions)
    return LAMBDA * scale * math.sqrt(sum(per_stage))


def reorder_tolerance(dtype: Any, reductions: Sequence[int], scale: float) -> float:
    """How far apart two evaluations of the same value may be when they differ only in the
    order of their operations (batch shape, cache, threads, kernel): twice the bound."""
    return 2 * rounding_bound(dtype, reductions, scale)
