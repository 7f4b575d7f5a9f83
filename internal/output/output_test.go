package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/doctor"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/hooks"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/ctxpackages"
	"github.com/git-ctx/git-ctx/internal/fileverify"
	"github.com/git-ctx/git-ctx/sessions"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

// compactOf is what Write prints for v, compacted (members in order).
func compactOf(t *testing.T, v any) string {
	t.Helper()
	var b, c bytes.Buffer
	if err := Write(&b, v); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "\n") || strings.Count(b.String(), "\n") > 1 && !strings.Contains(b.String(), "\n  ") {
		t.Fatalf("not an indented document and a newline:\n%s", b.String())
	}
	if err := json.Compact(&c, b.Bytes()); err != nil {
		t.Fatal(err)
	}
	return c.String()
}

// TestShapesKeepTheirBytes: each shape prints the members, in the order and
// with the omissions, that the commands printed before the shapes moved
// here (the bytes the domain types' own tags gave): scripts see no change.
func TestShapesKeepTheirBytes(t *testing.T) {
	pull := &ctxsync.PullResult{Remote: "o", Fetched: "f", NewKeys: []string{"a"},
		Devices:    []ctxsync.DeviceResult{{Repo: "r", Device: "d", Added: 1, Reason: "x"}},
		Rejected:   []ctxsync.Rejection{{Repo: "r", Reason: "hash_mismatch"}},
		Superseded: []ctxsync.Superseded{{Kind: "k"}},
		SharedKeys: []ctxsync.SharedKey{{Fingerprint: "f", Devices: []string{"a"}, New: []string{"a"}}}}
	pullJSON := `{"remote":"o","fetched":"f","before":"","after":"","up_to_date":false,"added":0,"new_devices":["a"],"devices":[{"repo":"r","device":"d","added":1,"rejected":false,"fork":false,"reason":"x"}],"forks":0,"packages":0,"package_conflicts":0,"superseded":[{"kind":"k","repo":"","path":"","package":"","local_blob":"","remote_blob":"","local_commit":"","detail":""}],"shared_keys":[{"fingerprint":"f","devices":["a"],"new":["a"]}],"timings_ms":{"fetch":0,"verify":0,"merge":0,"cache":0},"rejected":[{"repo":"r","device":"","record":"","reason":"hash_mismatch","detail":""}],"rejected_total":1,"rejected_by_reason":{"hash_mismatch":1},"rejected_truncated":false}`
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"pull", NewPull(pull), pullJSON},
		{"push", NewPush(&ctxsync.PushResult{Remote: "o", Pulls: []*ctxsync.PullResult{pull}}),
			`{"remote":"o","pushed":"","attempts":0,"pulls":[` + pullJSON + `]}`},
		{"verify", NewVerify(&gitstore.Report{OK: true, Commit: "c", Layout: "ctx-v1", Devices: []string{"d"},
			Chains:    []gitstore.ChainReport{{Repo: "r", Device: "d", Rules: map[checkpoint.Rule]int{"seed-v1": 1}, Failure: &chain.Failure{Device: "d", Reason: "x"}}},
			Timelines: []gitstore.TimelineReport{{Repo: "r", Failure: &chain.TimelineFailure{Index: 1, Reason: "y"}}},
			Packages:  []gitstore.PackageReport{{Repo: "r", Name: "n"}}, Problems: []gitstore.Problem{{Path: "p", Reason: "q"}}}),
			`{"ok":true,"commit":"c","layout":"ctx-v1","devices":["d"],"chains":[{"repo":"r","device":"d","entries":0,"verified":0,"rules":{"seed-v1":1},"failure":{"device":"d","index":0,"reason":"x","detail":""}}],"timelines":[{"repo":"r","device":"","entries":0,"verified":0,"unsigned":0,"failure":{"index":1,"reason":"y","detail":""}}],"packages":[{"repo":"r","path":"","name":"n","version":"","signed":false}],"problems":[{"path":"p","reason":"q"}]}`},
		{"hooks status", NewHooksStatus(&hooks.Status{Hooks: []hooks.HookState{{Hook: "h", Installed: true, Via: "stub", Shared: true}}, Managers: []string{"husky"}, BinaryPath: "b", LastRun: "l"}),
			`{"hooks":[{"hook":"h","path":"","installed":true,"via":"stub","modified":false,"chained":false,"foreign":false,"shared":true,"old_form":false}],"managers":["husky"],"claude":false,"codex":false,"claude_mcp":"not registered","codex_mcp":false,"binary":"b","last_run":"l"}`},
		{"review", NewReview([]ctxsync.ReviewCommit{{Commit: "c", Parents: []string{"p"}, Records: []ctxsync.ReviewRecord{{Kind: "k", Turn: 2, Status: "s"}}}}),
			`[{"commit":"c","subject":"","author":"","parents":["p"],"records":[{"kind":"k","path":"","turn":2,"status":"s","modified":false}]}]`},
		{"devices", NewDevices([]ctxsync.DeviceInfo{{ID: "i", SameKeyAs: []string{"x"}, LastSeen: 5}}),
			`[{"id":"i","fingerprint":"","trust":"","this_device":false,"checkpoints":0,"unverified":0,"last_seen":5,"same_key_as":["x"]}]`},
		{"import", NewImport(&checkpoints.ImportResult{Imported: []checkpoints.ImportedRecord{{From: "f", Hash: "h", Rule: "seed-v1"}}, Skipped: []checkpoints.SkippedRecord{{Hash: "h"}}, Already: 2}),
			`{"imported":[{"from":"f","hash":"h","rule":"seed-v1"}],"skipped":[{"hash":"h","device":"","reason":""}],"already_imported":2}`},
		{"doctor", NewDoctor(&doctor.Report{Findings: []doctor.Finding{{Level: "OK", Check: "c", Detail: "d", Fix: "f"}}}),
			`{"findings":[{"level":"OK","check":"c","detail":"d","fix":"f"}]}`},
		{"session list", NewSessionList([]sessions.ListEntry{{Agent: "claude", SessionID: "s", LocalSize: 3, Mapped: true}}),
			`[{"agent":"claude","session_id":"s","project_id":"","state":"","newer":"","local_size":3,"mapped":true}]`},
		{"session status", NewSessionStatus(&sessions.Status{Store: "s", Snapshots: 2, Latest: "l"}),
			`{"store":"s","profile":"","project_id":"","work_tree":"","state_dir":"","remote_snapshots":2,"remote_manifest":false,"local_sessions":0,"synced_here":0,"latest_local":"l"}`},
		{"pkg verify", NewPackageChecks([]ctxpackages.Check{{File: "f", Name: "n", Failures: []string{"x"}, Refused: true}}),
			`[{"file":"f","valid":false,"name":"n","signed":false,"failures":["x"],"refused":true}]`},
		{"pkg list", NewPackageList([]ctxpackages.Info{{Name: "n", Layers: []string{"session"}, SignerDevice: "d", Error: "e"}}),
			`[{"name":"n","version":"","sha256":"","description":"","layers":["session"],"created_at":"","signed":false,"signer_device":"d","bytes":0,"path":"","verified":false,"error":"e"}]`},
		{"verify FILE", NewVerifiedFiles([]fileverify.Result{{File: "f", Rule: "r", KeySource: "k", Refused: true}}),
			`[{"file":"f","format":"","valid":false,"id":"","error":"","rule":"r","key_source":"k","refused":true}]`},
		{"version", Version{Go: "go1", Version: "dev"}, `{"go":"go1","version":"dev"}`},
	}
	for _, tc := range cases {
		if got := compactOf(t, tc.v); got != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestAlwaysArrays: members documented as "always an array" print [] for
// a domain value that holds nil.
func TestAlwaysArrays(t *testing.T) {
	got := compactOf(t, NewPull(&ctxsync.PullResult{}))
	for _, m := range []string{`"new_devices":[]`, `"devices":[]`, `"superseded":[]`, `"shared_keys":[]`, `"rejected":[]`, `"rejected_by_reason":{}`} {
		if !strings.Contains(got, m) {
			t.Errorf("pull of an empty result lacks %s: %s", m, got)
		}
	}
	log, err := NewLogUnverified(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"status":   NewStatus(&checkpoints.Status{}, "d", "f", ""),
		"verify":   NewVerify(&gitstore.Report{}),
		"log":      log,
		"devices":  NewDevices(nil),
		"review":   NewReview([]ctxsync.ReviewCommit{{}}),
		"sessions": NewSessionPull("p", nil),
	} {
		if got := compactOf(t, v); strings.Contains(got, "null") {
			t.Errorf("%s prints null: %s", name, got)
		}
	}
}

// TestWriteEscapesTerminalRunes: a value that would act on a terminal
// (C1 control, bidirectional override) is written as a \u escape; the
// decoded value is unchanged.
func TestWriteEscapesTerminalRunes(t *testing.T) {
	var b bytes.Buffer
	in := "a\u009b31m\u202eb<"
	if err := Write(&b, map[string]string{"s": in}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\u009b\u202e") || !strings.Contains(b.String(), `\u003c`) {
		t.Fatalf("raw terminal runes or unescaped '<' in %q", b.String())
	}
	var out map[string]string
	if err := json.Unmarshal(b.Bytes(), &out); err != nil || out["s"] != in {
		t.Fatalf("round trip: %v %q", err, out["s"])
	}
}

// TestPullJSONBounded: a pull that rejects 200,000 paths lists only the
// first MaxJSONRejections in its JSON, and still counts every rejection
// per reason (moved from sync's TestManyRejectionsSummarised).
func TestPullJSONBounded(t *testing.T) {
	const n = 200_000
	res := &ctxsync.PullResult{Remote: "origin"}
	for i := 0; i < n; i++ {
		reason := string(chain.UnexpectedPath)
		if i%4 == 3 {
			reason = string(chain.OrphanFile)
		}
		res.Rejected = append(res.Rejected, ctxsync.Rejection{Record: fmt.Sprintf("junk/%06d", i), Reason: reason, Detail: "not part of the layout: not merged"})
	}
	var b bytes.Buffer
	if err := Write(&b, NewPull(res)); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Rejected  []Rejection    `json:"rejected"`
		Total     int            `json:"rejected_total"`
		ByReason  map[string]int `json:"rejected_by_reason"`
		Truncated bool           `json:"rejected_truncated"`
		Remote    string         `json:"remote"`
	}
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Rejected) != ctxsync.MaxJSONRejections || v.Total != n || !v.Truncated || v.Remote != "origin" ||
		v.ByReason[string(chain.UnexpectedPath)] != n*3/4 || v.ByReason[string(chain.OrphanFile)] != n/4 {
		t.Errorf("JSON: %d listed, total %d, truncated %v, by reason %v, remote %q", len(v.Rejected), v.Total, v.Truncated, v.ByReason, v.Remote)
	}
}

// TestSearchHitsWindow: a hit ranked within a cut window carries `window`
// (docs/JSON.md); a hit of a full ranking has no such member.
func TestSearchHitsWindow(t *testing.T) {
	e := &cache.Entry{Checkpoint: &checkpoint.Checkpoint{Version: 1, Hash: strings.Repeat("a", 64)}, Verified: true}
	for _, tc := range []struct {
		window int
		want   string
	}{{0, ""}, {1000, `"window":1000`}} {
		list, err := SearchHits([]cache.Hit{{Entry: e, Snippet: "s", Rank: -1, Window: tc.window}})
		if err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, list[0]); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(c.String(), `"window"`); got != (tc.want != "") || tc.want != "" && !strings.Contains(c.String(), tc.want) {
			t.Errorf("window %d: %s", tc.window, c.String())
		}
	}
}
