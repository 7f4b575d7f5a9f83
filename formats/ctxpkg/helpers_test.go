package ctxpkg

import "github.com/git-ctx/git-ctx/formats/serdejson"

func prettyOf(s string) []byte { return serdejson.Pretty([]byte(s)) }
