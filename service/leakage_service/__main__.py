"""``python -m leakage_service``: serve the HTTP API (see ``leakage_service.server``)."""

import sys

from leakage_service.server import main

sys.exit(main())
