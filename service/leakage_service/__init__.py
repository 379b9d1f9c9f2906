"""The HTTP service: a thin FastAPI layer over the library (``leakage serve``).

Needs the ``service`` extra (fastapi, uvicorn, prometheus-client, python-multipart, pyarrow).
"""

from leakage_service.app import create_app
from leakage_service.settings import Settings, get_settings

__all__ = ["Settings", "create_app", "get_settings"]
