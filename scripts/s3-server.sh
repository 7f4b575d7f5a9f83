#!/usr/bin/env bash
# Installs the S3-compatible server that the S3 session store's tests start
# on 127.0.0.1 (internal/s3test): SeaweedFS's `weed`, built from its Go
# module at a pinned version, into a cache directory outside the repository:
#
#	~/.cache/git-ctx/s3-server/<version>/weed
#
# Idempotent: with the binary in place it does nothing. The module's go.mod
# has replace directives, which `go install module@version` refuses, so the
# script builds inside the module's directory of the module cache (read
# only; the binary goes to the cache directory). A cold build compiles a
# few hundred packages: minutes on a small machine (see README, "S3 store").
# Tests without the binary skip, except under CI=true, where they fail.
set -euo pipefail

GO=${GO:-go}
MODULE=github.com/seaweedfs/seaweedfs
VERSION=v0.0.0-20261109003541-7506e5f91cd6 # keep equal to internal/s3test.Version
dest="${HOME}/.cache/git-ctx/s3-server/${VERSION}"
bin="${dest}/weed"

if [ -x "$bin" ]; then
	echo "s3-server: $bin is installed"
	exit 0
fi

echo "s3-server: building $MODULE/weed@$VERSION into $dest"
start=$(date +%s)
src=$("$GO" mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
if [ -z "$src" ] || [ ! -d "$src/weed" ]; then
	echo "s3-server: could not download $MODULE@$VERSION" >&2
	exit 1
fi
mkdir -p "$dest"
tmp="${dest}/weed.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd "$src" && "$GO" build -mod=readonly -trimpath -o "$tmp" ./weed)
mv "$tmp" "$bin"
echo "s3-server: installed $bin in $(($(date +%s) - start)) s"
