package integration

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Issue 17 item 1: in a ghyll-v1 branch git-ctx writes what ghyll's own
// code writes and verifies. The checks below recompute everything from the
// raw blobs with the rules of reference/checkpoint-format.md (§3.2, §8.2,
// §8.3), independently of git-ctx's own checkpoint package.

// gwGhyllRecord mirrors the declaration of ghyll's Checkpoint (reference
// §2.2): json.MarshalIndent of it is the file ghyll writes.
type gwGhyllRecord struct {
	Version     int    `json:"v"`
	Hash        string `json:"hash"`
	ParentHash  string `json:"parent"`
	DeviceID    string `json:"device"`
	AuthorID    string `json:"author"`
	Timestamp   int64  `json:"ts"`
	RepoRemote  string `json:"repo"`
	Branch      string `json:"branch"`
	SessionID   string `json:"session"`
	Turn        int    `json:"turn"`
	ActiveModel string `json:"model"`
	PlanMode    bool   `json:"plan_mode,omitempty"`
	ResumedFrom *struct {
		Session string `json:"session"`
		Hash    string `json:"hash"`
	} `json:"resumed_from,omitempty"`
	Summary      string    `json:"summary"`
	Embedding    []float32 `json:"emb"`
	FilesTouched []string  `json:"files"`
	ToolsUsed    []string  `json:"tools"`
	InjectionSig []string  `json:"injections,omitempty"`
	Signature    string    `json:"sig"`
}

// ddGhyllDir is ghyll's repository directory for d's origin: the SHA-256
// of the URL exactly as git has it (reference §8.2).
func ddGhyllDir(t *testing.T, d *syncDevice) string {
	t.Helper()
	return sha256Hex(strings.TrimSpace(d.git(t, "remote", "get-url", "origin")))
}

// gwBlob is the exact bytes of path on the memory branch (git cat-file).
func gwBlob(t *testing.T, dir string, env []string, path string) []byte {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "blob", memRef+":"+path)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file blob %s: %v", path, err)
	}
	return out
}

// gwGhyllHash is ghyll's CanonicalHash of a checkpoint file: every
// top-level member but hash, sig and emb (plan_mode only when true,
// resumed_from only when not null, injections only when non-empty), values
// compacted, keys sorted, no whitespace; lowercase hex SHA-256.
func gwGhyllHash(t *testing.T, file []byte) string {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(file, &members); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"hash", "sig", "emb"} {
		delete(members, k)
	}
	if string(members["plan_mode"]) == "false" {
		delete(members, "plan_mode")
	}
	if string(members["resumed_from"]) == "null" {
		delete(members, "resumed_from")
	}
	if inj, ok := members["injections"]; ok && (string(inj) == "null" || string(inj) == "[]") {
		delete(members, "injections")
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, members[k]); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteByte('}')
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// gwPublicKey reads devices/<dev>.pub from the branch (PEM around the 32
// raw key bytes, reference §7.1).
func gwPublicKey(t *testing.T, dir string, env []string, dev string) ed25519.PublicKey {
	t.Helper()
	block, _ := pem.Decode(gwBlob(t, dir, env, "devices/"+dev+".pub"))
	if block == nil || len(block.Bytes) != ed25519.PublicKeySize {
		t.Fatalf("devices/%s.pub is not a PEM ed25519 key", dev)
	}
	return ed25519.PublicKey(block.Bytes)
}

// gwWantGhyllRecord checks the record hash of device dev as ghyll's code
// would: the file sits at repos/<dir>/checkpoints/<hash>.json, is v2,
// byte-identical to ghyll's MarshalIndent of it (no trailing newline), its
// hash recomputed under ghyll's rule is its name, its signature verifies
// under the device's published key, and its line is in chains/<dev>.jsonl.
func gwWantGhyllRecord(t *testing.T, d *syncDevice, dir, dev, hash string) gwGhyllRecord {
	t.Helper()
	path := "repos/" + dir + "/checkpoints/" + hash + ".json"
	file := gwBlob(t, d.dir, d.env, path)
	var g gwGhyllRecord
	if err := json.Unmarshal(file, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if g.Version != 2 || g.Hash != hash || g.DeviceID != dev {
		t.Fatalf("%s: v %d, hash %s, device %s; want v 2, its name, device %s", path, g.Version, g.Hash, g.DeviceID, dev)
	}
	if want, _ := json.MarshalIndent(&g, "", "  "); !bytes.Equal(file, want) {
		t.Fatalf("%s is not ghyll's MarshalIndent of the record:\n%s\nwant\n%s", path, file, want)
	}
	if h := gwGhyllHash(t, file); h != hash {
		t.Fatalf("%s: hash under ghyll's rule is %s", path, h)
	}
	sig, err := hex.DecodeString(g.Signature)
	if err != nil || !ed25519.Verify(gwPublicKey(t, d.dir, d.env, dev), []byte(hash), sig) {
		t.Fatalf("%s: signature does not verify under the key of %s", path, dev)
	}
	found := false
	for _, l := range parseChain(t, string(gwBlob(t, d.dir, d.env, "repos/"+dir+"/chains/"+dev+".jsonl"))) {
		found = found || l.Hash == hash && l.Parent == g.ParentHash && l.TS == g.Timestamp
	}
	if !found {
		t.Fatalf("no line for %s in repos/%s/chains/%s.jsonl", hash[:12], dir, dev)
	}
	return g
}

// gwNewRecord is the one record of d's log not in known (fails unless there
// is exactly one).
func gwNewRecord(t *testing.T, d *syncDevice, known map[string]bool) string {
	t.Helper()
	var fresh []string
	for _, r := range logJSON(t, d.dir, d.env) {
		if !known[r.Hash] {
			fresh = append(fresh, r.Hash)
		}
	}
	if len(fresh) != 1 {
		t.Fatalf("%d new records in the log, want 1", len(fresh))
	}
	return fresh[0]
}

// TestGhyllWriteLayout: init --layout ghyll-v1 in a clone whose origin is a
// real bare repository fixes the directory ghyll's Syncer names (SHA-256 of
// the exact `git remote get-url origin`) and says what the layout means for
// emb; `git ctx checkpoint` (with and without an embedding) and a hooked
// commit write v2 records under ghyll's rule there; verify, log and a
// second device's pull accept them, the second device's own records go to
// the same directory, and the first device pulls those back. ctx-v1 keeps
// v1 records under the seed rule in its normalised directory.
func TestGhyllWriteLayout(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a := syncFirstDevice(t, s, rem, "A")
	dir := ddGhyllDir(t, a)
	out := a.must(t, "init", "--layout", "ghyll-v1")
	if !strings.Contains(out, "repos/"+dir+":") || !strings.Contains(out, `leaves "emb" out`) || !strings.Contains(out, "--include-unauthenticated") {
		t.Fatalf("init --layout ghyll-v1 does not name ghyll's directory or what happens to emb:\n%s", out)
	}
	var js struct {
		RepoID string   `json:"repo_id"`
		Notes  []string `json:"notes"`
	}
	inpCtxJSON(t, a.dir, a.env, &js, "init", "--json")
	if js.RepoID != "" || len(js.Notes) != 1 || !strings.Contains(js.Notes[0], "unauthenticated") {
		t.Fatalf("init --json again: %+v", js)
	}
	if got := strings.TrimSpace(branchFile(t, a.dir, a.env, "REPO")); got != dir {
		t.Fatalf("REPO holds %q, want ghyll's directory %s", got, dir)
	}
	idA := a.id(t)
	a1 := a.cp(t, "gw: chose <sqlite> & wal")
	emb := filepath.Join(s.root, "gw-emb.json")
	writeFile(t, emb, "[0.5, -0.25, 1e-7]")
	a2 := checkpoint(t, a.dir, a.env, "-m", "gw: with an embedding", "--emb-file", emb, "--file", "db.go")
	a.must(t, "hooks", "install")
	hkQuietCommit(t, a.dir, a.env, "gw: add the schema", map[string]string{"schema.sql": "create table t(x);\n"})
	hooked := gwNewRecord(t, a, map[string]bool{a1.Hash: true, a2.Hash: true})
	gwClaudeStop(t, s, a)
	agent := gwNewRecord(t, a, map[string]bool{a1.Hash: true, a2.Hash: true, hooked: true})
	for _, h := range []string{a1.Hash, a2.Hash, hooked, agent} {
		g := gwWantGhyllRecord(t, a, dir, idA, h)
		if h == a2.Hash && len(g.Embedding) != 3 {
			t.Fatalf("the embedding was not written: %+v", g.Embedding)
		}
		if h == hooked && !strings.Contains(g.Summary, "gw: add the schema") {
			t.Fatalf("the hooked record does not hold the commit: %q", g.Summary)
		}
		if h == agent && (g.SessionID == "" || len(g.ToolsUsed) == 0) {
			t.Fatalf("the agent record lacks its session or tools: %+v", g)
		}
	}
	if rep := a.wantVerifies(t); rep.Chains[0].Verified != 4 {
		t.Fatalf("verify: %s", rep.Raw)
	}
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	b.must(t, "init")
	if st := status(t, b.dir, b.env); st.RepoID != dir || st.Layout != "ghyll-v1" {
		t.Fatalf("second clone: repo id %s layout %s, want %s ghyll-v1", st.RepoID, st.Layout, dir)
	}
	b1 := b.cp(t, "gw: b read the schema")
	gwWantGhyllRecord(t, b, dir, b.id(t), b1.Hash)
	syncWantHashes(t, "B's log", b.hashes(t), a1.Hash, a2.Hash, hooked, agent, b1.Hash)
	b.wantVerifies(t)
	b.must(t, "push")
	a.must(t, "pull")
	syncWantHashes(t, "A's log after pulling B", a.hashes(t), a1.Hash, a2.Hash, hooked, agent, b1.Hash)
	a.wantVerifies(t)

	gwWantCtxV1Unchanged(t, s, rem, dir, emb)
}

// gwClaudeStop runs Claude Code's installed Stop hook in a, which records
// one agent turn.
func gwClaudeStop(t *testing.T, s *sandbox, a *syncDevice) {
	t.Helper()
	a.must(t, "hooks", "install", "--agent", "claude")
	top, err := filepath.EvalSymlinks(a.dir)
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(s.root, "home", ".claude", "projects", "gw", "session.jsonl")
	writeFile(t, transcript, string(bytes.ReplaceAll(fixture(t, "claude-session.jsonl"), []byte("/home/dev/proj"), []byte(jsonString(top)))))
	command := installedStopCommand(t, readFile(t, filepath.Join(a.dir, ".claude", "settings.local.json")))
	if r := execute(t, a.dir, a.env, claudeStopInput(t, transcript, top), "sh", "-c", command); r.code != 0 || r.stderr != "" {
		t.Fatalf("the installed Stop hook: %s", r)
	}
}

// gwWantCtxV1Unchanged: ctx-v1 is unchanged: v1 under the seed rule (emb
// inside the hash), in the normalised id's directory, not ghyll's dir.
func gwWantCtxV1Unchanged(t *testing.T, s *sandbox, rem *syncRemote, dir, emb string) {
	t.Helper()
	c := newSyncDevice(s, "C", newRepo(t, s, "gw-c"))
	c.git(t, "remote", "add", "origin", rem.url)
	c.must(t, "init", "--layout", "ctx-v1")
	c1 := checkpoint(t, c.dir, c.env, "-m", "gw: ctx-v1 record", "--emb-file", emb)
	rid := status(t, c.dir, c.env).RepoID
	if rid == dir {
		t.Fatalf("ctx-v1 took ghyll's directory %s", dir)
	}
	file := gwBlob(t, c.dir, c.env, ctxV1CheckpointPath(rid, c1.Hash))
	var v struct {
		V int `json:"v"`
	}
	if json.Unmarshal(file, &v) != nil || v.V != 1 {
		t.Fatalf("ctx-v1 record is not v1:\n%s", file)
	}
	if gwGhyllHash(t, file) == c1.Hash {
		t.Fatal("ctx-v1 record hashed under ghyll's rule (emb outside the hash)")
	}
	c.wantVerifies(t)
}
