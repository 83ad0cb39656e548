# gpuscale-adapter image: built on Debian bookworm with the same setup script and CMake build as a
# developer machine, then copied into a slim bookworm runtime with only the shared libraries it needs.
#   docker build -t gpuscale-adapter:latest .
FROM debian:bookworm AS build
ENV DEBIAN_FRONTEND=noninteractive GPUSCALE_SKIP_CLUSTER_BUILD=1
WORKDIR /src
COPY scripts/setup.sh scripts/setup.sh
RUN scripts/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCALE_BENCH=OFF \
 && cmake --build build --target gpuscale-adapter \
 && install -D -m 0755 build/bin/gpuscale-adapter /out/usr/local/bin/gpuscale-adapter \
 && install -D -m 0644 rules/triton.yaml /out/etc/adapter/config.yaml

FROM debian:bookworm-slim
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends ca-certificates libssl3 libcpprest2.10 \
      libboost-system1.74.0 libyaml-cpp0.7 libfmt9 libspdlog1.10 libre2-9 \
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/ /
# The serving certificate is generated into --cert-dir (an emptyDir in the Deployment).
USER 65532:65532
EXPOSE 6443 9100
ENTRYPOINT ["/usr/local/bin/gpuscale-adapter"]
CMD ["--secure-port=6443", "--cert-dir=/var/run/serving-cert", "--config=/etc/adapter/config.yaml"]
