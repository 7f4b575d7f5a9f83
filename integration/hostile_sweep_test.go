package integration

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The hostile sweep: no read command panics, hangs or exits with an
// undocumented code, whatever a memory branch holds.
//
// Two honest worlds are built once per run (a ctx-v1 branch: two devices,
// checkpoints with files, tools, sessions and embeddings, signed snapshots
// and their timelines, a published package; and a ghyll-v1 branch: the
// same without snapshots), each on a real bare remote that reader C has
// pulled. Every row of sweepCases then edits a copy of the honest tree
// (or the commit structure) and writes the result as a commit straight
// into the remote's object database. Each hostile commit reaches a fresh
// copy of C in two ways, one after the other:
//
//	pulled     C runs `git ctx pull` from a remote serving it (the pull
//	           itself must not panic either), then the reads that can show
//	           what a pull leaves (sweepPulledReads);
//	installed  C fetches it and points its own refs/heads/ghyll/memory at
//	           it with update-ref, bypassing pull (a teammate's direct
//	           push, or `review` of what pull left in the tracking ref), so
//	           the read commands face the hostile tree itself. When git
//	           refuses to send the history (an empty name in a tree), its
//	           objects are written into C directly.
//
// The installed way then runs every read command of sweepReads, human and
// --json (but where noted there, to stay within the CPU budget).
// A run fails on a Go panic or runtime fatal error (stderr text; Go exits
// 2 on a panic, which is also the usage code, so the text decides), an exit
// code outside the README's table (0 1 2 3 4 6 7), or a command outliving
// sweepTimeout. The first row is the honest branch itself: there every
// command must succeed, which keeps the command lines of the sweep honest.
//
// Adding a hostile branch is one row in sweepCases: a name, the layouts it
// applies to, and a function that edits b.tr (path → entry, any bytes in a
// name but "/" and NUL; a path that is both a file and a directory prefix
// makes a tree with two entries of one name) and, when it must, b.parents
// or b.msg. The helpers on *sweepBuild name the honest paths of the world
// (b.cps, b.keys, b.chains, …) and write entries (b.set, b.setMode, b.del).

// sweepTimeout bounds every command of the sweep: a hang is a failure.
const sweepTimeout = 60 * time.Second

// sweepCodes are the README's documented exit codes.
var sweepCodes = map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 6: true, 7: true}

// sweepPanicMarks are what a Go panic or fatal runtime error prints.
var sweepPanicMarks = []string{"panic:", "goroutine ", "runtime error", "fatal error:", "[signal "}

// Placeholders in sweepReads, replaced per case.
const (
	sweepHonest = "<honest>" // a prefix of an honest checkpoint hash
	sweepRange  = "<range>"  // honest tip..hostile tip
	sweepStore  = "<store>"  // a file:// session store
)

// sweepRead is one read command of the sweep and the forms it runs in.
type sweepRead struct {
	args        []string
	human, json bool
}

// sweepReads are the read commands run over every hostile branch installed
// as the local branch. Both forms run, but where one form only re-renders
// what the other computes (doctor), the other form of the same code runs
// on the same branch (review of the tracking ref), or nothing of the
// branch is shown (show of a hash that is not there), to keep the sweep
// within its CPU budget.
var sweepReads = []sweepRead{
	{[]string{"log"}, true, true},
	{[]string{"log", "--unverified"}, true, true},
	{[]string{"show", sweepHonest}, true, true},
	{[]string{"show", "ffffffffffff"}, true, false},
	{[]string{"search", "honest"}, true, true},
	{[]string{"similar", "--to", sweepHonest}, true, true},
	{[]string{"review", sweepRange}, true, true},
	{[]string{"review", "refs/remotes/origin/ghyll/memory"}, true, false},
	{[]string{"devices"}, true, true},
	{[]string{"status"}, true, true},
	{[]string{"verify"}, true, true},
	{[]string{"snapshot", "list"}, true, true},
	{[]string{"pkg", "list"}, true, true},
	{[]string{"doctor"}, false, true},
	// session list does not read the memory branch: it runs on the
	// honest branches only (see sweepRun).
	{[]string{"session", "list", "--store", sweepStore}, true, true},
}

// sweepPulledReads are what may show a pull's leftovers (the quarantine,
// the default review range) after a pull of a hostile branch.
var sweepPulledReads = []sweepRead{
	{[]string{"log", "--unverified"}, true, true},
	{[]string{"status"}, true, false},
	{[]string{"review"}, true, false},
}

// sweepWorld is one honest fixture: a remote, reader C's checkout and the
// facts the hostile edits need.
type sweepWorld struct {
	layout  string // ctx-v1 or ghyll-v1
	root    string // the fixture sandbox (copied from, never changed but for new objects in bare)
	bare    string // the remote; hostile objects are written into it
	cDir    string // reader C's checkout
	store   string // file:// URL of an empty session store
	repoID  string
	ids     []string // device ids of A and B
	honest  string   // a checkpoint hash of A's
	tip     string   // the remote's honest ghyll/memory
	mainTip string   // the code branch
	tree    tTree    // the honest tree at tip
	first   string   // the root commit of the memory branch
	env     []string // an environment for setup commands
}

// sweepBuild is one hostile branch being made.
type sweepBuild struct {
	t       *testing.T
	w       *sweepWorld
	tr      tTree    // the hostile commit's tree (starts as the honest tree)
	parents []string // its parents (starts as the honest tip)
	msg     string   // its message
	written []sweepCommit
}

// sweepLayouts says which worlds a case applies to.
type sweepLayouts int

const (
	sweepBoth sweepLayouts = iota
	sweepCtx
	sweepGhyll
)

type sweepCase struct {
	name    string
	layouts sweepLayouts
	build   func(b *sweepBuild)
}

// ---- path helpers over the honest tree ----

func (b *sweepBuild) ctx() bool { return b.w.layout == "ctx-v1" }

// under lists the honest tree's paths below dir of repo R (sorted).
func (b *sweepBuild) under(dir string) []string {
	var out []string
	prefix := "repos/" + b.w.repoID + "/" + dir + "/"
	if dir == "devices" {
		prefix = "devices/"
	}
	for p := range b.w.tree {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		b.t.Fatalf("setup: the honest %s tree has nothing under %s", b.w.layout, prefix)
	}
	return out
}

func (b *sweepBuild) cps() []string      { return b.under("checkpoints") }
func (b *sweepBuild) keys() []string     { return b.under("devices") }
func (b *sweepBuild) chains() []string   { return b.under("chains") }
func (b *sweepBuild) snaps() []string    { return b.under("snapshots") }
func (b *sweepBuild) timeline() []string { return b.under("timelines") }
func (b *sweepBuild) pkgs() []string     { return b.under("packages") }
func (b *sweepBuild) repo() string       { return "repos/" + b.w.repoID }

// cpPath is where a checkpoint named name lives (ctx-v1: fanned out by
// the name's first two and next two bytes, "xx" where it is shorter).
func (b *sweepBuild) cpPath(name string) string {
	if !b.ctx() {
		return b.repo() + "/checkpoints/" + name
	}
	fan := []string{"xx", "xx"}
	for i := range fan {
		if len(name) >= 2*i+2 {
			fan[i] = name[2*i : 2*i+2]
		}
	}
	return b.repo() + "/checkpoints/" + fan[0] + "/" + fan[1] + "/" + name
}

// chainPath is device's chain (its first segment in ctx-v1).
func (b *sweepBuild) chainPath(device string) string {
	if b.ctx() {
		return b.repo() + "/chains/" + device + "/00000000.jsonl"
	}
	return b.repo() + "/chains/" + device + ".jsonl"
}

func (b *sweepBuild) get(path string) string {
	e, ok := b.tr[path]
	if !ok {
		b.t.Fatalf("setup: no %s on the honest branch", path)
	}
	return string(e.data)
}

// set puts a regular file at path.
func (b *sweepBuild) set(path, content string) { b.setMode(path, "100644", content) }

// setMode puts an entry of mode at path (a symlink's content is its
// target, a gitlink's the commit id in hex).
func (b *sweepBuild) setMode(path, mode, content string) {
	b.tr[path] = tEntry{mode: mode, data: []byte(content)}
}

// del removes path and everything below it.
func (b *sweepBuild) del(path string) {
	for p := range b.tr {
		if p == path || strings.HasPrefix(p, path+"/") {
			delete(b.tr, p)
		}
	}
}

// swapToDir replaces the file at path by a directory holding one file.
func (b *sweepBuild) swapToDir(path string) {
	b.del(path)
	b.set(path+"/x", "not the file you expected\n")
}

// swapToFile replaces the directory at path by a file.
func (b *sweepBuild) swapToFile(path string) {
	b.del(path)
	b.set(path, "not the directory you expected\n")
}

// commit writes an extra commit (for merges and histories) into the
// world's remote and returns it.
func (b *sweepBuild) commit(tr tTree, msg string, parents ...string) string {
	b.t.Helper()
	sc := sweepCommit{tr: tr, msg: msg, parents: parents}
	c, err := sc.write(b.w.bare, b.w.env)
	if err != nil {
		b.t.Fatalf("setup: %v", err)
	}
	b.written = append(b.written, sc)
	return c
}

// sweepCommit is one commit of a hostile history, kept so that it can be
// written again into another object database (ids are deterministic).
type sweepCommit struct {
	tr      tTree
	msg     string
	parents []string
}

func (sc sweepCommit) write(gitDir string, env []string) (string, error) {
	// Large blobs go through git (objStore would compress them in
	// process, which is slow under -race); objStore then finds them.
	for p, e := range sc.tr {
		if len(e.data) > 1<<20 && e.mode != "160000" {
			cmd := exec.Command(gitPath, "hash-object", "-w", "--stdin")
			cmd.Env = withEnv(env, "GIT_DIR="+gitDir)
			cmd.Stdin = bytes.NewReader(e.data)
			if out, err := cmd.CombinedOutput(); err != nil {
				return "", fmt.Errorf("hash-object %s: %v\n%s", p, err, out)
			}
		}
	}
	st := objStore{dir: gitDir}
	tree, err := st.writeTree(sc.tr)
	if err != nil {
		return "", fmt.Errorf("write tree: %w", err)
	}
	c, err := st.writeCommit(tree, sc.parents, sc.msg)
	if err != nil {
		return "", fmt.Errorf("write commit: %w", err)
	}
	return c, nil
}

// sweepHex is a 64-hex name derived from seed (not an honest hash).
func sweepHex(seed string) string { return sha256Hex("sweep " + seed) }

// sweepOddNames are file names that are not a hash followed by .json.
func sweepOddNames(h string) []string {
	return []string{
		"", ".json", "ab.json", h[:63] + ".json", h + "0.json", strings.ToUpper(h) + ".json",
		strings.Repeat("z", 64) + ".json", h, h + ".JSON", h + ".json.json", " " + h + ".json",
		"\xff\xfe.json", "a\nb.json", "\x1b[31m.json", ".", "..", ".git", "-" + h[1:] + ".json",
	}
}

// sweepCases is the catalogue of hostile branches (see the comment at the
// top of this file to add one).
var sweepCases = []sweepCase{
	{"honest (control)", sweepBoth, func(b *sweepBuild) {}},

	// Checkpoint files (both layouts: their paths differ).
	{"garbage and empty files added under checkpoints", sweepBoth, func(b *sweepBuild) {
		b.set(b.cpPath(sweepHex("garbage")+".json"), "\x00\xffnot json at all")
		b.set(b.cpPath(sweepHex("empty")+".json"), "")
	}},
	{"checkpoints replaced by garbage, emptied, truncated", sweepBoth, func(b *sweepBuild) {
		cps := b.cps()
		b.set(cps[0], "{{{{ garbage")
		b.set(cps[1], "")
		b.set(cps[2], b.get(cps[2])[:len(b.get(cps[2]))/2])
	}},
	{"checkpoint JSON of the wrong shape, a self-parent and an odd embedding", sweepBoth, func(b *sweepBuild) {
		h := sweepHex("shape")
		for i, s := range []string{"null", "[]", "{}", `"x"`, "0", `{"hash":""}`, `{"hash":"` + h + `"}`,
			`{"v":1,"hash":"` + h + `","parent":"` + h + `","device":"","ts":-1,"turn":-1,"emb":[1e308,-1e308,0],"files":[null],"sig":""}`,
			`{"v":99,"hash":"` + strings.Repeat("0", 64) + `","parent":"x","emb":"not a list","files":{},"tools":7}`,
			strings.Repeat("[", 100000)} {
			name := sweepHex(fmt.Sprint("shape", i)) + ".json"
			if i == 6 {
				name = h + ".json"
			}
			b.set(b.cpPath(name), s)
		}
		self := sweepHex("selfparent")
		b.set(b.cpPath(self+".json"), `{"v":1,"hash":"`+self+`","parent":"`+self+`","device":"`+b.w.ids[0]+
			`","author":"\u001b[2J","ts":1,"repo":"`+b.w.repoID+`","branch":"main","session":"s1","turn":1,"model":"",`+
			`"summary":"honest \u0000\u001b]0;evil\u0007","emb":[`+strings.TrimSuffix(strings.Repeat("0,", 20000), ",")+
			`],"files":[],"tools":[],"injections":[],"sig":"`+strings.Repeat("00", 64)+`"}`)
		rec := strings.Replace(b.get(b.cps()[0]), `"hash": "`, `"hash": "`+self+`", "x": "`, 1)
		b.set(b.cpPath(sweepHex("dup")+".json"), rec)
		p := b.chainPath(b.w.ids[0])
		lines := b.get(p)
		last := lines[strings.LastIndex(strings.TrimSuffix(lines, "\n"), "\n")+1:]
		b.set(p, lines+`{"hash":"`+self+`","parent":"`+self+`","ts":1}`+"\n"+last)
	}},
	{"checkpoint names that are not hashes", sweepBoth, func(b *sweepBuild) {
		cps := b.cps()
		rec := b.get(cps[0])
		for _, n := range sweepOddNames(sweepHex("odd")) {
			b.set(b.cpPath(n), rec)
		}
		for _, n := range sweepOddNames(sweepHex("odd2")) {
			b.set(b.cpPath(n), "garbage")
		}
		// An honest record moved to a name that is not its hash.
		b.del(cps[1])
		b.set(b.cpPath(sweepHex("moved")[:63]+".json"), string(b.w.tree[cps[1]].data))
	}},
	{"checkpoints in the other layout's places", sweepBoth, func(b *sweepBuild) {
		p := b.cps()[0]
		h := strings.TrimSuffix(filepath.Base(p), ".json")
		rec := b.get(p)
		b.set(b.repo()+"/checkpoints/"+h+".json", rec)
		b.set(b.repo()+"/checkpoints/"+h[:2]+"/"+h+".json", rec)
		b.set(b.repo()+"/checkpoints/00/"+sweepHex("fan")+".json", rec)
		b.set(b.repo()+"/checkpoints/x/"+h+".json", rec)
		b.set(b.repo()+"/checkpoints/"+h[:3]+"/"+h+".json", rec)
		b.set(b.repo()+"/checkpoints/"+h[:2]+"/"+h[:2]+"/"+h+".json", rec)
	}},
	{"checkpoint over 1 MiB", sweepCtx, func(b *sweepBuild) {
		p := b.cps()[0]
		rec := b.get(p)
		b.set(p, rec[:len(rec)-1]+strings.Repeat(" ", 1<<20+1-len(rec))+rec[len(rec)-1:])
	}},
	{"directories where files are expected, the other way round, and both at once", sweepCtx, func(b *sweepBuild) {
		b.swapToDir(b.cps()[0])
		b.swapToDir(b.keys()[0])
		b.swapToDir(b.chains()[0])
		b.swapToDir(b.pkgs()[0])
		b.swapToDir(b.snaps()[0])
		b.swapToFile(filepath.Dir(b.cps()[1]))
		b.swapToFile(filepath.Dir(b.chains()[1]))
		b.swapToFile(filepath.Dir(b.timeline()[0]))
		// A file and a directory of one name in one tree.
		b.set(b.cps()[2]+"/x", "shadow")
		b.set("devices", "shadow")
		b.set(b.repo()+"/timelines", "shadow")
	}},
	{"checkpoints, chains, packages, snapshots and timelines are files", sweepCtx, func(b *sweepBuild) {
		b.swapToFile(b.repo() + "/checkpoints")
		b.swapToFile(b.repo() + "/chains")
		b.swapToFile(b.repo() + "/packages")
		b.swapToFile(b.repo() + "/snapshots")
		b.swapToFile(b.repo() + "/timelines")
	}},
	{"symlinks, gitlinks, executables and mode 100664", sweepBoth, func(b *sweepBuild) {
		cps := b.cps()
		b.setMode(cps[0], "120000", "../../../../etc/passwd")
		b.setMode(cps[1], "100755", b.get(cps[1]))
		b.setMode(cps[2], "160000", b.w.tip)
		b.setMode(cps[3], "100664", b.get(cps[3]))
		b.setMode(b.keys()[0], "120000", "/etc/passwd")
		b.setMode(b.keys()[1], "100755", b.get(b.keys()[1]))
		b.setMode(b.chains()[0], "160000", sweepHex("missing")[:40])
		b.setMode(b.chains()[1], "120000", "../x")
		b.setMode(b.pkgs()[0], "100664", b.get(b.pkgs()[0]))
		b.setMode(b.repo()+"/checkpoints/gitlink", "160000", b.w.mainTip)
		if b.ctx() {
			b.setMode("LAYOUT", "100755", b.get("LAYOUT"))
			b.setMode(b.snaps()[0], "120000", "../../x")
			b.setMode(b.timeline()[0], "160000", b.w.mainTip)
		}
	}},

	// Chains.
	{"chains with garbage lines, long lines, no final newline, wrong shapes", sweepBoth, func(b *sweepBuild) {
		p := b.chainPath(b.w.ids[0])
		b.set(p, b.get(p)+"garbage\n"+`{"hash":"`+strings.Repeat("a", 600)+`","parent":"","ts":1}`+"\n"+`{"hash":"x"}`)
		b.set(b.chainPath(b.w.ids[1]), "null\n[]\n{}\n{\"hash\":1}\n{\"hash\":\"\",\"parent\":\"\",\"ts\":-1}\n\n\x00\n")
	}},
	{"chain emptied, chain naming missing records in a loop", sweepBoth, func(b *sweepBuild) {
		b.set(b.chainPath(b.w.ids[0]), "")
		p := b.chainPath(b.w.ids[1])
		h1, h2 := sweepHex("missing1"), sweepHex("missing2")
		b.set(p, b.get(p)+`{"hash":"`+h1+`","parent":"`+h2+`","ts":1}`+"\n"+`{"hash":"`+h2+`","parent":"`+h1+`","ts":2}`+"\n")
	}},
	{"chains of devices without keys, odd names, segment gaps, 3,000 lines", sweepCtx, func(b *sweepBuild) {
		chain := b.get(b.chainPath(b.w.ids[0]))
		for _, d := range []string{"ghost-00000000", "\xff\xfe", "a\nb", "", ".", "..", strings.Repeat("g", 300)} {
			b.set(b.chainPath(d), chain)
		}
		b.set(b.repo()+"/chains/x", chain)
		if b.ctx() {
			dir := filepath.Dir(b.chainPath(b.w.ids[0]))
			for _, n := range []string{"00000002.jsonl", "0.jsonl", "000000001.jsonl", "abc.jsonl", "99999999.jsonl", "-0000001.jsonl"} {
				b.set(dir+"/"+n, chain)
			}
		}
		var sb strings.Builder
		prev := zeroHash
		for i := 0; i < 3000; i++ {
			h := sweepHex(fmt.Sprint("long", i))
			fmt.Fprintf(&sb, `{"hash":"%s","parent":"%s","ts":%d}`+"\n", h, prev, i)
			prev = h
		}
		b.set(b.chainPath("longchain-00000000"), sb.String())
	}},
	{"chain segment over 16 MiB", sweepCtx, func(b *sweepBuild) {
		p := b.chainPath(b.w.ids[0])
		b.set(p, b.get(p)+strings.Repeat("\n", 16<<20+1))
	}},

	// Keys (the layouts share them: ctx-v1 only from here on, but where noted).
	{"keys removed, garbage, of the wrong type and length", sweepCtx, func(b *sweepBuild) {
		keys := b.keys()
		b.del(keys[0])
		b.set(keys[1], string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: make([]byte, 32)})))
		b.set(keys[2], string(pem.EncodeToMemory(&pem.Block{Type: "ED25519 PUBLIC KEY", Bytes: make([]byte, 31)})))
	}},
	{"keys garbage, empty, over 4096 bytes", sweepCtx, func(b *sweepBuild) {
		keys := b.keys()
		b.set(keys[0], "-----BEGIN garbage\n\xff\n")
		b.set(keys[1], "")
		b.set(keys[2], b.get(keys[2])+strings.Repeat("#", 4097))
	}},
	{"key names that are not device ids", sweepCtx, func(b *sweepBuild) {
		key := newPublicKeyPEM(b.t)
		for _, n := range []string{".pub", "x", "\xff\xfe.pub", "a\nb.pub", "\x1b[31mred.pub", strings.Repeat("d", 300) + ".pub",
			"..pub", ".gitkeep", "-rf.pub", "a b.pub", "UPPER.pub", "mallory-00000000.pub"} {
			b.set("devices/"+n, key)
		}
	}},

	// LAYOUT.
	{"LAYOUT names an unknown layout", sweepCtx, func(b *sweepBuild) { b.set("LAYOUT", "ctx-v9\n") }},
	{"LAYOUT over 64 bytes of control bytes and non-UTF-8", sweepCtx, func(b *sweepBuild) {
		b.set("LAYOUT", "\xff\xfe\x1b[2J\x00ctx-v1"+strings.Repeat(" ", 64)+"\n")
	}},
	{"LAYOUT says ghyll-v1 on a ctx-v1 tree", sweepCtx, func(b *sweepBuild) { b.set("LAYOUT", "ghyll-v1\n") }},
	{"LAYOUT removed from a ctx-v1 tree", sweepCtx, func(b *sweepBuild) { b.del("LAYOUT") }},
	{"LAYOUT is a directory", sweepCtx, func(b *sweepBuild) { b.swapToDir("LAYOUT") }},
	{"LAYOUT says ctx-v1 on a ghyll-v1 tree", sweepGhyll, func(b *sweepBuild) { b.set("LAYOUT", "ctx-v1\n") }},

	// Snapshots and timelines (ctx-v1).
	{"snapshots garbage, emptied, named by no id", sweepCtx, func(b *sweepBuild) {
		snaps := b.snaps()
		snap := b.get(snaps[0])
		b.set(snaps[0], "\xff garbage")
		b.set(snaps[1], "")
		for _, n := range sweepOddNames(sweepHex("snap")) {
			fan := "xx"
			if len(n) >= 2 {
				fan = n[:2]
			}
			b.set(b.repo()+"/snapshots/"+fan+"/"+n, snap)
		}
		b.set(b.repo()+"/snapshots/"+filepath.Base(snaps[0]), snap)
	}},
	{"snapshot over 8 MiB", sweepCtx, func(b *sweepBuild) {
		p := b.snaps()[0]
		b.set(p, b.get(p)+strings.Repeat(" ", 8<<20+1))
	}},
	{"timelines garbage, emptied, wrong shapes, missing snapshots, gaps", sweepCtx, func(b *sweepBuild) {
		tls := b.timeline()
		tl := b.get(tls[0])
		b.set(tls[0], tl+`{"snapshot_id":"`+strings.Repeat("a", 5000)+`"}`+"\nnull\n[]\n{}\ngarbage\n\x00\xff\n"+
			`{"snapshot_id":"","parent_id":7,"created_at":"yesterday","tokens_saved":-1,"signed":"yes"}`+"\n"+
			`{"snapshot_id":"`+sweepHex("nosnap")+`","parent_id":null,"created_at":"2026-01-01T00:00:00+00:00","git_commit":null,"git_branch":null,"tokens_saved":0,"signed":true}`+"\n")
		b.set(tls[1], "")
		dir := filepath.Dir(tls[0])
		for _, n := range []string{"00000002.jsonl", "x.jsonl", "\xff.jsonl"} {
			b.set(dir+"/"+n, tl)
		}
		b.set(b.repo()+"/timelines/ghost-00000000/00000000.jsonl", tl)
		b.set(b.repo()+"/timelines/\xff/00000000.jsonl", tl)
	}},
	{"snapshots and timelines on a ghyll-v1 branch", sweepGhyll, func(b *sweepBuild) {
		b.set(b.repo()+"/snapshots/ab/"+sweepHex("g")+".json", "{}")
		b.set(b.repo()+"/timelines/"+b.w.ids[0]+"/00000000.jsonl", "{}\n")
	}},

	// Packages.
	{"package garbage, and packages at the wrong paths and odd names", sweepCtx, func(b *sweepBuild) {
		pkg := b.get(b.pkgs()[0])
		b.set(b.pkgs()[0], "PK\x03\x04 garbage")
		for _, p := range []string{"other/9.9.9.ctxpkg", "\xff/1.ctxpkg", "a\nb/1.ctxpkg", "x.ctxpkg", "@team/sweep/..ctxpkg",
			"@team/sweep/1.0.0.ctxpkg/x", "@team/sweep/.git/1.ctxpkg", "@team/sweep/1.0.0", "@team/sweep/2.0.0.ctxpkg",
			"", "deep/" + strings.Repeat("d/", 50) + "1.ctxpkg", "empty/1.ctxpkg"} {
			content := pkg
			if strings.HasPrefix(p, "empty") {
				content = ""
			}
			b.set(b.repo()+"/packages/"+p, content)
		}
	}},
	{"package over 10 MiB", sweepCtx, func(b *sweepBuild) {
		p := b.pkgs()[0]
		b.set(p, b.get(p)+strings.Repeat(" ", 10<<20+1))
	}},

	// Names, depth and volume.
	{"deep nesting, non-UTF-8 and control bytes in names, paths outside the layout", sweepCtx, func(b *sweepBuild) {
		deep := strings.Repeat("d/", 400)
		b.set(b.repo()+"/checkpoints/"+deep+sweepHex("deep")+".json", "{}")
		b.set(deep+"x", "x")
		b.set("devices/"+deep+"k.pub", newPublicKeyPEM(b.t))
		for _, n := range []string{"\xff\xfe", "\x1b[2J", "a\tb", "a\nb", "\x7f", "\u202eevil", "e\u0301"} {
			b.set(n, "x")
			b.set("repos/"+n+"/checkpoints/"+sweepHex(n)+".json", "{}")
			b.set(b.repo()+"/"+n, "x")
		}
		rec := b.get(b.cps()[0])
		other := sweepHex("otherrepo")
		b.set("repos/"+other+"/checkpoints/"+other[:2]+"/"+other+".json", rec)
		b.set("repos/"+other+"/checkpoints/"+other+".json", rec)
		b.set("repos/x/chains/y.jsonl", "x")
		b.set("repos/"+b.w.repoID+"x/checkpoints/a.json", rec)
		b.set("README.md", "hello")
		b.set(".git/config", "[core]\n")
		b.set("../x", "escaped")
		b.set("a//b", "empty segment")
	}},
	{"2,000 junk paths", sweepCtx, func(b *sweepBuild) {
		for i := 0; i < 1500; i++ {
			b.set(b.cpPath(fmt.Sprintf("%02xjunk%04d.json", i%256, i)), "junk")
		}
		for i := 0; i < 500; i++ {
			b.set(fmt.Sprintf("junk/%04d", i), "junk")
		}
	}},
	{"repos and devices are files", sweepCtx, func(b *sweepBuild) {
		b.swapToFile("repos")
		b.swapToFile("devices")
	}},

	// Commit structure.
	{"orphan commit with an empty tree", sweepCtx, func(b *sweepBuild) { b.tr, b.parents = tTree{}, nil }},
	{"the code branch pushed as the memory branch", sweepCtx, func(b *sweepBuild) {
		b.tr, b.parents = readTree(b.t, b.w.bare, b.w.env, b.w.mainTip), []string{b.w.mainTip}
	}},
	{"merge with an unrelated garbage history", sweepCtx, func(b *sweepBuild) {
		p := b.repo() + "/checkpoints/zz/zz.json"
		junk := tTree{p: {mode: "100644", data: []byte("junk")}}
		b.parents = append(b.parents, b.commit(junk, "ctx: unrelated"))
		b.tr[p] = junk[p]
	}},
	{"octopus merge of the branch root, the code branch and the tip listed twice", sweepCtx, func(b *sweepBuild) {
		b.parents = []string{b.w.first, b.w.mainTip, b.w.tip, b.w.tip}
	}},
	{"fifty hostile commits with control bytes in their messages", sweepCtx, func(b *sweepBuild) {
		tr := b.tr.clone()
		prev := b.w.tip
		for i := 0; i < 49; i++ {
			tr[b.cpPath(fmt.Sprintf("row%02d.json", i))] = tEntry{mode: "100644", data: []byte("row")}
			prev = b.commit(tr.clone(), fmt.Sprintf("\x1b[2J\x1b]0;owned\x07\xff\xfe\r\rctx: row %d %s", i, strings.Repeat("z", 500)), prev)
		}
		b.tr, b.parents = tr, []string{prev}
	}},
}

// ---- the worlds ----

// sweepNewWorld builds one honest world of layout.
func sweepNewWorld(t *testing.T, layout string) *sweepWorld {
	t.Helper()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	w := &sweepWorld{layout: layout, root: s.root, bare: rem.bare}
	emb := func(name, v string) string {
		p := filepath.Join(s.root, name)
		writeFile(t, p, v)
		return p
	}
	e1, e2 := emb("e1.json", "[1, 0, 0]"), emb("e2.json", "[0.5, 0.5, 0]")

	a := syncFirstDevice(t, s, rem, "A")
	if layout == "ghyll-v1" {
		a.must(t, "init", "--layout", "ghyll-v1")
	} else {
		a.must(t, "init")
	}
	w.honest = checkpoint(t, a.dir, a.env, "-m", "a1 honest: chose sqlite\n\nDecision: sqlite", "--session", "s1",
		"--file", "db.go", "--tool", "edit", "--emb-file", e1, "--injection", "override").Hash
	checkpoint(t, a.dir, a.env, "-m", "a2 honest: wrote the schema", "--session", "s1", "--file", "schema.sql",
		"--file", "db.go", "--tool", "bash", "--model", "m1", "--emb-file", e2)
	if layout == "ctx-v1" {
		a.must(t, "snapshot", "create", "--sign")
	}
	pkg := filepath.Join(s.root, "sweep.ctxpkg")
	a.must(t, "pkg", "build", "-o", pkg, "--name", "@team/sweep", "--version", "1.0.0", "--sign")
	a.must(t, "pkg", "publish", pkg)
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	b.must(t, "init")
	checkpoint(t, b.dir, b.env, "-m", "b1 honest: reviewed", "--session", "s2", "--emb-file", e1)
	checkpoint(t, b.dir, b.env, "-m", "b2 honest: merged", "--session", "s2", "--file", "main.go")
	if layout == "ctx-v1" {
		b.must(t, "snapshot", "create", "--sign")
	}
	b.must(t, "push")

	c := syncCloneDevice(t, s, rem, "C")
	c.must(t, "pull")
	c.must(t, "init")
	c.must(t, "push")
	w.cDir = c.dir
	w.ids = []string{a.id(t), b.id(t)}
	w.repoID = status(t, a.dir, a.env).RepoID
	w.store = "file://" + s.dir(t, "store")
	env := s.env("setup")
	w.env = env
	w.tip = syncBareTip(t, s, rem.bare)
	w.mainTip = gitOut(t, rem.bare, env, "rev-parse", "refs/heads/main")
	w.first = gitOut(t, rem.bare, env, "rev-list", "--max-parents=0", w.tip)
	w.tree = readTree(t, rem.bare, env, w.tip)
	return w
}

// sweepHostile is one built hostile branch.
type sweepHostile struct {
	name    string
	w       *sweepWorld
	tip     string
	commits []sweepCommit // every commit made, in order
}

// build applies c to a copy of w's honest tree and writes the commit.
func (w *sweepWorld) build(t *testing.T, c sweepCase) sweepHostile {
	t.Helper()
	b := &sweepBuild{t: t, w: w, tr: w.tree.clone(), parents: []string{w.tip}, msg: "ctx: checkpoint (hostile: " + c.name + ")"}
	c.build(b)
	tip := w.tip
	if c.name != sweepCases[0].name {
		tip = b.commit(b.tr, b.msg, b.parents...)
	}
	return sweepHostile{name: c.name, w: w, tip: tip, commits: b.written}
}

// ---- running the sweep ----

// sweepReader is a fresh copy of reader C whose origin serves remote.
func sweepReader(t *testing.T, w *sweepWorld, remote string) *syncDevice {
	t.Helper()
	s := newSandbox(t)
	c := newSyncDevice(s, "C", filepath.Join(s.root, "C"))
	syncCopy(t, w.cDir, c.dir)
	syncCopy(t, filepath.Join(w.root, "ctxhome-C"), s.ctxHome("C"))
	c.git(t, "config", "url."+remote+".insteadOf", w.bare)
	return c
}

// sweepGit runs git in d's checkout, whatever its exit code.
func sweepGit(t *testing.T, d *syncDevice, args ...string) result {
	t.Helper()
	return execute(t, d.dir, d.env, nil, append([]string{"git"}, args...)...)
}

// sweepRemote is a bare repository serving h as ghyll/memory (objects
// borrowed from the world's remote).
func sweepRemote(t *testing.T, h sweepHostile) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	env := h.w.env
	mustRun(t, filepath.Dir(dir), env, "git", "init", "-q", "--bare", "--template=", "-b", "main", dir)
	writeFile(t, filepath.Join(dir, "objects", "info", "alternates"), filepath.Join(h.w.bare, "objects")+"\n")
	mustRun(t, dir, env, "git", "update-ref", "refs/heads/main", h.w.mainTip)
	mustRun(t, dir, env, "git", "update-ref", memRef, h.tip)
	return dir
}

// sweepCPU adds up the CPU time of the sweep's commands by command name.
var sweepCPU = struct {
	sync.Mutex
	by map[string]time.Duration
	n  map[string]int
}{by: map[string]time.Duration{}, n: map[string]int{}}

// sweepExec runs git-ctx args in d's checkout within sweepTimeout (safe in
// goroutines: it never calls t).
func sweepExec(d *syncDevice, args ...string) (result, error) {
	c, cancel := context.WithTimeout(context.Background(), sweepTimeout)
	defer cancel()
	cmd := exec.CommandContext(c, binPath, args...)
	cmd.Dir, cmd.Env = d.dir, d.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	if cmd.ProcessState != nil {
		sweepCPU.Lock()
		sweepCPU.by[args[0]] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		sweepCPU.n[args[0]]++
		sweepCPU.Unlock()
	}
	if ee, ok := err.(*exec.ExitError); ok && c.Err() == nil {
		res.code = ee.ExitCode()
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("%v (%v)", err, c.Err())
	}
	return res, nil
}

// sweepProblem describes what is wrong with one command's result ("" when
// nothing is).
func sweepProblem(r result, err error) string {
	if err != nil {
		return "did not finish within " + sweepTimeout.String() + ": " + err.Error()
	}
	for _, m := range sweepPanicMarks {
		if strings.Contains(r.stderr, m) || strings.Contains(r.stdout, m) {
			return fmt.Sprintf("panicked (exit %d): %s", r.code, sweepHead(r.stderr+r.stdout))
		}
	}
	if !sweepCodes[r.code] {
		return fmt.Sprintf("exit %d is not a documented code: %s", r.code, sweepHead(r.stderr))
	}
	return ""
}

func sweepHead(s string) string {
	lines := strings.SplitN(s, "\n", 8)
	if len(lines) > 7 {
		lines = lines[:7]
	}
	return strings.Join(lines, "\n    ")
}

// sweepRun runs every read command (human and --json) on d and returns
// the problems found and the number of commands run. control: every
// command must also succeed (but the show of a bogus hash, which must be
// "not found").
func sweepRun(d *syncDevice, w *sweepWorld, reads []sweepRead, tip string, control bool) ([]string, int) {
	var problems []string
	n := 0
	for _, rd := range reads {
		argv := rd.args
		if argv[0] == "session" && !control {
			continue
		}
		for _, js := range []bool{false, true} {
			if (js && !rd.json) || (!js && !rd.human) {
				continue
			}
			args := make([]string, 0, len(argv)+1)
			for _, a := range argv {
				switch a {
				case sweepHonest:
					a = w.honest[:12]
				case sweepRange:
					a = w.tip + ".." + tip
				case sweepStore:
					a = w.store
				}
				args = append(args, a)
			}
			if w.layout == "ghyll-v1" && argv[0] == "similar" {
				// git-ctx writes ghyll-v1 under ghyll's rule, whose hash
				// leaves emb out (FORMAT §4.5): use the embeddings anyway.
				args = append(args, "--include-unauthenticated")
			}
			if js {
				args = append(args, "--json")
			}
			r, err := sweepExec(d, args...)
			n++
			p := sweepProblem(r, err)
			if p == "" && control {
				want := 0
				if argv[0] == "show" && argv[1] != sweepHonest {
					want = 1
				}
				if w.layout == "ghyll-v1" && argv[0] == "snapshot" {
					want = 3
				}
				if r.code != want {
					p = fmt.Sprintf("honest branch: exit %d, want %d: %s", r.code, want, sweepHead(r.stderr))
				}
			}
			if p != "" {
				problems = append(problems, fmt.Sprintf("git ctx %s: %s", strings.Join(args, " "), p))
			}
		}
	}
	return problems, n
}

// TestHostileSweep: every read command over every hostile branch of the
// catalogue, pulled and installed directly: no panic, no hang, only
// documented exit codes (see the top of this file).
func TestHostileSweep(t *testing.T) {
	t.Parallel()
	start := time.Now()
	var worlds []*sweepWorld
	for _, layout := range []string{"ctx-v1", "ghyll-v1"} {
		worlds = append(worlds, sweepNewWorld(t, layout))
	}
	var hostile []sweepHostile
	for _, w := range worlds {
		for _, c := range sweepCases {
			if c.layouts == sweepBoth || (c.layouts == sweepCtx) == (w.layout == "ctx-v1") {
				hostile = append(hostile, w.build(t, c))
			}
		}
	}
	t.Logf("built 2 worlds and %d branches in %v", len(hostile), time.Since(start).Round(time.Millisecond))

	var mu sync.Mutex
	total := 0
	t.Cleanup(func() {
		t.Logf("%d branches, pulled and installed, %d commands in all, %v", len(hostile), total, time.Since(start).Round(time.Millisecond))
		sweepCPU.Lock()
		defer sweepCPU.Unlock()
		var sum time.Duration
		for name, d := range sweepCPU.by {
			sum += d
			t.Logf("  %-9s %5d runs, CPU %v (%v each)", name, sweepCPU.n[name], d.Round(time.Millisecond), (d / time.Duration(sweepCPU.n[name])).Round(time.Millisecond))
		}
		t.Logf("  CPU of git-ctx and its children in all: %v", sum.Round(time.Millisecond))
	})
	for _, h := range hostile {
		t.Run(h.w.layout+"/"+h.name, func(t *testing.T) {
			t.Parallel()
			control := h.tip == h.w.tip
			remote := sweepRemote(t, h)
			var problems []string
			count := 0

			// Pulled: the pull itself must not panic either.
			d := sweepReader(t, h.w, remote)
			for _, args := range [][]string{{"pull"}} {
				r, err := sweepExec(d, args...)
				count++
				if p := sweepProblem(r, err); p != "" {
					problems = append(problems, "pulled: git ctx "+strings.Join(args, " ")+": "+p)
				} else if control && r.code != 0 {
					problems = append(problems, "pulled: honest branch: "+r.String())
				}
			}
			ps, n := sweepRun(d, h.w, sweepPulledReads, h.tip, control)
			count += n
			for _, p := range ps {
				problems = append(problems, "pulled: "+p)
			}

			// Installed directly as the local branch.
			if r := sweepGit(t, d, "fetch", "-q", "origin", "+"+memRef+":refs/remotes/origin/ghyll/memory"); r.code != 0 {
				// git itself will not send this history (e.g. an empty
				// name in a tree): write its objects into the reader.
				gitDir := filepath.Join(d.dir, ".git")
				for _, sc := range h.commits {
					if _, err := sc.write(gitDir, h.w.env); err != nil {
						t.Fatalf("setup: %v", err)
					}
				}
				d.git(t, "update-ref", "refs/remotes/origin/ghyll/memory", h.tip)
			}
			d.git(t, "update-ref", memRef, h.tip)
			ps, n = sweepRun(d, h.w, sweepReads, h.tip, control)
			count += n
			for _, p := range ps {
				problems = append(problems, "installed: "+p)
			}

			mu.Lock()
			total += count
			mu.Unlock()
			if len(problems) > 0 {
				t.Errorf("%d of %d commands failed:\n  %s", len(problems), count, strings.Join(problems, "\n  "))
			}
		})
	}
}
