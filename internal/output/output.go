// Package output holds the JSON shapes of every `git ctx … --json` output
// and the one writer that prints them. Each shape is a struct with json
// tags, built from the domain values by a function named after the
// command; docs/JSON.md documents every member, and a test in cmd/git-ctx
// checks the documented members against what each command prints.
//
// Conventions (docs/JSON.md, "General rules"): one document, indented by
// two spaces, followed by a newline; encoding/json's escaping plus \u
// escapes for the runes a terminal would act on (DEL, C1 controls,
// U+2028/9, bidirectional controls). Arrays documented as "always an
// array" are never null. Domain types keep json tags only where they are
// an on-disk format.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/git-ctx/git-ctx/internal/termtext"
)

// Write prints v as one indented JSON document and a newline. Values stay
// exact; the runes a terminal would act on that encoding/json leaves raw
// are written as \u escapes.
func Write(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON output: %w", err)
	}
	_, err := w.Write(termtext.EscapeJSON(buf.Bytes()))
	return err
}

// WriteStored prints a file stored on the memory branch byte for byte,
// followed by a newline (`show --json`, `snapshot show --json`).
func WriteStored(w io.Writer, stored []byte) error {
	_, err := fmt.Fprintf(w, "%s\n", stored)
	return err
}

// WriteCompact prints compact JSON (a record as it is signed) indented by
// two spaces, followed by a newline (`checkpoint --json`).
func WriteCompact(w io.Writer, compact []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return fmt.Errorf("indent JSON output: %w", err)
	}
	_, err := fmt.Fprintln(w, buf.String())
	return err
}

// nonNil returns s, or an empty slice when s is nil: members documented as
// "always an array" print [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// mapSlice converts every element of in with f (never nil).
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}
