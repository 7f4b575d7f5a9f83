package gitstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/formats/ctxpkg"
)

func testPackage(t *testing.T, name, version, task string, d *Device) []byte {
	t.Helper()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := &ctxpkg.Package{
		Manifest: ctxpkg.Manifest{SchemaVersion: 1, Name: name, Version: version, Description: "d", CreatedAt: t0,
			Layers: []ctxpkg.Layer{ctxpkg.LayerSession}, Provenance: ctxpkg.Provenance{Tool: "test", ToolVersion: "1"}},
		Content: ctxpkg.Content{Session: &ctxpkg.SessionLayer{TaskDescription: &task, ExportedAt: t0}},
	}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	if d != nil {
		if err := p.Manifest.Sign(d.Key); err != nil {
			t.Fatal(err)
		}
	}
	data, err := p.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestCheckPackagePath(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		ok            bool
	}{
		{"auth", "1.0.0", true},
		{"@team/auth", "1.0.0+b1", true},
		{"a/b/c", "v2", true},
		{"", "1", false},
		{"a", "", false},
		{"../x", "1", false},
		{"/abs", "1", false},
		{"a//b", "1", false},
		{"a/./b", "1", false},
		{"a/", "1", false},
		{`a\b`, "1", false},
		{"a/.git/b", "1", false},
		{"a/.GIT", "1", false},
		{"a/.git.", "1", false},
		{".gitmodules", "1", false},
		{"x/.GitModules..", "1", false},
		{"a/.gitkeep", "1", true},
		{".github/x", "1", true},
		{"a/1.0.ctxpkg", "2", false},
		{"x.lctxpkg/y", "2", false},
		{"a", ".1", false},
		{"a", "1/2", false},
		{"a b", "1", false},
		{strings.Repeat("a", 129), "1", false},
		{"a", strings.Repeat("1", 65), false},
	} {
		err := CheckPackagePath(tc.name, tc.version)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrPackagePath) {
			t.Errorf("CheckPackagePath(%q, %q) = %v, want ok=%v", tc.name, tc.version, err, tc.ok)
		}
	}
}

func TestPublishPackageBothLayouts(t *testing.T) {
	for _, layout := range []Layout{LayoutCtxV1, LayoutGhyllV1} {
		t.Run(string(layout), func(t *testing.T) {
			s, dir, d := initStore(t, "dev-a", InitOptions{Layout: layout})
			ctx := context.Background()
			data := testPackage(t, "@team/auth", "1.0.0", "task", &d)
			res, err := s.PublishPackage(ctx, PublishRequest{RepoID: repoID, Device: d, Data: data})
			if err != nil || res.Existed || res.Commit.IsZero() {
				t.Fatalf("publish: %+v %v", res, err)
			}
			want := "repos/" + repoID + "/packages/@team/auth/1.0.0.ctxpkg"
			if res.Path != want {
				t.Fatalf("path %s, want %s", res.Path, want)
			}
			if got := git(t, dir, "show", BranchRef+":"+want); got != string(data) {
				t.Fatal("stored file differs from the published bytes")
			}
			if subj := git(t, dir, "log", "-1", "--format=%s", BranchRef); subj != "ctx: package @team/auth@1.0.0 by dev-a" {
				t.Fatalf("commit subject %q", subj)
			}
			// The identical file again: a no-op.
			tip, _ := s.Tip()
			res, err = s.PublishPackage(ctx, PublishRequest{RepoID: repoID, Device: d, Data: data})
			if now, _ := s.Tip(); err != nil || !res.Existed || now != tip {
				t.Fatalf("republish: %+v %v", res, err)
			}
			// A different package under the same name@version: refused.
			other := testPackage(t, "@team/auth", "1.0.0", "another task", nil)
			if _, err := s.PublishPackage(ctx, PublishRequest{RepoID: repoID, Device: d, Data: other}); !errors.Is(err, ErrPackageExists) {
				t.Fatalf("conflicting publish: %v", err)
			}
			// A package that does not verify: refused.
			bad := []byte(strings.Replace(string(data), `"task"`, `"tusk"`, 1))
			if _, err := s.PublishPackage(ctx, PublishRequest{RepoID: repoID, Device: d, Data: bad}); !errors.Is(err, ErrPackageInvalid) {
				t.Fatalf("tampered publish: %v", err)
			}
			v, _ := s.View()
			good, badPaths, err := v.WalkPackages(repoID)
			if err != nil || len(good) != 1 || len(badPaths) != 0 || good[0].Name != "@team/auth" || good[0].Version != "1.0.0" {
				t.Fatalf("walk: %+v %v %v", good, badPaths, err)
			}
			if rep := mustVerify(t, v); !rep.OK || len(rep.Packages) != 1 || !rep.Packages[0].Signed {
				t.Fatalf("verify: %+v", rep)
			}
		})
	}
}

func TestVerifyCatchesPackageDamage(t *testing.T) {
	s, _, d := initStore(t, "dev-a", InitOptions{})
	data := testPackage(t, "auth", "1.0.0", "task", &d)
	if _, err := s.PublishPackage(context.Background(), PublishRequest{RepoID: repoID, Device: d, Data: data}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		files  map[string][]byte
		reason string
	}{
		{"tampered", map[string][]byte{PackagePath(repoID, "auth", "1.0.0"): []byte(strings.Replace(string(data), `"task"`, `"tusk"`, 1))}, "bad_package"},
		{"moved", map[string][]byte{PackagePath(repoID, "auth", "2.0.0"): data}, "path_mismatch"},
		{"garbage", map[string][]byte{PackagePath(repoID, "x", "1"): []byte("{")}, "malformed_package"},
		{"stray", map[string][]byte{PackageDir(repoID) + "/auth/README": []byte("hi")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, _ := s.View()
			rep := mustVerify(t, editView(t, s, base, tc.files, "tamper\n"))
			if rep.OK {
				t.Fatalf("verify passed: %+v", rep)
			}
			if tc.reason == "" {
				if len(rep.Problems) != 1 {
					t.Fatalf("problems: %+v", rep.Problems)
				}
				return
			}
			found := false
			for _, p := range rep.Packages {
				found = found || p.Reason == tc.reason
			}
			if !found {
				t.Fatalf("no %s in %+v", tc.reason, rep.Packages)
			}
		})
	}
}
