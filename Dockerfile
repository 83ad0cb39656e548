# Images of the three programs, one target each, from one multi-stage build:
#   docker build --target adapter    -t gpuscale-adapter .
#   docker build --target reconciler -t gpuscale-reconciler .
#   docker build --target sim        -t gpuscale-sim .
# (podman/buildah the same; scripts/build-images.sh builds all three and, where no registry can be
# reached, first makes the Debian base images from Debian packages.)
#
# The build stage compiles on Debian bookworm with the project's setup script and CMake; each
# runtime image is bookworm-slim with only the shared libraries the programs link, the stripped
# binary, and a numeric non-root user. The `*-prebuilt` targets take binaries already built on
# bookworm from prebuilt/<program>/ in the build context instead of compiling them again (what
# scripts/build-images.sh --prebuilt stages); everything else about the image is the same.
# scripts/build-images.sh passes the VERSION file's version and the git commit.
ARG VERSION=unknown
ARG REVISION=unknown
ARG SOURCE=unknown

FROM debian:bookworm AS build
ENV DEBIAN_FRONTEND=noninteractive GPUSCALE_SKIP_CLUSTER_BUILD=1 GPUSCALE_SETUP=build
WORKDIR /src
COPY scripts/setup.sh scripts/setup.sh
RUN scripts/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCALE_BENCH=OFF \
 && cmake --build build --target gpuscale-adapter gpuscale-reconciler gpuscale-sim \
 && install -D -s -m 0755 build/bin/gpuscale-adapter /out/adapter/usr/local/bin/gpuscale-adapter \
 && install -D -m 0644 rules/triton.yaml /out/adapter/etc/adapter/config.yaml \
 && install -D -s -m 0755 build/bin/gpuscale-reconciler \
      /out/reconciler/usr/local/bin/gpuscale-reconciler \
 && install -D -s -m 0755 build/bin/gpuscale-sim /out/sim/usr/local/bin/gpuscale-sim

FROM debian:bookworm-slim AS runtime
ARG VERSION
ARG REVISION
ARG SOURCE
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends ca-certificates libssl3 libcpprest2.10 \
      libbrotli1 libyaml-cpp0.7 libfmt9 libspdlog1.10 libre2-9 libprometheus-cpp-core1.0 zlib1g \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log
# licenses: gpuscale's own; the Debian packages' are in /usr/share/doc/*/copyright and the
# release's SBOM.
LABEL org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="gpuscale" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim"
USER 65532:65532

# The adapter: serving certificate generated into --cert-dir (an emptyDir in the Deployment).
FROM runtime AS adapter-runtime
LABEL org.opencontainers.image.title="gpuscale-adapter" \
      org.opencontainers.image.description="Custom and external metrics API server for Kubernetes, driven by prometheus-adapter rules"
EXPOSE 6443 9100
ENTRYPOINT ["/usr/local/bin/gpuscale-adapter"]
CMD ["--secure-port=6443", "--cert-dir=/var/run/serving-cert", "--config=/etc/adapter/config.yaml"]

FROM runtime AS reconciler-runtime
LABEL org.opencontainers.image.title="gpuscale-reconciler" \
      org.opencontainers.image.description="Reshapes GPU partitions so HPAs of GPU workloads can scale"
EXPOSE 8081 8443
ENTRYPOINT ["/usr/local/bin/gpuscale-reconciler"]
CMD ["run"]

FROM runtime AS sim-runtime
LABEL org.opencontainers.image.title="gpuscale-sim" \
      org.opencontainers.image.description="Emulated GPU Operator, DCGM exporter and inference servers for tests"
ENTRYPOINT ["/usr/local/bin/gpuscale-sim"]

FROM adapter-runtime AS adapter-prebuilt
COPY prebuilt/adapter/ /

FROM reconciler-runtime AS reconciler-prebuilt
COPY prebuilt/reconciler/ /

FROM sim-runtime AS sim-prebuilt
COPY prebuilt/sim/ /

FROM sim-runtime AS sim
COPY --from=build /out/sim/ /

FROM reconciler-runtime AS reconciler
COPY --from=build /out/reconciler/ /

FROM adapter-runtime AS adapter
COPY --from=build /out/adapter/ /
