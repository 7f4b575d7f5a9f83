package sync

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/chain"
)

// TestManyRejectionsSummarised: a pull that rejects 200,000 paths prints a
// few lines and writes a bounded merge message (its bounded JSON is tested
// in internal/output: TestPullJSONBounded).
func TestManyRejectionsSummarised(t *testing.T) {
	const n = 200_000
	p := &plan{}
	for i := 0; i < n; i++ {
		reason := chain.UnexpectedPath
		if i%4 == 3 {
			reason = chain.OrphanFile
		}
		p.rejected = append(p.rejected, Rejection{Record: fmt.Sprintf("junk/%06d", i), Reason: string(reason), Detail: "not part of the layout: not merged"})
	}
	res := &PullResult{Remote: "origin", Rejected: p.rejected}

	lines := res.Summary()
	if len(lines) > maxSummaryPaths+1 {
		t.Errorf("Summary: %d lines", len(lines))
	}
	want := fmt.Sprintf("rejected %d paths: %d unexpected_path, %d orphan_file (the first %d above; all of them: git ctx log --unverified)",
		n, n*3/4, n/4, maxSummaryPaths)
	if len(lines) == 0 || lines[len(lines)-1] != want {
		t.Errorf("Summary ends %q, want %q", lines[len(lines)-1:], want)
	}
	if !strings.HasPrefix(lines[0], "rejected junk/000000: unexpected_path") {
		t.Errorf("Summary starts %q", lines[0])
	}

	msg := mergeMessage("origin", p)
	if len(msg) > 8<<10 || !strings.Contains(msg, fmt.Sprintf("Rejected: %d more: ", n-maxMessageRejections)) {
		t.Errorf("merge message of %d bytes:\n%.2000s", len(msg), msg)
	}

	// A few rejections are listed in full, with no count line.
	few := &PullResult{Rejected: p.rejected[:maxSummaryPaths+1]}
	if got := few.Summary(); len(got) != maxSummaryPaths+1 || strings.Contains(strings.Join(got, "\n"), "paths:") {
		t.Errorf("Summary of %d rejections: %q", maxSummaryPaths+1, got)
	}
}

// TestPushErrForkOutranks: a push's exit outcome is its most serious pull:
// a fork in any pull outranks a rejection in another, a rejection alone is
// a verification failure, and clean pulls are no error.
func TestPushErrForkOutranks(t *testing.T) {
	rejected := &PullResult{Rejected: []Rejection{{Reason: string(chain.OrphanFile)}}}
	forked := &PullResult{Forks: 1}
	for _, tc := range []struct {
		pulls []*PullResult
		want  error
	}{
		{nil, nil},
		{[]*PullResult{{}, {}}, nil},
		{[]*PullResult{rejected}, ErrUnverified},
		{[]*PullResult{rejected, forked, rejected}, ErrFork},
		{[]*PullResult{forked, rejected}, ErrFork},
	} {
		err := (&PushResult{Pulls: tc.pulls}).Err()
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%d pulls: %v, want %v", len(tc.pulls), err, tc.want)
		}
	}
}
