package integration

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// The tamper corpus: a realistic memory branch (three devices, checkpoints
// with embeddings and injections, signed snapshots and their timelines,
// device keys) on a real bare remote, then thousands of seeded random
// mutations of what the remote serves. Each mutated branch is pulled by the
// real `git ctx pull` of a puller that had pulled an earlier state; the
// puller is reset in between (refs + cache file), so every pull starts from
// the same place. The safety property asserted for every mutation: nothing
// that is not byte-identical to the honest branch ever reaches the
// puller's ghyll/memory, nothing the puller had is lost, and the result
// verifies. Outcomes are counted: rejected at pull (non-zero exit,
// quarantine), or harmless (exit 0, the result is a subset of the honest
// branch: the mutation was a no-op, withheld news, or touched only what the
// union merge keeps from the local side).
//
// Run more: go test -tags sqlite_fts5 ./integration -run TestTamperCorpus \
//   -tamper.seed=N -tamper.n=20000   (or GIT_CTX_TAMPER_SEED / GIT_CTX_TAMPER_N)

var (
	tamperSeed = flag.Uint64("tamper.seed", 0, "seed of the tamper corpus (0: the fixed CI seed, or $GIT_CTX_TAMPER_SEED)")
	tamperN    = flag.Int("tamper.n", 0, "number of mutations of the tamper corpus (0: the CI default, or $GIT_CTX_TAMPER_N)")
)

const (
	tamperCISeed = 20261130
	tamperCIN    = 1000
	// every tamperHonestEvery-th pull serves the untampered branch.
	tamperHonestEvery = 20
	// pullers running at once (each with its own copy of the remote).
	tamperWorkers = 3
)

// tEntry is one path of a tree: a git mode and the blob bytes (for a gitlink
// the commit id in hex).
type tEntry struct {
	mode string
	data []byte
}

type tTree map[string]tEntry

func (t tTree) clone() tTree {
	out := make(tTree, len(t))
	for k, v := range t {
		out[k] = v
	}
	return out
}

func (t tTree) equal(o tTree) bool {
	if len(t) != len(o) {
		return false
	}
	for k, v := range t {
		w, ok := o[k]
		if !ok || w.mode != v.mode || !bytes.Equal(w.data, v.data) {
			return false
		}
	}
	return true
}

func (t tTree) paths() []string {
	out := make([]string, 0, len(t))
	for p := range t {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ---- loose objects, written and read in process ----

type objStore struct{ dir string } // a git dir (bare repository or .git)

func (s objStore) write(typ string, content []byte) (string, error) {
	header := typ + " " + strconv.Itoa(len(content)) + "\x00"
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(content)
	id := hex.EncodeToString(h.Sum(nil))
	final := filepath.Join(s.dir, "objects", id[:2], id[2:])
	if _, err := os.Stat(final); err == nil {
		return id, nil
	}
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write([]byte(header))
	zw.Write(content)
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("compress %s: %w", id, err)
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", fmt.Errorf("write object: %w", err)
	}
	tmp := final + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, buf.Bytes(), 0o444); err != nil {
		return "", fmt.Errorf("write object %s: %w", id, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("write object %s: %w", id, err)
	}
	return id, nil
}

// writeTree stores t as nested tree objects and returns the root tree id.
func (s objStore) writeTree(t tTree) (string, error) {
	type node struct {
		files map[string]tEntry
		dirs  map[string]*node
	}
	root := &node{files: map[string]tEntry{}, dirs: map[string]*node{}}
	for p, e := range t {
		parts := strings.Split(p, "/")
		n := root
		for _, d := range parts[:len(parts)-1] {
			c := n.dirs[d]
			if c == nil {
				c = &node{files: map[string]tEntry{}, dirs: map[string]*node{}}
				n.dirs[d] = c
			}
			n = c
		}
		n.files[parts[len(parts)-1]] = e
	}
	var write func(n *node) (string, error)
	write = func(n *node) (string, error) {
		type ent struct {
			sortKey, name, mode string
			id                  []byte
		}
		var ents []ent
		for name, e := range n.files {
			var idHex string
			var err error
			if e.mode == "160000" {
				idHex = string(e.data)
			} else if idHex, err = s.write("blob", e.data); err != nil {
				return "", err
			}
			id, err := hex.DecodeString(idHex)
			if err != nil {
				return "", fmt.Errorf("entry %s: %w", name, err)
			}
			ents = append(ents, ent{name, name, e.mode, id})
		}
		for name, c := range n.dirs {
			idHex, err := write(c)
			if err != nil {
				return "", err
			}
			id, _ := hex.DecodeString(idHex)
			ents = append(ents, ent{name + "/", name, "40000", id})
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].sortKey < ents[j].sortKey })
		var buf bytes.Buffer
		for _, e := range ents {
			buf.WriteString(e.mode + " " + e.name + "\x00")
			buf.Write(e.id)
		}
		return s.write("tree", buf.Bytes())
	}
	return write(root)
}

func (s objStore) writeCommit(tree string, parents []string, msg string) (string, error) {
	var b strings.Builder
	b.WriteString("tree " + tree + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p + "\n")
	}
	b.WriteString("author Mallory <mallory@example.org> 1764460800 +0000\n")
	b.WriteString("committer Mallory <mallory@example.org> 1764460800 +0000\n\n")
	b.WriteString(msg + "\n")
	return s.write("commit", []byte(b.String()))
}

// setRef writes a loose ref (it overrides packed-refs).
func (s objStore) setRef(name, id string) error {
	p := filepath.Join(s.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(id+"\n"), 0o644)
}

// readTree lists the tree of rev with git itself (setup only).
func readTree(t *testing.T, dir string, env []string, rev string) tTree {
	t.Helper()
	out := mustRun(t, dir, env, "git", "ls-tree", "-r", "-z", "--full-tree", rev)
	tr := tTree{}
	var blobs []string
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, path, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		tr[path] = tEntry{mode: f[0]}
		if f[1] == "blob" {
			blobs = append(blobs, f[2])
			paths = append(paths, path)
		} else {
			tr[path] = tEntry{mode: f[0], data: []byte(f[2])}
		}
	}
	r := execute(t, dir, env, []byte(strings.Join(blobs, "\n")+"\n"), "git", "cat-file", "--batch")
	if r.code != 0 {
		t.Fatalf("cat-file --batch: %s", r)
	}
	rest := r.stdout
	for i, p := range paths {
		hdr, after, _ := strings.Cut(rest, "\n")
		f := strings.Fields(hdr)
		if len(f) != 3 || f[0] != blobs[i] {
			t.Fatalf("cat-file --batch header %q for %s", hdr, p)
		}
		n, _ := strconv.Atoi(f[2])
		tr[p] = tEntry{mode: tr[p].mode, data: []byte(after[:n])}
		rest = after[n+1:]
	}
	return tr
}

// ---- the fixture ----

type tamperWorld struct {
	s        *sandbox
	bare     string
	repoID   string
	ids      map[string]string // device name -> id
	honest   tTree             // the remote's branch: what the puller must end up with
	pre      tTree             // the puller's branch before each pull
	honestT  string            // honest tip commit
	history  []string          // honest commits, newest first
	owner    map[string]string // path -> device id owning it ("" = shared)
	label    map[string]string // path -> a name independent of random ids and hashes
	kinds    map[string]string // path -> record kind (see tamperKinds)
	puller   *syncDevice
	preTip   string // puller's ghyll/memory before each pull
	preTrack string // puller's refs/remotes/origin/ghyll/memory before each pull
	preCache map[string][]byte
}

// tamperKinds classifies a path of the ctx-v1 layout into a record kind.
// Record kinds added later (packages, sessions) add a line here and, when
// they have their own mutation, an entry in tamperMutations.
var tamperKinds = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"layout", regexp.MustCompile(`^(LAYOUT|REPO)$`)},
	{"key", regexp.MustCompile(`^devices/[^/]+\.pub$`)},
	{"checkpoint", regexp.MustCompile(`^repos/[0-9a-f]{64}/checkpoints/[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{64}\.json$`)},
	{"chain", regexp.MustCompile(`^repos/[0-9a-f]{64}/chains/[^/]+/[0-9]{8}\.jsonl$`)},
	{"snapshot", regexp.MustCompile(`^repos/[0-9a-f]{64}/snapshots/[0-9a-f]{2}/[0-9a-f]{64}\.json$`)},
	{"timeline", regexp.MustCompile(`^repos/[0-9a-f]{64}/timelines/[^/]+/[0-9]{8}\.jsonl$`)},
}

func tamperKindOf(p string) string {
	for _, k := range tamperKinds {
		if k.re.MatchString(p) {
			return k.kind
		}
	}
	return "other"
}

var tamperHexRE = regexp.MustCompile(`[0-9a-f]{64}`)

// newTamperWorld builds the remote: A, B and C push checkpoints (with
// embeddings, injections, files, tools) and signed snapshots; the puller P
// pulls once in the middle, so the final branch holds both records P has
// and records that are news to it.
func newTamperWorld(t *testing.T) *tamperWorld {
	t.Helper()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	w := &tamperWorld{s: s, bare: rem.bare, ids: map[string]string{}}
	p := tstTamperHistory(t, s, rem, w)
	w.puller = p
	env := s.env("setup")
	w.honestT = syncBareTip(t, s, w.bare)
	w.history = strings.Fields(gitOut(t, w.bare, env, "rev-list", memRef))
	w.honest = readTree(t, w.bare, env, w.honestT)
	w.preTip = p.tip(t)
	w.preTrack = gitOut(t, p.dir, p.env, "rev-parse", "refs/remotes/origin/ghyll/memory")
	w.pre = readTree(t, p.dir, p.env, w.preTip)
	w.repoID = status(t, p.dir, p.env).RepoID

	tstTamperOwners(w)
	tstTamperLabels(w)
	counts := tstTamperCheckFixture(t, w)
	// Thousands of fetches and loose objects must not start a background gc.
	p.git(t, "config", "gc.auto", "0")
	p.git(t, "config", "maintenance.auto", "false")
	gitOut(t, w.bare, env, "config", "gc.auto", "0")
	w.preCache = tamperReadCache(t, p)
	t.Logf("tamper fixture: %d paths on the remote (%v), %d already pulled", len(w.honest), counts, len(w.pre))
	return w
}

// tstTamperHistory: A, B and C push checkpoints (with embeddings,
// injections, files, tools) and signed snapshots to rem; the puller P
// (returned) pulls once in the middle. Fills w.ids.
func tstTamperHistory(t *testing.T, s *sandbox, rem *syncRemote, w *tamperWorld) *syncDevice {
	t.Helper()
	emb := filepath.Join(s.root, "emb.json")
	writeFile(t, emb, "[0.25, -1, 0.5, 0.125]")

	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	a.must(t, "checkpoint", "-m", "a1: chose sqlite", "--session", "s1", "--turn", "1", "--model", "m-1", "--file", "db.go", "--tool", "edit")
	a.must(t, "checkpoint", "-m", "a2: schema", "--session", "s1", "--turn", "2", "--emb-file", emb, "--injection", "cp-a1")
	a.must(t, "snapshot", "create", "--sign")
	a.must(t, "push")
	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	b.must(t, "checkpoint", "-m", "b1: read the schema", "--injection", "cp-a2", "--injection", "snap")
	b.must(t, "sync")
	c := syncCloneDevice(t, s, rem, "C")
	c.must(t, "pull")
	c.must(t, "checkpoint", "-m", "c1: frontend", "--file", "ui.ts")
	c.must(t, "snapshot", "create", "--sign")
	c.must(t, "sync")

	p := syncCloneDevice(t, s, rem, "P")
	p.must(t, "pull")

	a.must(t, "pull")
	a.must(t, "checkpoint", "-m", "a3: migration", "--emb-file", emb, "--tool", "bash", "--file", "m.sql")
	a.must(t, "checkpoint", "-m", "a4: more", "--injection", "b1")
	a.must(t, "snapshot", "create", "--sign")
	a.must(t, "sync")
	b.must(t, "pull")
	b.must(t, "checkpoint", "-m", "b2: api", "--emb-file", emb)
	b.must(t, "checkpoint", "-m", "b3: tests", "--session", "s9", "--turn", "7")
	b.must(t, "snapshot", "create", "--sign")
	b.must(t, "sync")
	c.must(t, "pull")
	c.must(t, "checkpoint", "-m", "c2: css")
	c.must(t, "sync")

	for _, d := range []*syncDevice{a, b, c} {
		w.ids[d.name] = d.id(t)
	}
	return p
}

// tstTamperOwners fills w.kinds and w.owner for every honest path: keys,
// chains and timelines by their device, checkpoints and snapshots by the
// device whose chain or timeline names them.
func tstTamperOwners(w *tamperWorld) {
	w.owner, w.kinds = map[string]string{}, map[string]string{}
	cpOwner := map[string]string{}
	for path, e := range w.honest {
		w.kinds[path] = tamperKindOf(path)
		parts := strings.Split(path, "/")
		switch w.kinds[path] {
		case "key":
			w.owner[path] = strings.TrimSuffix(parts[1], ".pub")
		case "chain", "timeline":
			dev := parts[3]
			w.owner[path] = dev
			for _, h := range tamperHexRE.FindAllString(string(e.data), -1) {
				cpOwner[h] = dev
			}
		}
	}
	for path := range w.honest {
		if k := w.kinds[path]; k == "checkpoint" || k == "snapshot" {
			w.owner[path] = cpOwner[strings.TrimSuffix(filepath.Base(path), ".json")]
		}
	}
}

// tstTamperLabels fills w.label: stable labels (device name, position in
// its chain or timeline), so a seed picks the same records whatever the
// random device ids and the time-dependent hashes are.
func tstTamperLabels(w *tamperWorld) {
	name := map[string]string{}
	for n, id := range w.ids {
		name[id] = n
	}
	w.label = map[string]string{}
	pos := map[string]string{}
	for path, e := range w.honest {
		k := w.kinds[path]
		if k != "chain" && k != "timeline" {
			continue
		}
		for i, l := range splitLines(e.data) {
			var v map[string]any
			if json.Unmarshal(l, &v) == nil {
				for _, key := range []string{"hash", "snapshot_id"} {
					if h, ok := v[key].(string); ok {
						pos[h] = fmt.Sprintf("%s/%03d", name[w.owner[path]], i)
					}
				}
			}
		}
	}
	for path := range w.honest {
		switch k := w.kinds[path]; k {
		case "checkpoint", "snapshot":
			w.label[path] = k + "/" + pos[strings.TrimSuffix(filepath.Base(path), ".json")]
		case "layout":
			w.label[path] = k
		default:
			w.label[path] = k + "/" + name[w.owner[path]] + "/" + filepath.Base(path)
		}
	}
}

// tstTamperCheckFixture: every honest path has a known kind and (but
// LAYOUT and REPO) an owner, the branch holds what the fixture made, the
// puller lacks some of it and has pinned every key. Returns the paths per
// kind.
func tstTamperCheckFixture(t *testing.T, w *tamperWorld) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for path := range w.honest {
		counts[w.kinds[path]]++
		if w.kinds[path] == "other" {
			t.Fatalf("setup: honest path %s of no known kind", path)
		}
		if w.kinds[path] != "layout" && w.owner[path] == "" {
			t.Fatalf("setup: honest path %s has no owner", path)
		}
	}
	if counts["checkpoint"] != 9 || counts["snapshot"] != 4 || counts["key"] != 3 || counts["chain"] != 3 || counts["timeline"] != 3 {
		t.Fatalf("setup: unexpected branch: %v", counts)
	}
	if len(w.pre) >= len(w.honest) {
		t.Fatalf("setup: the puller already has everything")
	}
	// The puller is already pinned to every key it will see.
	for path := range w.honest {
		if w.kinds[path] == "key" {
			if _, ok := w.pre[path]; !ok {
				t.Fatalf("setup: the puller has not pinned %s", path)
			}
		}
	}
	return counts
}

func tamperCacheDir(p *syncDevice) string { return filepath.Join(p.dir, ".git", "ctx") }

// tamperReadCache saves every file of the puller's ctx directory but the
// lock files.
func tamperReadCache(t *testing.T, p *syncDevice) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(tamperCacheDir(p))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		out[e.Name()] = readFile(t, filepath.Join(tamperCacheDir(p), e.Name()))
	}
	return out
}

// newDevicePath: path is the key, chain or timeline of a device that is not
// one of the fixture's devices.
func (w *tamperWorld) newDevicePath(path string) bool {
	dev := ""
	parts := strings.Split(path, "/")
	switch tamperKindOf(path) {
	case "key":
		dev = strings.TrimSuffix(parts[1], ".pub")
	case "chain", "timeline":
		dev = parts[3]
	default:
		return false
	}
	for _, id := range w.ids {
		if id == dev {
			return false
		}
	}
	return true
}

// ---- mutations ----

// tamperMut is one mutation: it edits the served tree and says which paths
// it touched (for attributing collateral damage to devices).
type tamperMut struct {
	name  string
	kinds []string // record kinds it applies to (nil: any path)
	apply func(m *mutator, path string) bool
}

type mutator struct {
	w       *tamperWorld
	rng     *rand.Rand
	tree    tTree
	touched map[string]bool
	global  bool // touches everything (LAYOUT, history)
}

func (m *mutator) set(path string, e tEntry) {
	m.global = m.global || path == "LAYOUT"
	m.tree[path] = e
	m.touched[path] = true
}

func (m *mutator) del(path string) {
	m.global = m.global || path == "LAYOUT"
	delete(m.tree, path)
	m.touched[path] = true
}

func (m *mutator) pick(kinds ...string) string {
	var cand []string
	all := m.tree.paths()
	lbl := func(p string) string {
		if l, ok := m.w.label[p]; ok {
			return l
		}
		return "~" + p // added by an earlier mutation
	}
	sort.SliceStable(all, func(i, j int) bool { return lbl(all[i]) < lbl(all[j]) })
	for _, p := range all {
		if len(kinds) == 0 {
			cand = append(cand, p)
			continue
		}
		for _, k := range kinds {
			if tamperKindOf(p) == k {
				cand = append(cand, p)
			}
		}
	}
	if len(cand) == 0 {
		return ""
	}
	return cand[m.rng.IntN(len(cand))]
}

func (m *mutator) otherDevice(not string) string {
	var ids []string
	for _, n := range []string{"A", "B", "C"} {
		if m.w.ids[n] != not {
			ids = append(ids, m.w.ids[n])
		}
	}
	return ids[m.rng.IntN(len(ids))]
}

func (m *mutator) hex64() string {
	b := make([]byte, 32)
	for i := range b {
		b[i] = byte(m.rng.IntN(256))
	}
	return hex.EncodeToString(b)
}

// jsonValueEnd returns the end of the JSON value starting at data[i].
func jsonValueEnd(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			if data[j] == '\\' {
				j++
			} else if data[j] == '"' {
				return j + 1
			}
		}
		return len(data)
	case '[', '{':
		depth, inStr := 0, false
		for j := i; j < len(data); j++ {
			c := data[j]
			switch {
			case inStr && c == '\\':
				j++
			case c == '"':
				inStr = !inStr
			case !inStr && (c == '[' || c == '{'):
				depth++
			case !inStr && (c == ']' || c == '}'):
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	default:
		j := i
		for j < len(data) && !strings.ContainsRune(",}]\n \t", rune(data[j])) {
			j++
		}
		return j
	}
}

var tamperMemberRE = regexp.MustCompile(`"([A-Za-z_0-9]+)":\s*`)

// editField changes one JSON member of data (one of several edits).
func (m *mutator) editField(data []byte) []byte {
	locs := tamperMemberRE.FindAllSubmatchIndex(data, -1)
	if len(locs) == 0 {
		return nil
	}
	l := locs[m.rng.IntN(len(locs))]
	keyStart, keyEnd, vs := l[0], l[3]+1, l[1]
	ve := jsonValueEnd(data, vs)
	val := data[vs:ve]
	out := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	switch m.rng.IntN(8) {
	case 0: // change one character of the value
		if len(val) == 0 {
			return nil
		}
		k := m.rng.IntN(len(val))
		nv := append([]byte{}, val...)
		const alphabet = "0123456789abcdefABCDEF-xyz "
		nv[k] = alphabet[m.rng.IntN(len(alphabet))]
		return out(data[:vs], nv, data[ve:])
	case 1: // null
		return out(data[:vs], []byte("null"), data[ve:])
	case 2: // another type
		repl := []string{`""`, `0`, `-1`, `[]`, `{}`, `true`, `"` + m.hex64() + `"`, `1e400`, `"\u0000"`}
		return out(data[:vs], []byte(repl[m.rng.IntN(len(repl))]), data[ve:])
	case 3: // number +1 / string with a character appended
		if len(val) > 0 && val[0] == '"' {
			return out(data[:ve-1], []byte("x"), data[ve-1:])
		}
		if n, err := strconv.ParseInt(string(val), 10, 64); err == nil {
			return out(data[:vs], []byte(strconv.FormatInt(n+1, 10)), data[ve:])
		}
		return out(data[:vs], []byte(`"`), val, []byte(`"`), data[ve:])
	case 4: // delete the member
		end := ve
		if end < len(data) && data[end] == ',' {
			end++
		} else {
			// the last member: drop the comma before it
			j := keyStart - 1
			for j >= 0 && (data[j] == ' ' || data[j] == '\n' || data[j] == '\t') {
				j--
			}
			if j >= 0 && data[j] == ',' {
				return out(data[:j], data[ve:])
			}
		}
		return out(data[:keyStart], data[end:])
	case 5: // duplicate the member
		return out(data[:ve], []byte(","), data[keyStart:ve], data[ve:])
	case 6: // key in another case
		key := bytes.ToUpper(data[keyStart+1 : keyEnd-1])
		return out(data[:keyStart+1], key, data[keyEnd-1:])
	default: // the value of another member of the same file
		o := locs[m.rng.IntN(len(locs))]
		ovs := o[1]
		ove := jsonValueEnd(data, ovs)
		return out(data[:vs], append([]byte{}, data[ovs:ove]...), data[ve:])
	}
}

func splitLines(data []byte) [][]byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// tamperMutations is the table of mutation kinds. A new record kind gets
// its own entries (or reuses these through its kind name).
var tamperMutations = []tamperMut{
	{"byte flip", nil, func(m *mutator, p string) bool {
		e := m.tree[p]
		if len(e.data) == 0 || e.mode == "160000" {
			return false
		}
		d := append([]byte{}, e.data...)
		d[m.rng.IntN(len(d))] ^= byte(1 + m.rng.IntN(255))
		m.set(p, tEntry{e.mode, d})
		return true
	}},
	{"field edit", []string{"checkpoint", "snapshot", "chain", "timeline"}, func(m *mutator, p string) bool {
		e := m.tree[p]
		data := e.data
		if k := tamperKindOf(p); k == "chain" || k == "timeline" {
			lines := splitLines(data)
			i := m.rng.IntN(len(lines))
			nl := m.editField(lines[i])
			if nl == nil {
				return false
			}
			lines[i] = nl
			data = bytes.Join(lines, nil)
		} else if data = m.editField(data); data == nil {
			return false
		}
		m.set(p, tEntry{e.mode, data})
		return true
	}},
	{"hash of another record", []string{"checkpoint", "chain", "timeline", "snapshot"}, func(m *mutator, p string) bool {
		e := m.tree[p]
		hs := tamperHexRE.FindAllIndex(e.data, -1)
		if len(hs) == 0 {
			return false
		}
		all := tamperHexRE.FindAllString(string(m.w.honest[m.pick("chain", "timeline")].data), -1)
		if len(all) == 0 {
			return false
		}
		h := hs[m.rng.IntN(len(hs))]
		d := bytes.Join([][]byte{e.data[:h[0]], []byte(all[m.rng.IntN(len(all))]), e.data[h[1]:]}, nil)
		m.set(p, tEntry{e.mode, d})
		return true
	}},
	{"chain line deleted", []string{"chain", "timeline"}, func(m *mutator, p string) bool {
		lines := splitLines(m.tree[p].data)
		if len(lines) == 0 {
			return false
		}
		i := m.rng.IntN(len(lines))
		lines = append(lines[:i:i], lines[i+1:]...)
		m.set(p, tEntry{"100644", bytes.Join(lines, nil)})
		return true
	}},
	{"chain line duplicated", []string{"chain", "timeline"}, func(m *mutator, p string) bool {
		lines := splitLines(m.tree[p].data)
		if len(lines) == 0 {
			return false
		}
		i, j := m.rng.IntN(len(lines)), m.rng.IntN(len(lines)+1)
		nl := append(append(append([][]byte{}, lines[:j]...), lines[i]), lines[j:]...)
		m.set(p, tEntry{"100644", bytes.Join(nl, nil)})
		return true
	}},
	{"chain lines reordered", []string{"chain", "timeline"}, func(m *mutator, p string) bool {
		lines := splitLines(m.tree[p].data)
		if len(lines) < 2 {
			return false
		}
		m.rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		m.set(p, tEntry{"100644", bytes.Join(lines, nil)})
		return true
	}},
	{"chain line of another device", []string{"chain", "timeline"}, func(m *mutator, p string) bool {
		q := m.pick(tamperKindOf(p))
		src := splitLines(m.tree[q].data)
		if len(src) == 0 {
			return false
		}
		lines := splitLines(m.tree[p].data)
		if len(lines) == 0 {
			return false
		}
		lines = append(lines, src[m.rng.IntN(len(src))])
		m.set(p, tEntry{"100644", bytes.Join(lines, nil)})
		return true
	}},
	{"truncated", nil, func(m *mutator, p string) bool {
		e := m.tree[p]
		if len(e.data) == 0 || e.mode == "160000" {
			return false
		}
		m.set(p, tEntry{e.mode, e.data[:m.rng.IntN(len(e.data))]})
		return true
	}},
	{"garbage appended", nil, func(m *mutator, p string) bool {
		e := m.tree[p]
		if e.mode == "160000" {
			return false
		}
		junk := [][]byte{[]byte("\n"), []byte(" "), []byte("{}\n"), []byte("\x00"), bytes.Repeat([]byte("A"), 600), []byte("\n\n")}
		m.set(p, tEntry{e.mode, append(append([]byte{}, e.data...), junk[m.rng.IntN(len(junk))]...)})
		return true
	}},
	{"file deleted", nil, func(m *mutator, p string) bool {
		m.del(p)
		return true
	}},
	{"file renamed", []string{"checkpoint", "snapshot", "chain", "timeline", "key"}, func(m *mutator, p string) bool {
		e := m.tree[p]
		dir, base := filepath.Dir(p), filepath.Base(p)
		var np string
		switch tamperKindOf(p) {
		case "checkpoint", "snapshot":
			h := m.hex64()
			if m.rng.IntN(2) == 0 { // same fan-out directory
				h = base[:2] + h[2:]
			}
			np = filepath.Dir(dir) + "/" + h[:2] + "/" + h + ".json"
		case "chain", "timeline":
			np = dir + "/" + fmt.Sprintf("%08d", 1+m.rng.IntN(3)) + ".jsonl"
		case "key":
			np = "devices/" + m.otherDevice("") + "x.pub"
		}
		m.del(p)
		m.set(np, e)
		return true
	}},
	{"record moved to another fan-out directory", []string{"checkpoint", "snapshot"}, func(m *mutator, p string) bool {
		e := m.tree[p]
		base := filepath.Base(p)
		fan := fmt.Sprintf("%02x", m.rng.IntN(256))
		if fan == base[:2] {
			return false
		}
		m.del(p)
		m.set(filepath.Dir(filepath.Dir(p))+"/"+fan+"/"+base, e)
		return true
	}},
	{"file duplicated", []string{"checkpoint", "snapshot", "chain", "timeline", "key"}, func(m *mutator, p string) bool {
		e := m.tree[p]
		var np string
		switch tamperKindOf(p) {
		case "checkpoint", "snapshot":
			np = filepath.Dir(p) + "/" + m.hex64() + ".json"
		case "chain", "timeline":
			np = filepath.Dir(p) + "/00000001.jsonl"
		case "key":
			np = "devices/" + m.hex64()[:8] + ".pub"
		}
		m.set(np, e)
		return true
	}},
	{"moved to another device's directory", []string{"chain", "timeline"}, func(m *mutator, p string) bool {
		parts := strings.Split(p, "/")
		other := m.otherDevice(parts[3])
		parts[3] = other
		np := strings.Join(parts, "/")
		e := m.tree[p]
		if m.rng.IntN(2) == 0 {
			m.del(p)
		}
		m.set(np, e)
		return true
	}},
	{"device keys swapped", []string{"key"}, func(m *mutator, p string) bool {
		q := "devices/" + m.otherDevice(strings.TrimSuffix(filepath.Base(p), ".pub")) + ".pub"
		a, b := m.tree[p], m.tree[q]
		if b.mode == "" {
			return false
		}
		m.set(p, b)
		m.set(q, a)
		return true
	}},
	{"device key replaced", []string{"key"}, func(m *mutator, p string) bool {
		m.set(p, tEntry{"100644", []byte(m.w.freshKey(m.rng))})
		return true
	}},
	{"new device claims a record", []string{"chain", "timeline"}, func(m *mutator, p string) bool {
		parts := strings.Split(p, "/")
		parts[3] = "mallory-" + m.hex64()[:8]
		m.set("devices/"+parts[3]+".pub", tEntry{"100644", []byte(m.w.freshKey(m.rng))})
		m.set(strings.Join(parts, "/"), m.tree[p])
		return true
	}},
	{"unexpected path", nil, func(m *mutator, p string) bool {
		names := []string{"README", "devices/notes.txt", "repos/" + m.w.repoID + "/extra.json",
			"repos/" + m.w.repoID + "/checkpoints/zz/x.json", "repos/" + m.hex64() + "/chains/x/00000000.jsonl",
			"repos/" + m.w.repoID + "/packages/p/1.ctxpkg", ".gitattributes", "devices/.gitkeep",
			tamperJoin(filepath.Dir(p), "."+filepath.Base(p)), p + ".orig"}
		e := m.tree[p]
		m.set(names[m.rng.IntN(len(names))], tEntry{"100644", e.data})
		return true
	}},
	{"mode changed", nil, func(m *mutator, p string) bool {
		e := m.tree[p]
		switch m.rng.IntN(3) {
		case 0:
			m.set(p, tEntry{"100755", e.data})
		case 1:
			m.set(p, tEntry{"120000", []byte("../../../../etc/passwd")})
		default:
			m.set(p, tEntry{"160000", []byte(m.w.honestT)})
		}
		return true
	}},
	{"LAYOUT changed", []string{"layout"}, func(m *mutator, p string) bool {
		vals := []string{"ghyll-v1\n", "ctx-v2\n", "", "ctx-v1", " ctx-v1 \n", "ctx-v1\n\n"}
		m.set(p, tEntry{"100644", []byte(vals[m.rng.IntN(len(vals))])})
		m.global = true
		return true
	}},
}

// freshKey returns one of a few valid public keys nobody owns.
func (w *tamperWorld) freshKey(rng *rand.Rand) string {
	return tamperKeys[rng.IntN(len(tamperKeys))]
}

var tamperKeys []string

// mutate makes one tampered tree (1–3 mutations) and the list of names of
// the mutations applied.
func (w *tamperWorld) mutate(rng *rand.Rand) (*mutator, []string) {
	m := &mutator{w: w, rng: rng, tree: w.honest.clone(), touched: map[string]bool{}}
	var names []string
	n := 1
	if rng.IntN(4) == 0 {
		n = 2 + rng.IntN(2)
	}
	for len(names) < n {
		mu := tamperMutations[rng.IntN(len(tamperMutations))]
		p := m.pick(mu.kinds...)
		if p == "" || !mu.apply(m, p) {
			continue
		}
		names = append(names, mu.name+" ("+tamperKindOf(p)+")")
	}
	return m, names
}

// tamperRegressions are fixed mutations, each once a bug the corpus found.
var tamperRegressions = []struct {
	name  string
	apply func(m *mutator) bool
}{
	{"symlink at a snapshot path a new timeline entry names (pull aborted: sync/snapshots.go)", func(m *mutator) bool {
		for _, p := range m.tree.paths() {
			if _, had := m.w.pre[p]; !had && tamperKindOf(p) == "snapshot" {
				m.set(p, tEntry{"120000", []byte("../../../../etc/passwd")})
				return true
			}
		}
		return false
	}},
	{"timeline line replayed (merged: gitstore/snapshots.go)", func(m *mutator) bool {
		for _, p := range m.tree.paths() {
			if _, had := m.w.pre[p]; !had && tamperKindOf(p) == "timeline" {
				d := m.tree[p].data
				lines := splitLines(d)
				m.set(p, tEntry{"100644", append(append([]byte{}, d...), lines[len(lines)-1]...)})
				return true
			}
		}
		return false
	}},
	{"another device's signed timeline line appended (merged as an import: timeline lines were not signed by their owner)", func(m *mutator) bool {
		return m.appendForeignTimelineLine(func(l []byte) []byte { return l })
	}},
	{"another device's timeline entry appended as an unsigned line (merged as an import: timeline lines were not signed by their owner)", func(m *mutator) bool {
		return m.appendForeignTimelineLine(func(l []byte) []byte { return tamperLineSigRE.ReplaceAll(l, nil) })
	}},
}

var tamperLineSigRE = regexp.MustCompile(`,"seq":[0-9]+,"prev":"[0-9a-f]{64}","line_sig":"[0-9a-f]{128}"`)

// appendForeignTimelineLine appends to the first timeline (by path) the
// last line of another device's timeline (naming that device's authentic,
// signed snapshot), passed through form.
func (m *mutator) appendForeignTimelineLine(form func([]byte) []byte) bool {
	var tls []string
	for _, p := range m.tree.paths() {
		if tamperKindOf(p) == "timeline" {
			tls = append(tls, p)
		}
	}
	if len(tls) < 2 {
		return false
	}
	p, q := tls[0], tls[1]
	src := splitLines(m.tree[q].data)
	d := m.tree[p].data
	m.set(p, tEntry{"100644", append(append([]byte{}, d...), form(append([]byte{}, src[len(src)-1]...))...)})
	return true
}

// ---- the test ----

// tamperWorker is one puller and one bare remote (copies of the world's),
// so that pulls can run in parallel.
type tamperWorker struct {
	w        *tamperWorld
	bare     objStore
	dir      string // the puller's checkout
	env      []string
	verified *tamperVerified
}

// tamperVerified: result trees already checked with git ctx verify (shared:
// every worker's remote holds the same objects).
type tamperVerified struct {
	mu   sync.Mutex
	tree map[string]bool
}

func (w *tamperWorld) newWorker(t *testing.T, i int, v *tamperVerified) *tamperWorker {
	t.Helper()
	p := w.puller
	if i == 0 {
		return &tamperWorker{w: w, bare: objStore{w.bare}, dir: p.dir, env: p.env, verified: v}
	}
	s := newSandbox(t)
	wk := &tamperWorker{w: w, bare: objStore{filepath.Join(s.root, "remote.git")}, dir: filepath.Join(s.root, "P"), env: s.env("P"), verified: v}
	syncCopy(t, w.bare, wk.bare.dir)
	syncCopy(t, p.dir, wk.dir)
	syncCopy(t, w.s.ctxHome("P"), s.ctxHome("P"))
	// The puller keeps its remote URL (the repo id is derived from it) but
	// reaches this worker's copy.
	gitOut(t, wk.dir, wk.env, "config", "url."+wk.bare.dir+".insteadOf", w.bare)
	return wk
}

// reset puts the worker's puller back to its state before the pull.
func (wk *tamperWorker) reset() error {
	dir := filepath.Join(wk.dir, ".git", "ctx")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if _, keep := wk.w.preCache[e.Name()]; !keep && !e.IsDir() && !strings.HasSuffix(e.Name(), ".lock") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	for name, data := range wk.w.preCache {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	g := objStore{filepath.Join(wk.dir, ".git")}
	if err := g.setRef(memRef, wk.w.preTip); err != nil {
		return err
	}
	return g.setRef("refs/remotes/origin/ghyll/memory", wk.w.preTrack)
}

// tamperJob is one pull: the tip the remote serves and how it was made.
type tamperJob struct {
	index  int
	tip    string
	honest bool // the untampered branch
	m      *mutator
	names  []string
	// mustReject: a fixed regression case.
	mustReject bool
}

// tamperResult is what the puller ended up with.
type tamperResult struct {
	code       int
	out        string
	got        tTree
	sameRecord bool // a path holds the honest record in other bytes
	err        error
	pullTime   time.Duration
	checkTime  time.Duration
}

// run pulls job's tip into the reset puller and checks the result.
func (wk *tamperWorker) run(job tamperJob) tamperResult {
	var res tamperResult
	if err := wk.reset(); err != nil {
		res.err = fmt.Errorf("reset the puller: %w", err)
		return res
	}
	if err := wk.bare.setRef(memRef, job.tip); err != nil {
		res.err = err
		return res
	}
	t0 := time.Now()
	r, err := syncExec(wk.dir, wk.env, "git", "ctx", "pull")
	res.pullTime = time.Since(t0)
	if err != nil {
		res.err = err
		return res
	}
	res.code, res.out = r.code, r.stdout+r.stderr
	t0 = time.Now()
	res.err = wk.check(&res)
	res.checkTime = time.Since(t0)
	return res
}

// check reads the puller's branch: every path holds what the honest branch
// (or the puller before the pull) holds, nothing the puller had is gone, and
// the branch verifies (once per distinct tree).
func (wk *tamperWorker) check(res *tamperResult) error {
	w := wk.w
	tip, err := os.ReadFile(filepath.Join(wk.dir, ".git", filepath.FromSlash(memRef)))
	if err != nil {
		return fmt.Errorf("read the puller's branch: %w", err)
	}
	tree, got, err := tamperReadCommitTree(filepath.Join(wk.dir, ".git"), strings.TrimSpace(string(tip)))
	if err != nil {
		return err
	}
	res.got = got
	for path, e := range got {
		if !tstTamperPathOK(w, path, e, res) {
			return fmt.Errorf("tampered content merged: %s (mode %s, %d bytes)", path, e.mode, len(e.data))
		}
	}
	for path := range w.pre {
		if _, ok := got[path]; !ok {
			return fmt.Errorf("the puller lost %s", path)
		}
	}
	return tstTamperVerifyOnce(wk, tree)
}

// tstTamperPathOK: the puller may hold e at path: the honest content, a new
// device's own file, its own earlier version, the verified prefix of an
// honest chain or timeline, or the same record in other bytes (which sets
// res.sameRecord).
func tstTamperPathOK(w *tamperWorld, path string, e tEntry, res *tamperResult) bool {
	h, ok := w.honest[path]
	if ok && h.mode == e.mode && bytes.Equal(h.data, e.data) {
		return true
	}
	if !ok && w.newDevicePath(path) && e.mode == "100644" {
		// TOFU: a device nobody has seen before may publish its own
		// key and its own records; the collateral check shows it
		// cannot touch other devices'.
		return true
	}
	if pe, had := w.pre[path]; had && pe.mode == e.mode && bytes.Equal(pe.data, e.data) {
		return true // the puller's own version (a shorter chain)
	}
	if k := tamperKindOf(path); ok && (k == "chain" || k == "timeline") && e.mode == "100644" &&
		bytes.HasPrefix(h.data, e.data) && bytes.HasSuffix(e.data, []byte("\n")) {
		return true // the verified prefix of an honest chain
	}
	if ok && h.mode == e.mode && tamperSameRecord(path, h.data, e.data) {
		res.sameRecord = true
		return true
	}
	return false
}

// tstTamperVerifyOnce runs git ctx verify in the worker's checkout, once
// per distinct tree (shared by all workers).
func tstTamperVerifyOnce(wk *tamperWorker, tree string) error {
	wk.verified.mu.Lock()
	done := wk.verified.tree[tree]
	wk.verified.mu.Unlock()
	if !done {
		r, err := syncExec(wk.dir, wk.env, "git", "ctx", "verify")
		if err != nil {
			return err
		}
		if r.code != 0 {
			return fmt.Errorf("the puller's branch no longer verifies:\n%s", r)
		}
		wk.verified.mu.Lock()
		wk.verified.tree[tree] = true
		wk.verified.mu.Unlock()
	}
	return nil
}

// tamperReadCommitTree reads commit's tree from the loose objects and packs
// of gitDir (in process: cheaper than two git commands per pull).
func tamperReadCommitTree(gitDir, commit string) (string, tTree, error) {
	repo := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	defer repo.Close()
	c, err := object.GetCommit(repo, plumbing.NewHash(commit))
	if err != nil {
		return "", nil, fmt.Errorf("read commit %s: %w", commit, err)
	}
	tr, err := c.Tree()
	if err != nil {
		return "", nil, fmt.Errorf("read tree of %s: %w", commit, err)
	}
	out := tTree{}
	walker := object.NewTreeWalker(tr, true, nil)
	defer walker.Close()
	for {
		name, e, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, fmt.Errorf("walk tree of %s: %w", commit, err)
		}
		if e.Mode == filemode.Dir {
			continue
		}
		mode := strings.TrimLeft(e.Mode.String(), "0")
		if e.Mode == filemode.Submodule {
			out[name] = tEntry{mode, []byte(e.Hash.String())}
			continue
		}
		b, err := object.GetBlob(repo, e.Hash)
		if err != nil {
			return "", nil, fmt.Errorf("read %s: %w", name, err)
		}
		rd, err := b.Reader()
		if err != nil {
			return "", nil, err
		}
		data, err := io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return "", nil, err
		}
		out[name] = tEntry{mode, data}
	}
	return tr.Hash.String(), out, nil
}

func TestTamperCorpus(t *testing.T) {
	t.Parallel()
	seed, n := tstTamperSeedAndN()
	t.Logf("tamper corpus: seed %d, %d mutations (override with -tamper.seed / -tamper.n)", seed, n)
	start := time.Now()
	for range 4 {
		tamperKeys = append(tamperKeys, newPublicKeyPEM(t))
	}
	w := newTamperWorld(t)
	workers := make([]*tamperWorker, tamperWorkers)
	verified := &tamperVerified{tree: map[string]bool{}}
	for i := range workers {
		workers[i] = w.newWorker(t, i, verified)
	}
	t.Logf("fixture and %d workers built in %v", len(workers), time.Since(start).Round(time.Millisecond))
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	// Fixed cases first: each is a bug the corpus found (fixed with a
	// regression test of its own where the code lives) and must be rejected
	// with the other devices' news merged.
	var fixed []*mutator
	for _, reg := range tamperRegressions {
		m := &mutator{w: w, rng: rng, tree: w.honest.clone(), touched: map[string]bool{}}
		if !reg.apply(m) {
			t.Fatalf("regression %q does not apply to the fixture", reg.name)
		}
		fixed = append(fixed, m)
	}

	// Every tampered branch is made up front (deterministic for a seed),
	// in the first worker's remote, then copied into the others'.
	var jobs []tamperJob
	for i, m := range fixed {
		tip := tstTamperPublish(t, workers, m.tree, []string{w.honestT}, "ctx: regression "+tamperRegressions[i].name)
		jobs = append(jobs, tamperJob{index: -2 - i, tip: tip, m: m, names: []string{tamperRegressions[i].name}, mustReject: true})
	}
	jobs = append(jobs, tstTamperMutationJobs(t, w, workers, rng, n)...)

	results := tstTamperRunJobs(workers, jobs)
	tally := &tstTamperTally{counts: map[string]int{}, byMut: map[string]map[string]int{}}
	for j, job := range jobs {
		tally.add(t, w, job, results[j])
	}
	tstTamperReport(t, tally, results, seed, n, start, len(workers), len(fixed))
}

// tstTamperSeedAndN is the corpus's seed and size: the CI defaults,
// overridden by GIT_CTX_TAMPER_SEED / GIT_CTX_TAMPER_N, then by the
// -tamper.seed / -tamper.n flags.
func tstTamperSeedAndN() (uint64, int) {
	seed, n := uint64(tamperCISeed), tamperCIN
	if v := os.Getenv("GIT_CTX_TAMPER_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	if *tamperSeed != 0 {
		seed = *tamperSeed
	}
	if v := os.Getenv("GIT_CTX_TAMPER_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	if *tamperN != 0 {
		n = *tamperN
	}
	return seed, n
}

// tstTamperPublish writes tree as a commit on parents with message msg into
// every worker's remote, and returns the commit (the same id in each).
func tstTamperPublish(t *testing.T, workers []*tamperWorker, tree tTree, parents []string, msg string) string {
	t.Helper()
	var first string
	for _, wk := range workers {
		id, err := wk.bare.writeTree(tree)
		if err != nil {
			t.Fatal(err)
		}
		tip, err := wk.bare.writeCommit(id, parents, msg)
		if err != nil {
			t.Fatal(err)
		}
		if wk == workers[0] {
			first = tip
		}
	}
	return first
}

// tstTamperMutationJobs makes n random mutations (a tenth of them on a
// rewritten history), published to every worker, with an untampered pull
// every tamperHonestEvery jobs.
func tstTamperMutationJobs(t *testing.T, w *tamperWorld, workers []*tamperWorker, rng *rand.Rand, n int) []tamperJob {
	t.Helper()
	var jobs []tamperJob
	for i := 0; i < n; i++ {
		if i%tamperHonestEvery == 0 {
			jobs = append(jobs, tamperJob{index: -1, tip: w.honestT, honest: true})
		}
		m, names := w.mutate(rng)
		parents := []string{w.honestT}
		switch rng.IntN(10) {
		case 0: // history rewritten: an orphan commit
			parents = nil
			m.global = true
		case 1: // history rewritten: on top of an older commit
			parents = []string{w.history[1+rng.IntN(len(w.history)-1)]}
			m.global = true
		}
		if m.global && len(names) == 1 && rng.IntN(2) == 0 {
			names = append(names, "history rewritten")
		}
		tip := tstTamperPublish(t, workers, m.tree, parents, fmt.Sprintf("ctx: checkpoint by mallory (mutation %d)", i))
		jobs = append(jobs, tamperJob{index: i, tip: tip, m: m, names: names})
	}
	return jobs
}

// tstTamperRunJobs runs every job on the workers, side by side.
func tstTamperRunJobs(workers []*tamperWorker, jobs []tamperJob) []tamperResult {
	results := make([]tamperResult, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for _, wk := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				results[j] = wk.run(jobs[j])
			}
		}()
	}
	for j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return results
}

// tstTamperTally counts the corpus's outcomes.
type tstTamperTally struct {
	counts     map[string]int            // class -> mutations
	byMut      map[string]map[string]int // class -> mutation name -> count
	honestRuns int
	examples   []string
}

// add checks one job's result and counts it: an untampered pull merges
// everything; a tampered one is rejected or harmless (a regression case
// must be rejected), and never costs an untouched device its news.
func (tl *tstTamperTally) add(t *testing.T, w *tamperWorld, job tamperJob, res tamperResult) {
	t.Helper()
	if job.honest {
		tl.honestRuns++
		if res.err != nil {
			t.Fatalf("untampered pull %d: %v\n%s", tl.honestRuns, res.err, res.out)
		}
		if res.code != 0 || strings.Contains(res.out, "rejected") || !res.got.equal(w.honest) {
			t.Fatalf("the untampered branch was rejected or not merged completely (run %d): exit %d, %d of %d paths\n%s",
				tl.honestRuns, res.code, len(res.got), len(w.honest), res.out)
		}
		return
	}
	m := job.m
	what := fmt.Sprintf("mutation %d %v (touched %v)", job.index, job.names, syncSorted(m.touched))
	if res.err != nil {
		t.Fatalf("%s: %v\npull: exit %d\n%s", what, res.err, res.code, res.out)
	}
	class := tstTamperClass(t, w, what, m, res)
	if job.mustReject {
		if !strings.HasPrefix(class, "rejected") {
			t.Errorf("regression %v: %s\n%s", job.names, class, res.out)
		}
		return
	}
	tl.counts[class]++
	if tl.byMut[class] == nil {
		tl.byMut[class] = map[string]int{}
	}
	for _, nm := range job.names {
		tl.byMut[class][nm]++
	}
	if !strings.HasPrefix(class, "rejected") && len(tl.examples) < 12 && !strings.Contains(class, "no-op") {
		tl.examples = append(tl.examples, what+" -> "+class)
	}
	// Collateral: devices the mutation never touched keep all their news
	// (unless the mutation was global: LAYOUT, history).
	if m.global {
		return
	}
	tstTamperCollateral(t, w, what, m, res)
}

// tstTamperClass classifies the pull of mutation m (described by what);
// a pull that exits 0 while saying it rejected something, or exits with
// neither success nor a rejection, fails the test.
func tstTamperClass(t *testing.T, w *tamperWorld, what string, m *mutator, res tamperResult) string {
	t.Helper()
	got := res.got
	var class string
	switch {
	case m.tree.equal(w.honest):
		class = "harmless: no-op (byte-identical)"
		if res.code != 0 || !got.equal(w.honest) {
			t.Fatalf("%s: a byte-identical branch was not merged: exit %d\n%s", what, res.code, res.out)
		}
	case res.code == 1 || res.code == 6 || res.code == 7:
		class = "rejected at pull (exit " + strconv.Itoa(res.code) + ")"
	case res.code != 0:
		t.Fatalf("%s: pull exited %d (neither success nor a rejection)\n%s", what, res.code, res.out)
	case strings.Contains(res.out, "rejected"):
		t.Fatalf("%s: pull reports a rejection but exits 0\n%s", what, res.out)
	case res.sameRecord:
		class = "harmless: the same record in other bytes (whitespace outside the canonical form)"
	case tamperHasNewDevice(w, got):
		class = "accepted by policy: a new device's own key and records (TOFU); honest devices unaffected"
	case got.equal(w.honest):
		class = "harmless: honest content merged (the tampered part was never needed)"
	case got.equal(w.pre):
		class = "harmless: nothing merged (news withheld)"
	default:
		class = "harmless: honest subset merged (part of the news withheld)"
	}
	return class
}

// tstTamperCollateral: every device mutation m never touched has all its
// honest paths merged.
func tstTamperCollateral(t *testing.T, w *tamperWorld, what string, m *mutator, res tamperResult) {
	t.Helper()
	got := res.got
	touchedDev := map[string]bool{}
	for path := range m.touched {
		touchedDev[w.owner[path]] = true
		if parts := strings.Split(path, "/"); len(parts) > 3 && (parts[2] == "chains" || parts[2] == "timelines") {
			touchedDev[parts[3]] = true
		}
	}
	for _, path := range w.honest.paths() {
		if dev := w.owner[path]; dev != "" && !touchedDev[dev] {
			if _, ok := got[path]; !ok {
				t.Errorf("%s: honest %s of untouched device %s not merged\n%s", what, path, dev, res.out)
				break
			}
		}
	}
}

// tstTamperReport logs the tally and the time spent, and wants one outcome
// per mutation, most of them not no-ops.
func tstTamperReport(t *testing.T, tl *tstTamperTally, results []tamperResult, seed uint64, n int, start time.Time, workers, fixed int) {
	t.Helper()
	counts, byMut, examples, honestRuns := tl.counts, tl.byMut, tl.examples, tl.honestRuns
	var pullTime, checkTime time.Duration
	for _, r := range results {
		pullTime += r.pullTime
		checkTime += r.checkTime
	}
	t.Logf("time in pulls %v, in checks %v (summed over workers)", pullTime.Round(time.Millisecond), checkTime.Round(time.Millisecond))
	total := 0
	var lines []string
	for c, k := range counts {
		total += k
		lines = append(lines, fmt.Sprintf("%5d  %s", k, c))
	}
	sort.Strings(lines)
	t.Logf("tamper corpus: seed %d, %d mutations in %v (%d workers), %d untampered pulls (all accepted), no tampered byte merged:\n%s",
		seed, total, time.Since(start).Round(time.Second), workers, honestRuns, strings.Join(lines, "\n"))
	for c, m := range byMut {
		var ls []string
		for nm, k := range m {
			ls = append(ls, fmt.Sprintf("%s %d", nm, k))
		}
		sort.Strings(ls)
		t.Logf("%s: %s", c, strings.Join(ls, ", "))
	}
	for _, e := range examples {
		t.Log("example " + e)
	}
	t.Logf("%d fixed regression cases: all rejected", fixed)
	if total != n {
		t.Fatalf("counted %d outcomes for %d mutations", total, n)
	}
	if counts["harmless: no-op (byte-identical)"] > n/10 || total-counts["harmless: no-op (byte-identical)"] < n*9/10 {
		t.Fatalf("the corpus is mostly no-ops: %v", counts)
	}
}

// tamperSameRecord: a and b are the same JSON record or the same PEM key,
// differing only in insignificant whitespace.
func tamperSameRecord(path string, a, b []byte) bool {
	switch tamperKindOf(path) {
	case "checkpoint", "snapshot":
		var ca, cb bytes.Buffer
		if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
			return false
		}
		return bytes.Equal(ca.Bytes(), cb.Bytes())
	case "key":
		pa, ra := pem.Decode(a)
		pb, rb := pem.Decode(b)
		return pa != nil && pb != nil && pa.Type == pb.Type && bytes.Equal(pa.Bytes, pb.Bytes) &&
			len(bytes.TrimSpace(ra)) == 0 && len(bytes.TrimSpace(rb)) == 0
	}
	return false
}

func tamperHasNewDevice(w *tamperWorld, got tTree) bool {
	for path := range got {
		if _, ok := w.honest[path]; !ok && w.newDevicePath(path) {
			return true
		}
	}
	return false
}

func tamperJoin(dir, base string) string {
	if dir == "." {
		return base
	}
	return dir + "/" + base
}
