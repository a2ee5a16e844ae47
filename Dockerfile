# nodewright as a container image (docs/adopt.md): the CLI, the Pulumi program, its components and
# the policy pack, installed from the wheel built out of this source; runs as a non-root user.
#   docker build -t nodewright .
#   docker run --rm -v "$PWD:/repo" nodewright preview --stack dev
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY nodewright ./nodewright
COPY nodewright_pulumi ./nodewright_pulumi
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

FROM ${PYTHON_IMAGE}
# `live` reads a live cluster (--cluster-state live); empty for the offline-only image.
ARG EXTRAS=live
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /dist /dist
RUN set -eu; \
    wheel="$(echo /dist/nodewright-*.whl)"; \
    pip install --no-cache-dir "nodewright[${EXTRAS}] @ file://${wheel}"; \
    rm -rf /dist; \
    useradd --create-home --uid 10001 --user-group nodewright
USER 10001:10001
WORKDIR /repo
ENTRYPOINT ["nodewright"]
CMD ["--help"]
