"""``/docs`` works offline: Swagger UI's script, style sheet and icon come from the service
itself, not a CDN, and they are served without an API key when keys are configured."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .test_service import Api, settings_for

ASSET_TYPES = {".js": "javascript", ".css": "text/css", ".png": "image/png"}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    home = tmp_path_factory.mktemp("docs")
    a = Api(settings_for(home, default_index, api_keys=["docs-test-key"]))
    yield a
    a.close()


def _page_urls(html: str) -> list[str]:
    """The URLs of the page's src and href attributes and of its inline script's settings
    (the OpenAPI description, the OAuth2 redirect)."""
    attrs = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)
    script = re.findall(r"""(?:url|oauth2RedirectUrl): [^'"\n]*['"]([^'"]+)['"]""", html)
    return attrs + script


def test_docs_page_loads_only_local_assets(api: Api):
    r = api.get("/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    urls = _page_urls(r.text)
    assets = [u for u in urls if u.endswith(tuple(ASSET_TYPES))]
    assert {Path(u).name for u in assets} == {
        "swagger-ui-bundle.js",
        "swagger-ui.css",
        "favicon-32x32.png",
    }, urls
    for url in urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc and url.startswith("/"), url
    assert "/openapi.json" in urls and "/docs/oauth2-redirect" in urls
    # nothing else on the page points elsewhere either (no http://, https:// or //host)
    assert not re.search(r"(?:https?:)?//\w", r.text), r.text


def test_docs_assets_are_served_without_a_key(api: Api):
    html = api.get("/docs").text
    assets = [u for u in _page_urls(html) if u.endswith(tuple(ASSET_TYPES))]
    assert len(assets) == 3
    for url in assets:
        r = api.get(url)
        assert r.status_code == 200, (url, r.status_code, r.text[:200])
        assert ASSET_TYPES[Path(url).suffix] in r.headers["content-type"], url
        assert len(r.content) > 500, url
    bundle = api.get(next(u for u in assets if u.endswith(".js"))).text
    # Swagger UI 5 renders OpenAPI 3.1, the version FastAPI writes (4.x refuses it)
    version = re.search(r'PACKAGE_VERSION:"(\d+)\.', bundle)
    assert version and int(version.group(1)) >= 5
    assert api.get("/openapi.json").json()["openapi"].startswith("3.1")


def test_docs_oauth2_redirect_and_other_paths_keep_the_key(api: Api):
    assert api.get("/docs/oauth2-redirect").status_code == 200
    # the rest of the assets folder is not public; the API still needs the key
    assert api.get("/docs/assets/index.html").status_code == 401
    assert api.get("/v1/backends").status_code == 401
    assert api.get("/v1/backends", headers={"X-API-Key": "docs-test-key"}).status_code == 200
