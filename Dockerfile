# The image the Helm chart runs: ragpulse installed as a wheel, as a non-root user (uid 10001, the
# chart's podSecurityContext), with a read-only root filesystem in mind (writes go to /var/lib/ragpulse
# and /tmp, volumes in the chart). Build: docker build -t ragpulse:0.1.0 .
# The wheel is built in a stage with a Rust toolchain (the compiled core, native/, needs Rust 1.85+ for PyO3);
# the image gets the wheels only.
FROM rust:1.85-slim-bookworm AS rust

FROM python:3.11-slim AS build
COPY --from=rust /usr/local/cargo /usr/local/cargo
COPY --from=rust /usr/local/rustup /usr/local/rustup
ENV CARGO_HOME=/usr/local/cargo RUSTUP_HOME=/usr/local/rustup PATH=/usr/local/cargo/bin:$PATH
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --wheel-dir /wheels ".[confluent,report]"

FROM python:3.11-slim
COPY --from=build /wheels /wheels
# With the confluent extra, so that kafka.client: confluent-kafka works from the chart's values (it is
# imported only when chosen). Not embeddings (torch: gigabytes); tests/test_helm.py checks this list.
RUN pip install --no-cache-dir --no-index --find-links /wheels "ragpulse[confluent,report]" && rm -rf /wheels
RUN useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin ragpulse && mkdir -p /var/lib/ragpulse \
    && chown 10001:10001 /var/lib/ragpulse
USER 10001
WORKDIR /var/lib/ragpulse
EXPOSE 8080 4317 4318
ENTRYPOINT ["ragpulse"]
CMD ["run"]
