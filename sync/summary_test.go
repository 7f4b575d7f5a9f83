package sync

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/chain"
)

// TestManyRejectionsSummarised: a pull that rejects 200,000 paths prints a
// few lines, writes a bounded merge message and bounded JSON, and still
// counts every rejection per reason.
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

	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Rejected  []Rejection    `json:"rejected"`
		Total     int            `json:"rejected_total"`
		ByReason  map[string]int `json:"rejected_by_reason"`
		Truncated bool           `json:"rejected_truncated"`
		Remote    string         `json:"remote"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Rejected) != MaxJSONRejections || v.Total != n || !v.Truncated || v.Remote != "origin" ||
		v.ByReason[string(chain.UnexpectedPath)] != n*3/4 || v.ByReason[string(chain.OrphanFile)] != n/4 {
		t.Errorf("JSON: %d listed, total %d, truncated %v, by reason %v, remote %q", len(v.Rejected), v.Total, v.Truncated, v.ByReason, v.Remote)
	}

	// A few rejections are listed in full, with no count line.
	few := &PullResult{Rejected: p.rejected[:maxSummaryPaths+1]}
	if got := few.Summary(); len(got) != maxSummaryPaths+1 || strings.Contains(strings.Join(got, "\n"), "paths:") {
		t.Errorf("Summary of %d rejections: %q", maxSummaryPaths+1, got)
	}
	b, _ = json.Marshal(&PullResult{})
	if !strings.Contains(string(b), `"rejected":[]`) || !strings.Contains(string(b), `"rejected_by_reason":{}`) {
		t.Errorf("empty result JSON: %s", b)
	}
}
