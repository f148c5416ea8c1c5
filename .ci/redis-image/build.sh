#!/usr/bin/env bash
# Builds the local image quorumlock/redis:local FROM scratch out of Debian's
# redis-server package (installed on this machine) and its shared libraries.
# Redis picks its mode from argv[0], and /usr/bin/redis-server is a symlink to
# redis-check-rdb: copy it dereferenced under the name redis-server.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tag=${1:-quorumlock/redis:local}
bin=$(readlink -f "$(command -v redis-server)")
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp "$here/Dockerfile" "$ctx/"
mkdir -p "$ctx/rootfs/usr/bin" "$ctx/rootfs/data" "$ctx/rootfs/tmp"
cp -L "$bin" "$ctx/rootfs/usr/bin/redis-server"
for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
  mkdir -p "$ctx/rootfs$(dirname "$lib")"
  cp -L "$lib" "$ctx/rootfs$lib"
done
DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx" >/dev/null
echo "built $tag"
