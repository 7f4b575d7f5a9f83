//go:build urfave_cli_no_docs

package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// cmdMan in a shipped build (tag urfave_cli_no_docs): the roff renderer is
// not linked, so that no command pays its packages' initialisation at
// start. The page is docs/git-ctx.1 in the source tree (install.sh
// installs it; `go run -tags sqlite_fts5 ./cmd/git-ctx man` regenerates it).
func cmdMan() *cli.Command {
	return &cli.Command{
		Name: "man", Hidden: true,
		Action: func(c *cli.Context) error {
			return fault.New(fault.Usage, "this git-ctx is built without its man-page generator: the page is docs/git-ctx.1 in the source tree (install.sh installs it; 'git help ctx' opens it)")
		},
	}
}
