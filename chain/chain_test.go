package chain

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"testing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

type fixture struct {
	key     ed25519.PrivateKey
	entries []checkpoint.ChainEntry
	files   map[string][]byte
}

func build(t *testing.T, n int) *fixture {
	t.Helper()
	f := &fixture{key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32)), files: map[string][]byte{}}
	parent := checkpoint.ZeroHash
	for i := 0; i < n; i++ {
		cp := &checkpoint.Checkpoint{ParentHash: parent, DeviceID: "dev", Timestamp: int64(1000 + i), Turn: i + 1, Summary: fmt.Sprint("s", i)}
		if err := cp.Seal(f.key); err != nil {
			t.Fatal(err)
		}
		b, _ := cp.MarshalFile()
		f.files[cp.Hash] = b
		f.entries = append(f.entries, cp.Entry())
		parent = cp.Hash
	}
	return f
}

func (f *fixture) input() Input {
	return Input{Device: "dev", Key: f.key.Public().(ed25519.PublicKey), Entries: f.entries,
		Load: func(h string) ([]byte, error) {
			b, ok := f.files[h]
			if !ok {
				return nil, ErrMissing
			}
			return b, nil
		}}
}

// resealed replaces entry i's file with one whose fields were edited and
// re-signed with key (so only the named rule can catch it).
func (f *fixture) resealed(t *testing.T, i int, key ed25519.PrivateKey, edit func(*checkpoint.Checkpoint)) {
	cp, _ := checkpoint.Parse(f.files[f.entries[i].Hash])
	edit(cp)
	cp.Seal(key)
	b, _ := cp.MarshalFile()
	f.files[f.entries[i].Hash] = b
}

func TestVerify(t *testing.T) {
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{4}, 32))
	cases := []struct {
		name   string
		mutate func(t *testing.T, f *fixture, in *Input)
		reason Reason
		index  int
	}{
		{"valid", func(*testing.T, *fixture, *Input) {}, "", -1},
		{"no key", func(_ *testing.T, _ *fixture, in *Input) { in.Key = nil }, UnknownKey, 0},
		{"not from genesis", func(_ *testing.T, f *fixture, in *Input) { in.Entries = f.entries[1:] }, BrokenChain, 0},
		{"dropped middle", func(_ *testing.T, f *fixture, in *Input) {
			in.Entries = append([]checkpoint.ChainEntry{f.entries[0]}, f.entries[2:]...)
		}, BrokenChain, 1},
		{"swapped", func(_ *testing.T, f *fixture, in *Input) {
			e := append([]checkpoint.ChainEntry{}, f.entries...)
			e[1], e[2] = e[2], e[1]
			in.Entries = e
		}, BrokenChain, 1},
		{"duplicate", func(_ *testing.T, f *fixture, in *Input) {
			e := append([]checkpoint.ChainEntry{}, f.entries...)
			e = append(e, checkpoint.ChainEntry{Hash: e[3].Hash, Parent: e[4].Hash, TS: e[3].TS})
			in.Entries = e
		}, Duplicate, 5},
		{"missing file", func(_ *testing.T, f *fixture, _ *Input) { delete(f.files, f.entries[2].Hash) }, MissingCheckpoint, 2},
		{"garbage file", func(_ *testing.T, f *fixture, _ *Input) { f.files[f.entries[1].Hash] = []byte("{") }, Malformed, 1},
		{"edited summary", func(_ *testing.T, f *fixture, _ *Input) {
			f.files[f.entries[2].Hash] = bytes.Replace(f.files[f.entries[2].Hash], []byte(`"s2"`), []byte(`"s9"`), 1)
		}, HashMismatch, 2},
		{"file names another hash", func(t *testing.T, f *fixture, _ *Input) {
			f.files[f.entries[1].Hash] = f.files[f.entries[0].Hash]
		}, HashMismatch, 1},
		{"signed by another key", func(t *testing.T, f *fixture, _ *Input) {
			f.resealed(t, 0, other, func(*checkpoint.Checkpoint) {})
		}, BadSignature, 0},
		{"other device's record", func(t *testing.T, f *fixture, in *Input) {
			in.Device = "someone-else"
		}, WrongDevice, 0},
		{"chain line ts edited", func(_ *testing.T, f *fixture, in *Input) {
			e := append([]checkpoint.ChainEntry{}, f.entries...)
			e[3].TS++
			in.Entries = e
		}, EntryMismatch, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := build(t, 5)
			in := f.input()
			c.mutate(t, f, &in)
			res := Verify(in)
			if c.reason == "" {
				if res.Failure != nil || res.Verified != 5 || res.Rules[checkpoint.RuleSeedV1] != 5 || res.Head != f.entries[4] {
					t.Fatalf("valid chain: %+v", res)
				}
				return
			}
			if res.Failure == nil || res.Failure.Reason != c.reason || res.Failure.Index != c.index || res.Verified != min(c.index, 5) {
				t.Fatalf("got %+v (verified %d), want %s at %d", res.Failure, res.Verified, c.reason, c.index)
			}
		})
	}
}

// A partial import continues from a trusted entry.
func TestVerifyFromTrusted(t *testing.T) {
	f := build(t, 4)
	in := f.input()
	in.Trusted, in.Entries = &f.entries[1], f.entries[2:]
	if res := Verify(in); res.Failure != nil || res.Verified != 2 {
		t.Fatalf("%+v", res)
	}
	in.Trusted = &f.entries[0]
	if res := Verify(in); res.Failure == nil || res.Failure.Reason != BrokenChain {
		t.Fatalf("continuation of the wrong entry accepted: %+v", res)
	}
}
