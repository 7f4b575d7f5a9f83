package testrepo

import (
	"crypto/ed25519"
	"encoding/hex"
	"testing"

	ckpt "github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/identity"
)

// CtxV1ChainPath is a device's first chain segment in the ctx-v1 layout.
func CtxV1ChainPath(repoID, device string) string {
	return "repos/" + repoID + "/chains/" + device + "/00000000.jsonl"
}

// AppendOwn appends cp to d's ctx-v1 chain of repoID with plumbing only
// (one commit with message msg), the way another writer of the format
// (ghyll, an older git-ctx) would: cp gets the chain's last hash as its
// parent, d's device id, a time one second after the last entry, its hash
// under rule and d's signature. It returns the record file as written.
func (d *Device) AppendOwn(t testing.TB, repoID, msg string, rule ckpt.Rule, cp *ckpt.Checkpoint) []byte {
	t.Helper()
	id, err := identity.Load(d.Sandbox.CtxHome(d.Name), "")
	if err != nil {
		t.Fatal(err)
	}
	chainPath := CtxV1ChainPath(repoID, id.DeviceID)
	lines := BranchFile(t, d.Dir, d.Env, chainPath)
	entries := ParseChain(t, lines)
	last := entries[len(entries)-1]
	cp.ParentHash, cp.DeviceID, cp.Timestamp = last.Hash, id.DeviceID, last.TS+1000
	if cp.Hash, err = cp.ComputeHash(rule); err != nil {
		t.Fatal(err)
	}
	cp.Signature = hex.EncodeToString(ed25519.Sign(id.Private, []byte(cp.Hash)))
	file, err := cp.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	RewriteBranch(t, d.Dir, d.Env, msg,
		FileEdit{Path: CtxV1CheckpointPath(repoID, cp.Hash), Content: string(file)},
		FileEdit{Path: chainPath, Content: lines + string(cp.Entry().MarshalLine())})
	return file
}
