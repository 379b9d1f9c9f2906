"""Agents: plain callables over an observation (scripted strategies, LLM players, and the
leakage-aware non-chameleon)."""

from leakage.games.agents._association import (
    AssociationTable,
    AssociationTables,
    build_table,
    clue_vocabulary,
)
from leakage.games.agents._spec import AgentFactory, parse_spec
from leakage.games.agents.cheatsheet import Cheatsheet, CheatsheetAgent
from leakage.games.agents.leakage_aware import (
    LeakageAwareAgent,
    LeakageOracle,
    LibraryOracle,
    ServiceOracle,
    TableOracle,
)
from leakage.games.agents.llm import ChameleonLLMAgent, ChameleonPrompts, SpyLLMAgent, SpyPrompts
from leakage.games.agents.pgm import PGMSpyLLMAgent, PGMSpyPlayer
from leakage.games.agents.pgm_chameleon import PGMChameleonLLMAgent, PGMChameleonPlayer
from leakage.games.agents.posterior import PosteriorChameleon
from leakage.games.agents.scripted import (
    AmbiguousAgent,
    ConcealingAgent,
    CopyingChameleon,
    RandomChameleon,
    RevealingAgent,
    TrivialAgent,
)
from leakage.games.agents.spy import AssociativeSpyPlayer

__all__ = [
    "AgentFactory",
    "AmbiguousAgent",
    "AssociationTable",
    "AssociationTables",
    "AssociativeSpyPlayer",
    "ChameleonLLMAgent",
    "ChameleonPrompts",
    "Cheatsheet",
    "CheatsheetAgent",
    "ConcealingAgent",
    "CopyingChameleon",
    "LeakageAwareAgent",
    "LeakageOracle",
    "LibraryOracle",
    "PGMChameleonLLMAgent",
    "PGMChameleonPlayer",
    "PGMSpyLLMAgent",
    "PGMSpyPlayer",
    "PosteriorChameleon",
    "RandomChameleon",
    "RevealingAgent",
    "ServiceOracle",
    "SpyLLMAgent",
    "SpyPrompts",
    "TableOracle",
    "TrivialAgent",
    "build_table",
    "clue_vocabulary",
    "parse_spec",
]
