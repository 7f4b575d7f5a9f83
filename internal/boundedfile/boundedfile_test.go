package boundedfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var errKind = errors.New("refused input")

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Read(small, 5, errKind)
	if err != nil || !bytes.Equal(got, []byte("12345")) {
		t.Fatalf("Read at the limit = %q, %v", got, err)
	}
	cases := []struct {
		name, path, want string
		kind             bool
	}{
		{"over the limit", small, "small is 5 bytes (limit 4)", true},
		{"a directory", dir, "is not a regular file", true},
		{"missing", filepath.Join(dir, "none"), "no such file", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Read(c.path, 4, errKind)
			if err == nil || got != nil {
				t.Fatalf("Read = %q, %v; want an error", got, err)
			}
			if errors.Is(err, errKind) != c.kind || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q (kind %v), want %q (kind %v)", err, errors.Is(err, errKind), c.want, c.kind)
			}
		})
	}
}
