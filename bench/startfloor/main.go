// Command startfloor is the dependency floor of `git ctx version`'s start
// (issue 18, item 3, "Fast start"): it links exactly the packages of other
// modules that the shipped (lean) git-ctx imports — go-git's storage and
// object packages, go-sqlite3 (cgo, so dynamically linked against libc),
// age, blake3, curve25519-voi (the signature check), klauspost/compress's
// flate and zlib (the pack reader's inflate), urfave/cli, x/sys and x/term — and
// exits. Their package init
// and the binary they make are what any program built on them pays at
// every start; bench/ctxbench measures `git ctx version` against it in the
// same run. TestFloorLinksLeanDependencies keeps the list equal to the
// lean build's. Build it with the shipped tags (sqlite_fts5,
// urfave_cli_no_docs).
package main

import (
	_ "filippo.io/age"
	_ "github.com/go-git/go-billy/v5/osfs"
	_ "github.com/go-git/go-git/v5/plumbing"
	_ "github.com/go-git/go-git/v5/plumbing/cache"
	_ "github.com/go-git/go-git/v5/plumbing/filemode"
	_ "github.com/go-git/go-git/v5/plumbing/object"
	_ "github.com/go-git/go-git/v5/storage/filesystem"
	_ "github.com/klauspost/compress/flate"
	_ "github.com/klauspost/compress/zlib"
	_ "github.com/mattn/go-sqlite3"
	_ "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
	_ "github.com/urfave/cli/v2"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/term"
	_ "lukechampine.com/blake3"
)

func main() {}
