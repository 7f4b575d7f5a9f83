#!/bin/sh
# Installs git-ctx so that `git ctx` works: builds the binary (with SQLite
# full-text search) into ${PREFIX:-$HOME/.local}/bin. Safe to run again.
set -eu
PREFIX=${PREFIX:-$HOME/.local}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

if ! command -v go >/dev/null 2>&1; then
  echo "install.sh: Go is required to build git-ctx; install it from your package manager or go.dev" >&2
  exit 1
fi
if ! command -v gcc >/dev/null 2>&1 && ! command -v cc >/dev/null 2>&1; then
  echo "install.sh: a C compiler (gcc) is required for SQLite; install gcc and run again" >&2
  exit 1
fi

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
bindir="$PREFIX/bin"
mkdir -p "$bindir"
tmp="$bindir/.git-ctx.$$"
trap 'rm -f "$tmp"' EXIT INT TERM
CGO_ENABLED=1 go build -tags sqlite_fts5 -trimpath -ldflags "-X main.version=$version" -o "$tmp" ./cmd/git-ctx
mv -f "$tmp" "$bindir/git-ctx"
trap - EXIT INT TERM
echo "Installed git-ctx $version to $bindir/git-ctx"

case ":$PATH:" in
  *":$bindir:"*) echo "Run 'git ctx init' inside any git repository to start." ;;
  *) echo "Add $bindir to your PATH, e.g. append this line to ~/.profile, then open a new shell:"
     echo "  export PATH=\"$bindir:\$PATH\"" ;;
esac
