# psdlearn on Debian with the native libraries. Build: docker build -t psdlearn .
# Run the demo: docker run --rm psdlearn demo
FROM golang:1.24-bookworm AS build
WORKDIR /src
COPY third_party/install-deps.sh third_party/
RUN bash third_party/install-deps.sh
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -o /out/psdlearn ./cmd/psdlearn

FROM debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      libopenblas0-pthread liblapacke libarpack2 libgfortran5 coinor-libclp1 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/psdlearn /usr/local/bin/psdlearn
ENTRYPOINT ["psdlearn"]
