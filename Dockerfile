# The ledger's command-line tool and HTTP service. Built by docker-compose.yml; see the README.
FROM swift:6.2-noble AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends libpq-dev pkg-config && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product ledger --static-swift-stdlib \
    && bin="$(swift build -c release --show-bin-path)" \
    && mkdir -p /out && cp "$bin/ledger" /out/ && cp -r "$bin"/*.resources /out/

FROM ubuntu:24.04
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends libpq5 ca-certificates curl && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home /app ledger
# The binary with its resource bundles (the migrations) beside it.
COPY --from=build /out/ /app/
USER ledger
WORKDIR /app
EXPOSE 8080
ENTRYPOINT ["/app/ledger"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
