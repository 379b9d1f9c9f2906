"""TextArena: leakage scored while a Taboo game is played, and Taboo game logs in.

:class:`TabooLeakageWrapper` wraps a TextArena Taboo environment (``ta.make("Taboo-v0")``
and its category variants): each message of the clue giver is scored with a leakage backend
as the game goes, the posterior over the category's words added to the step's info under
``"leakage"``, and the game written as a ``leakage.textarena-taboo/1`` log that ``leakage
score`` reads (input format ``textarena-taboo``). See docs/textarena.md.

Importing this package does not import textarena; :class:`TabooLeakageWrapper` does, on
first use.
"""

from typing import TYPE_CHECKING

INSTALL_HINT = "pip install 'leakage[textarena]'"

__all__ = ["INSTALL_HINT", "TabooLeakageWrapper"]

if TYPE_CHECKING:
    from leakage.textarena._wrapper import TabooLeakageWrapper
else:

    def __getattr__(name: str) -> object:
        if name == "TabooLeakageWrapper":
            try:
                import textarena  # noqa: F401
            except ModuleNotFoundError as err:
                raise ModuleNotFoundError(
                    f"leakage's TextArena wrapper needs textarena: {INSTALL_HINT}"
                ) from err
            from leakage.textarena._wrapper import TabooLeakageWrapper

            return TabooLeakageWrapper
        raise AttributeError(f"module 'leakage.textarena' has no attribute {name!r}")
