package gitrepo_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCommit(t *testing.T) {
	isolateGit(t)
	ctx := context.Background()
	dir := newRepo(t)
	root := commitFiles(t, dir, "Initial import", map[string]string{
		"README.md":           "hello\n",
		"src/main.go":         "package main\n",
		"docs/naïve name.txt": "unicode and a space\n",
	})
	second := commitFiles(t, dir, "Add feature\n\nFirst paragraph\nof the body.\n\nSecond paragraph.\n", map[string]string{
		"src/feature.go": "package main\n",
		"README.md":      "hello again\n",
	})
	// A merge commit: main changes "main.txt", side changes "side.txt".
	gitOut(t, dir, "checkout", "-q", "-b", "side")
	commitFiles(t, dir, "side work", map[string]string{"side.txt": "s\n"})
	gitOut(t, dir, "checkout", "-q", "main")
	commitFiles(t, dir, "main work", map[string]string{"main.txt": "m\n"})
	gitOut(t, dir, "merge", "-q", "--no-ff", "-m", "Merge side", "side")
	merge := gitOut(t, dir, "rev-parse", "HEAD")
	gitOut(t, dir, "tag", "-a", "-m", "release one", "v1", second)
	r := open(t, dir)

	tests := []struct {
		name    string
		rev     string
		hash    string
		subject string
		body    string
		files   []string
	}{
		{"normal", second, second, "Add feature", "First paragraph\nof the body.\n\nSecond paragraph.",
			[]string{"README.md", "src/feature.go"}},
		{"root lists every file", root, root, "Initial import", "",
			[]string{"README.md", "docs/naïve name.txt", "src/main.go"}},
		{"merge against first parent", merge, merge, "Merge side", "", []string{"side.txt"}},
		{"symbolic rev", "HEAD", merge, "Merge side", "", []string{"side.txt"}},
		{"relative rev", "HEAD~1", gitOut(t, dir, "rev-parse", "HEAD~1"), "main work", "", []string{"main.txt"}},
		{"annotated tag", "v1", second, "Add feature", "First paragraph\nof the body.\n\nSecond paragraph.",
			[]string{"README.md", "src/feature.go"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ci, err := r.Commit(ctx, tc.rev, 0)
			if err != nil {
				t.Fatalf("Commit(%s): %v", tc.rev, err)
			}
			if ci.Hash != tc.hash {
				t.Errorf("Hash = %q, want %q", ci.Hash, tc.hash)
			}
			if want := gitOut(t, dir, "rev-parse", tc.hash+"^{tree}"); ci.Tree != want {
				t.Errorf("Tree = %q, want %q", ci.Tree, want)
			}
			if ci.Subject != tc.subject {
				t.Errorf("Subject = %q, want %q", ci.Subject, tc.subject)
			}
			if ci.Body != tc.body {
				t.Errorf("Body = %q, want %q", ci.Body, tc.body)
			}
			if !reflect.DeepEqual(ci.Files, tc.files) {
				t.Errorf("Files = %q, want %q", ci.Files, tc.files)
			}
			if ci.FilesOmitted != 0 {
				t.Errorf("FilesOmitted = %d, want 0", ci.FilesOmitted)
			}
		})
	}
}

func TestCommitMaxFiles(t *testing.T) {
	isolateGit(t)
	dir := newRepo(t)
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		files[n+".txt"] = n
	}
	commitFiles(t, dir, "five files", files)
	r := open(t, dir)
	tests := []struct {
		max     int
		files   []string
		omitted int
	}{
		{0, []string{"a.txt", "b.txt", "c.txt", "d.txt", "e.txt"}, 0},
		{2, []string{"a.txt", "b.txt"}, 3},
		{1, []string{"a.txt"}, 4},
		{5, []string{"a.txt", "b.txt", "c.txt", "d.txt", "e.txt"}, 0},
		{9, []string{"a.txt", "b.txt", "c.txt", "d.txt", "e.txt"}, 0},
	}
	for _, tc := range tests {
		ci, err := r.Commit(context.Background(), "HEAD", tc.max)
		if err != nil {
			t.Fatalf("Commit(HEAD, %d): %v", tc.max, err)
		}
		if !reflect.DeepEqual(ci.Files, tc.files) || ci.FilesOmitted != tc.omitted {
			t.Errorf("max %d: Files %q, FilesOmitted %d; want %q, %d", tc.max, ci.Files, ci.FilesOmitted, tc.files, tc.omitted)
		}
	}
}

func TestCommitRefusesOptionLikeRev(t *testing.T) {
	isolateGit(t)
	dir := newRepo(t)
	commitFiles(t, dir, "one", map[string]string{"a": "1"})
	r := open(t, dir)
	leak := filepath.Join(t.TempDir(), "written")
	for _, rev := range []string{"-", "--all", "-p", "--output=" + leak} {
		if ci, err := r.Commit(context.Background(), rev, 0); err == nil {
			t.Errorf("Commit(%q) = %+v, want an error", rev, ci)
		}
	}
	if _, err := os.Stat(leak); err == nil {
		t.Errorf("an option-like revision made git write %s", leak)
	}
	for _, rev := range []string{"", "no-such-rev", "HEAD:a"} {
		if ci, err := r.Commit(context.Background(), rev, 0); err == nil {
			t.Errorf("Commit(%q) = %+v, want an error", rev, ci)
		}
	}
}

func TestCommitRefusesRange(t *testing.T) {
	isolateGit(t)
	dir := newRepo(t)
	commitFiles(t, dir, "one", map[string]string{"a": "1"})
	commitFiles(t, dir, "two", map[string]string{"a": "2"})
	commitFiles(t, dir, "three", map[string]string{"a": "3"})
	r := open(t, dir)
	if ci, err := r.Commit(context.Background(), "HEAD~2..HEAD", 0); err == nil {
		t.Errorf("Commit of a range = %+v, want an error", ci)
	}
}
