"""Command-line options that several commands share, declared once, and the sets of values
that options take.

An option that takes one of a set of values is a usage error (exit code 2, one line naming
the option and its choices) for any other value, before anything runs, and ``--help`` lists
the choices: in the value column when they are short (``<known|marginalise>``), else in the
help text, so that the column stays narrow. Two kinds:

- A fixed set is typed as a ``Literal`` of it; the sets mirror the library's constants
  (tests/test_cli.py checks that they agree).
- Names that a library registry lists (backends, count sources, input formats, the roles of
  the games) are ``Names``: asked of the library when the command parses its options or
  shows its help (``NamesCommand``), never when the command line starts, so that a backend
  or a count source an installed distribution adds is offered too, and ``leakage --help``
  loads no library.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, get_args

import typer
from typer.core import TyperCommand
from typer.models import ParameterInfo

SpyAssignment = Literal["known", "marginalise"]
"""``ScoreOptions.spy_assignment``."""
Seat = Literal[
    "outside-known",
    "outside-pair",
    "civilian",
    "spy",
    "chameleon",
    "non-chameleon",
    "known",
    "marginalise",
]
"""``leakage.seats.SEAT_NAMES``: ``ScoreOptions.seat``."""
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
Lessons = Literal["llm", "rules", "auto"]
"""``leakage.games.agents.AgentFactory.lessons``: who writes a cheatsheet agent's lessons."""


def choices(kind: Any) -> str:
    """The values of a ``Literal`` type (or a list of names) for a help text: ``a, b or c``."""
    values = tuple(get_args(kind)) if typing.get_origin(kind) is Literal else tuple(kind)
    return ", ".join(values[:-1]) + f" or {values[-1]}" if len(values) > 1 else values[0]


class Names:
    """The values an option takes, as a library registry lists them when the command runs.

    It is the option's ``parser``: a value not among ``names()`` is a usage error naming
    them. ``help`` is the option's help text, ``{names}`` standing for them; ``NamesCommand``
    puts them in when the command shows its help. ``names`` is called once, the first time
    the command parses the option (its default included) or shows its help.
    """

    def __init__(self, help: str, names: Callable[[], Sequence[str]]) -> None:
        self.template = help
        self._names = names
        self._values: tuple[str, ...] | None = None

    def values(self) -> tuple[str, ...]:
        if self._values is None:
            self._values = tuple(self._names())
        return self._values

    def help(self) -> str:
        return self.template.format(names=choices(self.values()))

    def __call__(self, value: str) -> str:
        if value not in self.values():
            raise typer.BadParameter(
                f"{value!r} is not one of {', '.join(map(repr, self.values()))}."
            )
        return value


class NamesCommand(TyperCommand):
    """A command whose help lists the values of its ``Names`` options (asked of the library
    when the help is shown, not when the command line starts)."""

    _named = False

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)
        if not self._named and self.callback is not None:
            self._named = True
            hints = typing.get_type_hints(inspect.unwrap(self.callback), include_extras=True)
            for param in params:
                for info in getattr(hints.get(param.name or ""), "__metadata__", ()):
                    if isinstance(info, ParameterInfo) and isinstance(info.parser, Names):
                        param.help = info.parser.help()
        return params


def _backends() -> list[str]:
    from leakage.backends import backend_names

    return backend_names()


def _count_sources() -> list[str]:
    from leakage.backends.cooccurrence import count_source_names

    return count_source_names()


def _input_formats() -> tuple[str, ...]:
    from leakage.transcripts import input_formats

    return input_formats()


def _roles() -> list[str]:
    from leakage.games.chameleon import ROLES as CHAMELEON
    from leakage.games.spygame import ROLES as SPYGAME

    return [*CHAMELEON, *SPYGAME]


BACKENDS = Names("Likelihood backend: {names}.", _backends)
"""``leakage.backends.backend_names()``."""
COUNT_SOURCES = Names("Count source: {names}.", _count_sources)
"""``leakage.backends.cooccurrence.count_source_names()``."""
INPUT_FORMATS = Names(
    "Format of the inputs: {names} (auto: recognised by their shape).", _input_formats
)
"""``leakage.transcripts.input_formats()``."""
ROLES = Names("The role whose player gets a cheatsheet: {names}.", _roles)
"""The roles of the games (``leakage.games.chameleon.ROLES``, ``spygame.ROLES``)."""


def names_option(names: Names, *decls: str, metavar: str) -> Any:
    """A ``typer.Option`` taking one of ``names`` (its command is a ``NamesCommand``)."""
    static = names.template.format(names="one of those installed")  # until NamesCommand's
    return typer.Option(*decls, metavar=metavar, parser=names, help=static)


BackendOption = Annotated[str, names_option(BACKENDS, "--backend", "-b", metavar="<name>")]
InputFormatOption = Annotated[str, names_option(INPUT_FORMATS, metavar="<format>")]
CountSourceOption = Annotated[str, names_option(COUNT_SOURCES, metavar="<source>")]
IncludeChameleonOption = Annotated[
    bool, typer.Option(help="Chameleon: let the chameleon's turns update the posterior too.")
]
SpyAssignmentOption = Annotated[
    SpyAssignment,
    typer.Option(help="SpyGame spy posterior: the civilian word is known, or marginalise over it."),
]
SeatOption = Annotated[
    Seat | None,
    typer.Option(
        metavar="<seat>",
        help="Whose posterior (docs/games.md, Seats): SpyGame outside-known, outside-pair, "
        "civilian or spy; The Chameleon chameleon or non-chameleon (known / marginalise: "
        "the outside seats' old names). Default: the game's own default seat.",
    ),
]
SeatVocabularyOption = Annotated[
    str | None,
    typer.Option(
        help="Seats spy / civilian: the open vocabulary (wordfreq:N, a word file or a "
        "vocabulary index directory; default wordfreq:50000)."
    ),
]
SeatShortlistOption = Annotated[
    int | None,
    typer.Option(min=1, help="Seats spy / civilian: words re-ranked per statement (100)."),
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


def _device(value: str) -> str:
    """A ``--device`` value, checked before anything loads (``leakage._runtime.check_device``:
    imports no model runtime); whether that device is there is asked when a model loads."""
    from leakage._runtime import check_device

    try:
        return check_device(value)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None


DEVICE_HELP = (
    "Where models run: auto (a CUDA GPU when torch sees one, else the CPU), cpu, cuda, "
    "cuda:N or mps; one that is not there stops with exit code 3."
)
DeviceOption = Annotated[
    str, typer.Option("--device", metavar="<device>", parser=_device, help=DEVICE_HELP)
]
"""``--device``: the device policy of ``leakage._runtime`` for every model a command loads."""


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
    from leakage.backends.base import BACKENDS as FACTORIES
    from leakage.backends.base import accepted_options
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
        named, _ = accepted_options(FACTORIES[name])
        return "endpoint" in named and ("source" in named) == counts

    if backend != "ensemble" or backend not in FACTORIES:
        for flag, value, counts in endpoints:
            if backend in FACTORIES and not fits(backend, counts):
                what = "the web count API's" if counts else "an LLM endpoint's"
                other = "--llm-endpoint" if counts else "--endpoint"
                raise InvalidInput(
                    f"{flag} is {what} base URL, and backend {backend!r} has none "
                    f"(did you mean {other}?)"
                )
            options["endpoint"] = value
        return options
    for flag, value, counts in endpoints:  # to the members it is for (ignored by the others)
        for name in FACTORIES:
            if name != "ensemble" and fits(name, counts):
                own = options.setdefault(name, {})
                if not isinstance(own, dict):
                    raise InvalidInput(f"-O {name}=... must be a JSON object of its options")
                if "endpoint" in own:
                    raise InvalidInput(f"{name}'s endpoint is given twice: by {flag} and by -O")
                own["endpoint"] = value
    return options


def with_variables(backend: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the library's variables the command line's settings read
    (:func:`leakage.cli.cli_variables`) as the ``variables`` option of the backend or of its
    members (:func:`leakage.backends.base.with_variables`): the count sources and the LLM
    endpoint take their keys from the command line, and the library reads no environment."""
    from leakage.backends.base import with_variables as add
    from leakage.cli import cli_variables

    return add(backend, options, cli_variables())
