"""The LLM layer: local causal LMs (transformers) and OpenAI-compatible endpoints (httpx).

``open_llm`` picks a client by kind (``LLM_CLIENTS``: ``local``, ``openai``, or a kind an
installed distribution registers in the entry-point group ``leakage.llm_clients``)."""

from typing import TYPE_CHECKING

from leakage.llm._base import (
    Generation,
    GenerationOptions,
    GenerationParams,
    LLMClient,
    Message,
    SupportsScoreEach,
    SupportsScoreGroups,
    SupportsScoreMany,
    SupportsTokenizer,
    Usage,
)
from leakage.llm._open import (
    DEFAULT_LOCAL_MODEL,
    LLM_CLIENTS,
    default_local_kind,
    open_llm,
    register_llm_client,
)

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "LLM_CLIENTS",
    "Generation",
    "GenerationOptions",
    "GenerationParams",
    "LLMClient",
    "Message",
    "SupportsScoreEach",
    "SupportsScoreGroups",
    "SupportsScoreMany",
    "SupportsTokenizer",
    "Usage",
    "default_local_kind",
    "open_llm",
    "register_llm_client",
]

# Remote clients load httpx and tenacity: imported on first use, not with the package.
_LAZY = {"OpenAICompatibleClient": "leakage.llm._remote"}
__all__ += ["OpenAICompatibleClient"]
# The local model imports torch and transformers only when one is built; the module is still
# loaded on first use, like the remote client.
_LAZY["LocalLM"] = "leakage.llm._local"
__all__ += ["LocalLM"]
# Where a local model's weights come from (a bundled name, a GGUF file, a folder, a hub name).
_LAZY.update(ModelSource="leakage.llm._gguf", resolve_source="leakage.llm._gguf")
__all__ += ["ModelSource", "resolve_source"]

if TYPE_CHECKING:
    from leakage.llm._gguf import ModelSource, resolve_source
    from leakage.llm._local import LocalLM
    from leakage.llm._remote import OpenAICompatibleClient


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
