package main

import (
	"bytes"
	"strings"
	"testing"

	ctxsync "github.com/git-ctx/git-ctx/sync"
)

// TestPrintReviewOddRecords: review's text names a checkpoint file that
// did not parse (no hash) by its path, and prints hashes and commit ids
// shorter than 12 characters whole, instead of panicking on a slice.
func TestPrintReviewOddRecords(t *testing.T) {
	commits := []ctxsync.ReviewCommit{{
		Commit:  "abc",
		Subject: "ctx: hostile",
		Records: []ctxsync.ReviewRecord{
			{Kind: "checkpoint", Path: "repos/r/checkpoints/aa/aa.json", Status: "unreadable"},
			{Kind: "checkpoint", Path: "repos/r/checkpoints/bb/bb.json", Hash: "ab", Device: "d", Status: "not in local memory"},
			{Kind: "checkpoint", Path: "repos/r/checkpoints/cc/cc.json", Hash: strings.Repeat("c", 64), Device: "d", Status: "verified"},
		},
	}}
	var out bytes.Buffer
	printReview(&out, "x..y", commits)
	want := "commit abc ctx: hostile\n" +
		"  ! repos/r/checkpoints/aa/aa.json: unreadable\n" +
		"  + checkpoint ab by d (-/0) not in local memory: \n" +
		"  + checkpoint cccccccccccc by d (-/0) verified: \n"
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	printReview(&out, "x..y", nil)
	if out.String() != "Nothing to review in x..y\n" {
		t.Fatalf("empty review: %q", out.String())
	}
}
