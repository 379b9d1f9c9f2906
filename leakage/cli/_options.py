"""Command-line options that several commands share, declared once, and the fixed sets of
values that options take.

An option that takes one of a fixed set of values is typed as a ``Literal`` of them: a bad
value is a usage error (exit code 2, one line naming the option and its choices) before
anything runs, and ``--help`` lists the choices: in the value column when they are short
(``<known|marginalise>``), else in the help text (``choices``), so that the column stays
narrow. The sets mirror the library's registries and constants (tests/test_cli.py checks
that they agree).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, get_args

import typer

Backend = Literal["cooccurrence", "embedding", "ensemble", "judge", "listener"]
"""``leakage.backends.backend_names()``."""
InputFormat = Literal["auto", "leakage", "ck-arena", "spygame-liang"]
"""``leakage.transcripts.INPUT_FORMATS``."""
SpyAssignment = Literal["known", "marginalise"]
"""``ScoreOptions.spy_assignment``."""
CountSource = Literal["local", "serpapi", "google-cse", "infini-gram"]
"""``local`` and ``leakage.backends.cooccurrence.web.WEB_SOURCES``."""
Estimator = Literal["conditional", "npmi", "ngd"]
"""``leakage.backends.cooccurrence.ESTIMATORS``."""
Pooling = Literal["mean", "sum"]
"""``leakage.backends.cooccurrence._backend.POOLINGS``."""
JudgeMode = Literal["likelihood", "elicitation"]
"""``leakage.backends.judge.MODES``."""
Precision = Literal["auto", "fp32", "bf16"]
"""``leakage._runtime.resolve_precision``."""
Normaliser = Literal["exact", "shortlist"]
"""``leakage.llm._local.NORMALISERS``."""
Direction = Literal["speaker", "listener"]
"""``leakage.backends.judge.DIRECTIONS``."""


def choices(kind: Any) -> str:
    """The values of a ``Literal`` type for a help text: ``a, b or c``."""
    values = get_args(kind)
    return ", ".join(values[:-1]) + f" or {values[-1]}" if len(values) > 1 else values[0]


BackendOption = Annotated[
    Backend,
    typer.Option(
        "--backend", "-b", metavar="<name>", help=f"Likelihood backend: {choices(Backend)}."
    ),
]
InputFormatOption = Annotated[
    InputFormat,
    typer.Option(
        metavar="<format>",
        help=f"Format of the inputs: {choices(InputFormat)} (auto: recognised by their shape).",
    ),
]
IncludeChameleonOption = Annotated[
    bool, typer.Option(help="Chameleon: let the chameleon's turns update the posterior too.")
]
SpyAssignmentOption = Annotated[
    SpyAssignment,
    typer.Option(help="SpyGame spy posterior: the civilian word is known, or marginalise over it."),
]
BackendOptionsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--backend-option",
        "-O",
        metavar="KEY=VALUE",
        help="Any backend option as KEY=VALUE (repeat), e.g. -O beta=10 -O source=serpapi; "
        'an ensemble member\'s own: -O \'embedding={"model": "BAAI/bge-m3"}\'.',
    ),
]


def parse_backend_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` backend options; a VALUE that is JSON (numbers, true, lists, objects) is
    parsed, anything else is text. ``-`` in a KEY is ``_`` (``-O cache-path=x``)."""
    import json

    from leakage.errors import InvalidInput

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"--backend-option expects KEY=VALUE, got {pair!r}")
        try:
            out[key.strip().replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip().replace("-", "_")] = value
    return out


def backend_options(
    backend: str,
    pairs: Sequence[str] | None,
    flags: Mapping[str, tuple[str, Any]],
    *,
    count_endpoint: str | None = None,
    llm_endpoint: str | None = None,
) -> dict[str, Any]:
    """The options of ``backend``: the ``-O`` pairs, with the typed flags the user gave merged
    in (``flags``: option name -> (flag, value)), all checked later against the factory
    (``create_backend``): a flag the backend does not take is an error, not ignored. For the
    ensemble, its factory routes them to the members (``route_options``).

    Both endpoint flags set an ``endpoint`` option: ``--endpoint`` (``count_endpoint``) that
    of a backend with a count source (its factory takes ``source``), ``--llm-endpoint`` that
    of one without (an LLM's). In an ensemble each goes to those members only.
    """
    from leakage.backends.base import _REGISTRY, accepted_options
    from leakage.errors import InvalidInput

    options = parse_backend_options(pairs or [])
    for key, (flag, value) in flags.items():
        if key in options:
            raise InvalidInput(f"option {key!r} is given twice: by {flag} and by -O {key}=...")
        options[key] = value
    endpoints = [
        (flag, value, counts)
        for flag, value, counts in (
            ("--endpoint", count_endpoint, True),
            ("--llm-endpoint", llm_endpoint, False),
        )
        if value is not None
    ]
    if not endpoints:
        return options
    if "endpoint" in options:
        raise InvalidInput(f"option 'endpoint' is given twice: by {endpoints[0][0]} and by -O")

    def fits(name: str, counts: bool) -> bool:
        named, _ = accepted_options(_REGISTRY[name])
        return "endpoint" in named and ("source" in named) == counts

    if backend != "ensemble" or backend not in _REGISTRY:
        for flag, value, counts in endpoints:
            if backend in _REGISTRY and not fits(backend, counts):
                what = "the web count API's" if counts else "an LLM endpoint's"
                other = "--llm-endpoint" if counts else "--endpoint"
                raise InvalidInput(
                    f"{flag} is {what} base URL, and backend {backend!r} has none "
                    f"(did you mean {other}?)"
                )
            options["endpoint"] = value
        return options
    for flag, value, counts in endpoints:  # to the members it is for (ignored by the others)
        for name in _REGISTRY:
            if name != "ensemble" and fits(name, counts):
                own = options.setdefault(name, {})
                if not isinstance(own, dict):
                    raise InvalidInput(f"-O {name}=... must be a JSON object of its options")
                if "endpoint" in own:
                    raise InvalidInput(f"{name}'s endpoint is given twice: by {flag} and by -O")
                own["endpoint"] = value
    return options
