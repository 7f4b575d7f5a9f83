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

# The man page (git help ctx, git ctx --help) and shell completions, generated
# by the binary from the same command definitions as its help.
man1="$PREFIX/share/man/man1"
bashdir="$PREFIX/share/bash-completion/completions"
zshdir="$PREFIX/share/zsh/site-functions"
fishdir="$PREFIX/share/fish/vendor_completions.d"
mkdir -p "$man1" "$bashdir" "$zshdir" "$fishdir"
"$bindir/git-ctx" man >"$man1/git-ctx.1"
"$bindir/git-ctx" completion bash >"$bashdir/git-ctx"
"$bindir/git-ctx" completion zsh >"$zshdir/_git-ctx"
"$bindir/git-ctx" completion fish >"$fishdir/git-ctx.fish"
echo "Installed the man page to $man1/git-ctx.1 and completions for bash, zsh and fish under $PREFIX/share"
echo "For 'git ctx <TAB>' in bash, add to ~/.bashrc: source $bashdir/git-ctx"

case ":$PATH:" in
  *":$bindir:"*) echo "Run 'git ctx init' inside any git repository to start." ;;
  *) echo "Add $bindir to your PATH, e.g. append this line to ~/.profile, then open a new shell:"
     echo "  export PATH=\"$bindir:\$PATH\"" ;;
esac
