# The image the Helm chart runs: ragpulse installed as a wheel, as a non-root user (uid 10001, the
# chart's podSecurityContext), with a read-only root filesystem in mind (writes go to /var/lib/ragpulse
# and /tmp, volumes in the chart). Build: docker build -t ragpulse:0.1.0 .
FROM python:3.11-slim
WORKDIR /src
COPY . .
# With the confluent extra, so that kafka.client: confluent-kafka works from the chart's values (it is
# imported only when chosen). Not embeddings (torch: gigabytes); tests/test_helm.py checks this list.
RUN pip install --no-cache-dir ".[confluent]" && rm -rf /src
RUN useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin ragpulse && mkdir -p /var/lib/ragpulse \
    && chown 10001:10001 /var/lib/ragpulse
USER 10001
WORKDIR /var/lib/ragpulse
EXPOSE 8080 4317 4318
ENTRYPOINT ["ragpulse"]
CMD ["run"]
