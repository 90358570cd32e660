# psdlearn with its native backend (OpenBLAS, LAPACKE, arpack-ng, L-BFGS-B,
# CLP) on Debian 12 (bookworm), the system the cgo bindings are written and
# tested against (third_party/README.md).
#
#   docker build -t psdlearn .
#   docker build --build-arg VERSION=v1.2.3 -t psdlearn:v1.2.3 .
#   docker run --rm psdlearn version
#   docker run --rm psdlearn demo --quick
#   docker run --rm -v "$PWD:/work" psdlearn train --algo frobmetric --data data.csv --out model.json
#   docker run --rm -i -v "$PWD:/work" psdlearn transform --model model.json --data - < new.csv > z.csv
#
# The container runs as the unprivileged user psdlearn (uid 10001); files it
# writes into a mounted directory need that directory writable by uid 10001
# (or pass --user "$(id -u):$(id -g)").

# Build stage: go.mod requires go 1.26, so the toolchain image is 1.26 on
# bookworm (any 1.26.x satisfies "go 1.26.0").
FROM golang:1.26-bookworm AS build
WORKDIR /src
# The -dev packages the cgo bindings compile and link against, installed by
# the same script developers and CI use (so the lists cannot drift apart).
COPY third_party/install-deps.sh third_party/
RUN bash third_party/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION, if given, is what `psdlearn version` prints (.git is not in the
# build context, see .dockerignore, so there is no VCS stamp to read).
ARG VERSION=""
RUN CGO_ENABLED=1 go build -trimpath -buildvcs=false -ldflags "-X main.version=${VERSION}" -o /out/psdlearn ./cmd/psdlearn \
    && /out/psdlearn version

# Runtime stage: only the shared libraries the binary loads (L-BFGS-B is
# linked statically; liblapacke pulls libtmglib3, coinor-libclp1 pulls
# coinor-libcoinutils3v5), the run-time halves of install-deps.sh's -dev
# packages.
FROM debian:bookworm-slim
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       libopenblas0-pthread liblapacke libarpack2 libgfortran5 coinor-libclp1 \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 psdlearn \
    && useradd --system --uid 10001 --gid psdlearn --home-dir /work --create-home --shell /usr/sbin/nologin psdlearn
COPY --from=build /out/psdlearn /usr/local/bin/psdlearn
USER 10001:10001
WORKDIR /work
# Fails the build if a shared library is missing (the binary would not
# start) or the native backend did not register.
RUN psdlearn version && psdlearn version | grep -q 'backends: .*native'
ENTRYPOINT ["psdlearn"]
CMD ["help"]
