package store

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/gitobject"
)

// The git store keeps objects on one branch of a git remote. Each write is a
// commit on top of the remote tip, pushed without force: git's rejection of a
// non-fast-forward push is the failed precondition, after which the store
// fetches again and either reports the conflict (ErrExists,
// ErrVersionMismatch) or retries on the new tip.
//
// Representation (documented in docs/FORMAT.md):
//   - an object of at most the part cap is one blob at <key>;
//   - a larger object is a tree at <key> holding the index blob ".ctx-split"
//     and the parts "00000", "00001", … (blobs, each at most the cap);
//   - the Version of an object is the id of the blob or tree at <key>.

const (
	// SessionsBranch is the remote branch that holds the objects.
	SessionsBranch = "refs/heads/ghyll/sessions"
	// privateRefPrefix + remote is the local ref the remote branch is fetched
	// into (never a remote-tracking ref, so plain fetches leave it alone).
	privateRefPrefix = "refs/ctx/sessions/"
	// splitIndexName is the index blob inside the tree of a split object.
	// Keys cannot start with '.', so it never collides with a key.
	splitIndexName = ".ctx-split"
	splitMagic     = "git-ctx split object v1"
	maxParts       = 99999
	maxIndexSize   = 16 << 20
	// commitSubject prefixes the subject of every commit the store makes.
	commitSubject = "ctx: session object "
)

// BlobLimit is the size no blob the git store writes may exceed (32 MiB).
const BlobLimit = 32 << 20

// MaxBlobSize is the part cap of the git store: an object larger than this is
// split into parts of this size (the last one shorter). It must be positive
// and at most BlobLimit; it is read when a store is opened (tests lower it).
// The default, 16 MiB, keeps git's own processes small: pack-objects holds a
// whole object and its deflated copy, so a 32 MiB part would cost them about
// 68 MiB of memory, a 16 MiB part about 36 MiB.
var MaxBlobSize int64 = 16 << 20

// MaxPushAttempts bounds how many times one write fetches, rebuilds and
// pushes when the remote branch keeps moving.
var MaxPushAttempts = 10

type gitStore struct {
	gitDir   string // per-worktree git dir, passed as --git-dir
	objects  gitobject.Writer
	remote   string
	ref      string // private ref the remote branch is fetched into
	lockPath string // serialises this repository's fetch/push cycles
	cap      int64
	name     string
	email    string
}

func openGit(ctx context.Context, repo *gitrepo.Repo, remote string) (Store, error) {
	if repo == nil {
		return nil, errors.New("store: the git session store needs a git repository")
	}
	if remote == "" {
		return nil, errors.New("store: no git remote for the session store (configure ctx.remote or a remote, or pass a file:// store)")
	}
	if strings.HasPrefix(remote, "-") || strings.ContainsAny(remote, "\x00\n\r\t ") {
		return nil, fmt.Errorf("store: bad git remote name %q", describeRemote(remote))
	}
	g := &gitStore{
		gitDir: repo.GitDir,
		objects: gitobject.Writer{Dir: filepath.Join(repo.CommonDir, "objects"),
			SHA256: strings.EqualFold(repo.Config("extensions.objectformat"), "sha256")},
		remote:   remote,
		ref:      privateRefPrefix + refComponent(remote),
		lockPath: filepath.Join(repo.CommonDir, "ctx", "sessions-"+refComponent(remote)+".lock"),
		cap:      MaxBlobSize,
	}
	g.name, g.email = repo.Identity()
	if g.cap <= 0 || g.cap > BlobLimit {
		return nil, fmt.Errorf("store: MaxBlobSize %d outside 1..%d", g.cap, BlobLimit)
	}
	return g, nil
}

// refComponent turns a remote name into one safe ref component: the name
// itself when it is plainly safe, else "x-" and a hash of it (a URL, say).
func refComponent(remote string) string {
	ok := remote != "" && !strings.HasPrefix(remote, ".") && !strings.HasSuffix(remote, ".lock") && !strings.Contains(remote, "..")
	for _, r := range remote {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			ok = false
			break
		}
	}
	if ok {
		return remote
	}
	sum := sha256.Sum256([]byte(remote))
	return "x-" + hex.EncodeToString(sum[:10])
}

// describeRemote shows a remote name, or a URL without anything before an
// '@' (user names, tokens).
func describeRemote(remote string) string {
	if at := strings.LastIndexByte(remote, '@'); at >= 0 {
		pre := ""
		if i := strings.Index(remote, "://"); i >= 0 && i < at {
			pre = remote[:i+3]
		}
		return pre + "***@" + remote[at+1:]
	}
	return remote
}

func (g *gitStore) Describe() string {
	return fmt.Sprintf("git branch ghyll/sessions of remote %q", describeRemote(g.remote))
}

// git runs one git command on the repository, with messages in English (we
// parse a few) and automatic gc off.
func (g *gitStore) git(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + g.gitDir, "-c", "gc.auto=0", "-c", "maintenance.auto=false"}, args...)
	out, err := gitexec.Run(ctx, gitexec.Cmd{Dir: g.gitDir, Args: full, Stdin: stdin, Env: []string{"LC_ALL=C", "LANGUAGE=C"}})
	return out, scrub(err)
}

// urlUserInfo matches the user-info part of a URL ("://user:token@").
var urlUserInfo = sync.OnceValue(func() *regexp.Regexp { // compiled on first use, not at start
	return regexp.MustCompile(`://[^/@\s'"]*@`)
})

// scrubbedError is an error whose message had URL credentials removed; it
// still unwraps to the original (for errors.Is with context errors).
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub removes credentials that a git message may carry in a URL.
func scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := urlUserInfo().ReplaceAllString(msg, "://***@")
	if clean == msg {
		return err
	}
	return &scrubbedError{msg: clean, err: err}
}

// fetch brings the remote branch into the private ref under the lock the
// caller holds and returns its tip ("" when the branch does not exist).
func (g *gitStore) fetch(ctx context.Context) (string, error) {
	_, err := g.git(ctx, nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		g.remote, "+"+SessionsBranch+":"+g.ref)
	if err != nil {
		var ge *gitexec.Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref") {
			_, _ = g.git(ctx, nil, "update-ref", "-d", g.ref)
			return "", nil
		}
		return "", fmt.Errorf("fetch from %s: %w", describeRemote(g.remote), err)
	}
	out, err := g.git(ctx, nil, "rev-parse", "--verify", "--quiet", g.ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("read %s: %w", g.ref, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// lockedFetch is fetch under the repository's session-store lock.
func (g *gitStore) lockedFetch(ctx context.Context) (string, error) {
	unlock, err := g.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	return g.fetch(ctx)
}

func (g *gitStore) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(g.lockPath), 0o755); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return flockFile(ctx, g.lockPath)
}

// treeEntry is one line of a tree.
type treeEntry struct {
	mode, typ, id, name string
}

// lsTree lists one tree (not recursive).
func (g *gitStore) lsTree(ctx context.Context, treeish string) ([]treeEntry, error) {
	out, err := g.git(ctx, nil, "ls-tree", "-z", "--full-tree", treeish)
	if err != nil {
		return nil, err
	}
	return parseTree(out)
}

func parseTree(out []byte) ([]treeEntry, error) {
	var es []treeEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("unexpected ls-tree line %q", rec)
		}
		es = append(es, treeEntry{mode: f[0], typ: f[1], id: f[2], name: string(name)})
	}
	return es, nil
}

// mktree stores a tree of es (internal/gitobject, the tree writer of the
// memory branch too) and returns its id.
func (g *gitStore) mktree(ctx context.Context, es []treeEntry) (string, error) {
	out := make([]gitobject.TreeEntry, len(es))
	for i, e := range es {
		id, err := hex.DecodeString(e.id)
		if err != nil {
			return "", fmt.Errorf("tree entry %s: bad object id %q", e.name, e.id)
		}
		out[i] = gitobject.TreeEntry{Mode: e.mode, Name: e.name, ID: id}
	}
	id, err := g.objects.WriteTree(out)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

func findEntry(es []treeEntry, name string) (treeEntry, bool) {
	for _, e := range es {
		if e.name == name {
			return e, true
		}
	}
	return treeEntry{}, false
}

func isSplitTree(es []treeEntry) bool {
	e, ok := findEntry(es, splitIndexName)
	return ok && e.typ == "blob"
}

// objKind classifies what is at a key.
type objKind int

const (
	kindAbsent objKind = iota
	kindBlob           // one blob
	kindSplit          // a split object (tree with an index)
	kindDir            // a directory of other keys
)

// batchCheck answers "<id> <type> <size>" for each object name (type
// "missing" when absent).
func (g *gitStore) batchCheck(ctx context.Context, names ...string) ([][3]string, error) {
	in := strings.Join(names, "\n") + "\n"
	out, err := g.git(ctx, strings.NewReader(in), "cat-file", "--batch-check")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		return nil, fmt.Errorf("cat-file --batch-check: %d answers for %d questions", len(lines), len(names))
	}
	res := make([][3]string, len(names))
	for i, l := range lines {
		if strings.HasSuffix(l, " missing") || strings.HasSuffix(l, " ambiguous") {
			res[i] = [3]string{"", "missing", ""}
			continue
		}
		f := strings.Fields(l)
		if len(f) != 3 {
			return nil, fmt.Errorf("cat-file --batch-check: unexpected answer %q", l)
		}
		res[i] = [3]string{f[0], f[1], f[2]}
	}
	return res, nil
}

// resolve finds what is at key in commit tip. A path inside a split object
// (one of its parts) is not a key: absent.
func (g *gitStore) resolve(ctx context.Context, tip, key string) (objKind, string, error) {
	if tip == "" {
		return kindAbsent, "", nil
	}
	names := []string{tip + ":" + key, tip + ":" + key + "/" + splitIndexName}
	for i := strings.IndexByte(key, '/'); i >= 0; i = nextSlash(key, i) {
		names = append(names, tip+":"+key[:i]+"/"+splitIndexName)
	}
	r, err := g.batchCheck(ctx, names...)
	if err != nil {
		return 0, "", err
	}
	for _, parent := range r[2:] {
		if parent[1] == "blob" {
			return kindAbsent, "", nil
		}
	}
	switch r[0][1] {
	case "missing":
		return kindAbsent, "", nil
	case "blob":
		return kindBlob, r[0][0], nil
	case "tree":
		if r[1][1] == "blob" {
			return kindSplit, r[0][0], nil
		}
		return kindDir, r[0][0], nil
	}
	return 0, "", fmt.Errorf("unexpected %s object at %s", r[0][1], key)
}

// nextSlash returns the index of the next '/' in key after i, or -1.
func nextSlash(key string, i int) int {
	j := strings.IndexByte(key[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func (g *gitStore) Get(ctx context.Context, key string) (io.ReadCloser, Version, error) {
	if err := ValidKey(key); err != nil {
		return nil, "", fmt.Errorf("store: get: %w", err)
	}
	rc, v, err := g.get(ctx, key)
	if err != nil {
		return nil, "", fmt.Errorf("store: get %s: %w", key, err)
	}
	return rc, v, nil
}

func (g *gitStore) get(ctx context.Context, key string) (io.ReadCloser, Version, error) {
	tip, err := g.lockedFetch(ctx)
	if err != nil {
		return nil, "", err
	}
	kind, id, err := g.resolve(ctx, tip, key)
	if err != nil {
		return nil, "", err
	}
	if kind == kindAbsent || kind == kindDir {
		return nil, "", ErrNoObject
	}
	rc, err := g.openEntry(ctx, kind, id)
	if err != nil {
		return nil, "", err
	}
	return rc, Version(id), nil
}

// openEntry streams the object that is the blob or split tree id.
func (g *gitStore) openEntry(ctx context.Context, kind objKind, id string) (io.ReadCloser, error) {
	if kind == kindBlob {
		return g.openParts(ctx, []partRef{{id: id, size: -1}}, nil)
	}
	parts, whole, err := g.readSplit(ctx, id)
	if err != nil {
		return nil, err
	}
	return g.openParts(ctx, parts, whole)
}

// partRef is one blob to stream, with what the index promises about it.
type partRef struct {
	id     string
	size   int64  // -1: not known in advance
	sha256 string // hex; "" when there is no index
}

// wholeCheck is what the index promises about the whole object.
type wholeCheck struct {
	size   int64
	sha256 string
}

// readSplit reads and checks the index of a split object and matches it with
// the tree's parts.
func (g *gitStore) readSplit(ctx context.Context, treeID string) ([]partRef, *wholeCheck, error) {
	es, err := g.lsTree(ctx, treeID)
	if err != nil {
		return nil, nil, err
	}
	idx, ok := findEntry(es, splitIndexName)
	if !ok || idx.typ != "blob" {
		return nil, nil, errors.New("split object without index")
	}
	r, err := g.batchCheck(ctx, idx.id)
	if err != nil {
		return nil, nil, err
	}
	if n, _ := strconv.ParseInt(r[0][2], 10, 64); n > maxIndexSize {
		return nil, nil, fmt.Errorf("split object index is %d bytes (limit %d)", n, maxIndexSize)
	}
	text, err := g.git(ctx, nil, "cat-file", "blob", idx.id)
	if err != nil {
		return nil, nil, err
	}
	whole, promised, err := parseSplitIndex(text)
	if err != nil {
		return nil, nil, err
	}
	if len(es) != len(promised)+1 {
		return nil, nil, fmt.Errorf("split object has %d entries, its index lists %d parts", len(es)-1, len(promised))
	}
	parts := make([]partRef, len(promised))
	for i, p := range promised {
		e, ok := findEntry(es, partName(i))
		if !ok || e.typ != "blob" || e.mode != "100644" {
			return nil, nil, fmt.Errorf("split object: part %s missing", partName(i))
		}
		parts[i] = partRef{id: e.id, size: p.size, sha256: p.sha256}
	}
	return parts, whole, nil
}

func partName(i int) string { return fmt.Sprintf("%05d", i) }

// formatSplitIndex writes the index of a split object.
func formatSplitIndex(whole wholeCheck, parts []partRef) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nsize %d\nsha256 %s\nparts %d\n", splitMagic, whole.size, whole.sha256, len(parts))
	for _, p := range parts {
		fmt.Fprintf(&b, "part %d %s\n", p.size, p.sha256)
	}
	return b.Bytes()
}

// parseSplitIndex reads an index strictly: exact header lines, part count and
// sizes that add up.
func parseSplitIndex(text []byte) (*wholeCheck, []partRef, error) {
	bad := func(why string) (*wholeCheck, []partRef, error) {
		return nil, nil, fmt.Errorf("bad split object index: %s", why)
	}
	if len(text) == 0 || text[len(text)-1] != '\n' {
		return bad("not newline-terminated")
	}
	lines := strings.Split(string(text[:len(text)-1]), "\n")
	if len(lines) < 4 || lines[0] != splitMagic {
		return bad("unknown format")
	}
	num := func(line, field string) (int64, bool) {
		s, ok := strings.CutPrefix(line, field+" ")
		if !ok || s == "" || len(s) > 19 || (len(s) > 1 && s[0] == '0') {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil && n >= 0
	}
	size, ok := num(lines[1], "size")
	if !ok {
		return bad("size")
	}
	sum, ok := strings.CutPrefix(lines[2], "sha256 ")
	if !ok || !isHex(sum, 64) {
		return bad("sha256")
	}
	n, ok := num(lines[3], "parts")
	if !ok || n < 1 || n > maxParts || int64(len(lines)) != 4+n {
		return bad("part count")
	}
	parts := make([]partRef, n)
	var total int64
	for i := range parts {
		f := strings.Split(lines[4+i], " ")
		if len(f) != 3 || f[0] != "part" || !isHex(f[2], 64) {
			return bad("part line")
		}
		ps, ok := num("size "+f[1], "size")
		if !ok || ps > size-total {
			return bad("part size")
		}
		total += ps
		parts[i] = partRef{size: ps, sha256: f[2]}
	}
	if total != size {
		return bad("part sizes do not add up")
	}
	return &wholeCheck{size: size, sha256: sum}, parts, nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// openParts streams blobs one after another through one "git cat-file
// --batch", checking each blob's git id, and the index's size and SHA-256
// when given.
func (g *gitStore) openParts(ctx context.Context, parts []partRef, whole *wholeCheck) (io.ReadCloser, error) {
	cmd := exec.CommandContext(ctx, "git", "--git-dir="+g.gitDir, "cat-file", "--batch")
	cmd.Dir = g.gitDir
	cmd.Env = gitexec.Environ(false, "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	pr := &partsReader{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 64<<10), parts: parts, whole: whole, stderr: &stderr, g: g}
	if whole != nil {
		pr.wholeHash = sha256.New()
	}
	return pr, nil
}

type partsReader struct {
	g      *gitStore
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
	parts  []partRef
	whole  *wholeCheck

	cur       int   // index of the part being read
	left      int64 // bytes of the current part still to read; -1 = not opened
	open      bool
	gitHash   hash.Hash
	partHash  hash.Hash
	wholeHash hash.Hash
	total     int64
	err       error // sticky
	closed    bool
}

func (p *partsReader) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	for {
		if !p.open {
			if p.cur == len(p.parts) {
				if err := p.finish(); err != nil {
					p.err = err
					return 0, err
				}
				p.err = io.EOF
				return 0, io.EOF
			}
			if err := p.start(); err != nil {
				p.err = err
				return 0, err
			}
		}
		if p.left == 0 {
			if err := p.endPart(); err != nil {
				p.err = err
				return 0, err
			}
			continue
		}
		if len(b) == 0 {
			return 0, nil
		}
		if int64(len(b)) > p.left {
			b = b[:p.left]
		}
		n, err := p.out.Read(b)
		if n > 0 {
			p.left -= int64(n)
			p.total += int64(n)
			p.gitHash.Write(b[:n])
			if p.partHash != nil {
				p.partHash.Write(b[:n])
			}
			if p.wholeHash != nil {
				p.wholeHash.Write(b[:n])
			}
			return n, nil
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err == nil {
			err = io.ErrNoProgress
		}
		p.err = p.fail(fmt.Errorf("part %d: %w", p.cur, err))
		return 0, p.err
	}
}

func (p *partsReader) fail(err error) error {
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		return fmt.Errorf("%w (git: %s)", err, firstLine(s))
	}
	return err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// start asks cat-file for the next part and reads its header.
func (p *partsReader) start() error {
	part := p.parts[p.cur]
	if _, err := io.WriteString(p.stdin, part.id+"\n"); err != nil {
		return p.fail(fmt.Errorf("part %d: %w", p.cur, err))
	}
	hdr, err := p.out.ReadString('\n')
	if err != nil {
		return p.fail(fmt.Errorf("part %d: %w", p.cur, err))
	}
	f := strings.Fields(hdr)
	if len(f) != 3 || f[0] != part.id || f[1] != "blob" {
		return p.fail(fmt.Errorf("part %d (%s): unexpected object %q", p.cur, part.id, strings.TrimSpace(hdr)))
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return fmt.Errorf("part %d: bad size %q", p.cur, f[2])
	}
	if part.size >= 0 && size != part.size {
		return fmt.Errorf("part %d is %d bytes, the index says %d", p.cur, size, part.size)
	}
	p.left = size
	p.open = true
	p.gitHash = p.g.objects.NewHash()
	fmt.Fprintf(p.gitHash, "blob %d\x00", size)
	p.partHash = nil
	if part.sha256 != "" {
		p.partHash = sha256.New()
	}
	return nil
}

// endPart checks a fully read part.
func (p *partsReader) endPart() error {
	if c, err := p.out.ReadByte(); err != nil || c != '\n' {
		return p.fail(fmt.Errorf("part %d: bad cat-file framing", p.cur))
	}
	part := p.parts[p.cur]
	if got := hex.EncodeToString(p.gitHash.Sum(nil)); got != part.id {
		return fmt.Errorf("part %d: content does not match its object id %s", p.cur, part.id)
	}
	if p.partHash != nil && hex.EncodeToString(p.partHash.Sum(nil)) != part.sha256 {
		return fmt.Errorf("part %d: content does not match the SHA-256 in the index", p.cur)
	}
	p.cur++
	p.open = false
	return nil
}

func (p *partsReader) finish() error {
	if p.whole == nil {
		return nil
	}
	if p.total != p.whole.size {
		return fmt.Errorf("object is %d bytes, the index says %d", p.total, p.whole.size)
	}
	if hex.EncodeToString(p.wholeHash.Sum(nil)) != p.whole.sha256 {
		return errors.New("object does not match the SHA-256 in the index")
	}
	return nil
}

func (p *partsReader) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	p.stdin.Close()
	if p.err != io.EOF {
		// Stopped early: cat-file may be blocked writing to us.
		_ = p.cmd.Process.Kill()
	}
	_ = p.cmd.Wait()
	return nil
}

func (g *gitStore) Create(ctx context.Context, key string, body io.Reader) (Version, error) {
	if err := ValidKey(key); err != nil {
		return "", fmt.Errorf("store: create: %w", err)
	}
	v, err := g.write(ctx, key, body, "", true)
	if err != nil {
		return "", fmt.Errorf("store: create %s: %w", key, err)
	}
	return v, nil
}

func (g *gitStore) Update(ctx context.Context, key string, body io.Reader, v Version) (Version, error) {
	if err := ValidKey(key); err != nil {
		return "", fmt.Errorf("store: update: %w", err)
	}
	if v == "" {
		return "", fmt.Errorf("store: update %s: %w: empty version", key, ErrVersionMismatch)
	}
	nv, err := g.write(ctx, key, body, v, false)
	if err != nil {
		return "", fmt.Errorf("store: update %s: %w", key, err)
	}
	return nv, nil
}

// write stores body as the object at key: the blobs first (once), then,
// under the repository's session-store lock, up to MaxPushAttempts rounds
// of fetch, precondition check, commit and push.
func (g *gitStore) write(ctx context.Context, key string, body io.Reader, v Version, create bool) (Version, error) {
	entry, err := g.writeObject(ctx, body)
	if err != nil {
		return "", err
	}
	unlock, err := g.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	var prevTip, rejection string
	for attempt := 1; ; attempt++ {
		tip, err := g.fetch(ctx)
		if err != nil {
			return "", err
		}
		if rejection != "" && tip == prevTip && !strings.Contains(rejection, "lock") {
			// Nobody else moved the branch: the remote refuses this push.
			return "", fmt.Errorf("push to %s rejected: %s", describeRemote(g.remote), rejection)
		}
		prevTip = tip
		var done bool
		var nv Version
		done, nv, rejection, err = g.writeOnce(ctx, tip, key, entry, v, create)
		if err != nil || done {
			return nv, err
		}
		if attempt >= MaxPushAttempts {
			return "", fmt.Errorf("the remote branch kept moving: gave up after %d attempts (last: %s)", attempt, rejection)
		}
		if err := pause(ctx, attempt); err != nil {
			return "", err
		}
	}
}

// writeOnce tries one round on the fetched tip: check the precondition,
// commit entry at key on tip and push. done is false (with git's rejection)
// when the push was refused and a new round may succeed.
func (g *gitStore) writeOnce(ctx context.Context, tip, key string, entry treeEntry, v Version, create bool) (done bool, nv Version, rejection string, err error) {
	kind, cur, err := g.resolve(ctx, tip, key)
	if err != nil {
		return true, "", "", err
	}
	if err := precondition(kind, Version(cur), v, create); err != nil {
		return true, "", "", err
	}
	if !create && cur == entry.id {
		return true, Version(cur), "", nil // same content: nothing to push
	}
	root, err := g.rewrite(ctx, tip, key, entry)
	if err != nil {
		return true, "", "", err
	}
	commit, err := g.commit(ctx, root, tip, key)
	if err != nil {
		return true, "", "", err
	}
	rejection, err = g.push(ctx, commit)
	if err != nil {
		return true, "", "", err
	}
	if rejection != "" {
		return false, "", rejection, nil
	}
	if _, err := g.git(ctx, nil, "update-ref", "-m", "ctx: session store push", g.ref, commit); err != nil {
		return true, "", "", fmt.Errorf("pushed, but %w", err)
	}
	return true, Version(entry.id), "", nil
}

// precondition checks what is at the key (kind, version cur) against a
// create (nothing there) or an update of version v.
func precondition(kind objKind, cur, v Version, create bool) error {
	switch {
	case kind == kindDir:
		return errors.New("the key is a directory of other objects")
	case create && kind != kindAbsent:
		return ErrExists
	case !create && kind == kindAbsent:
		return fmt.Errorf("%w: %w", ErrVersionMismatch, ErrNoObject)
	case !create && cur != v:
		return ErrVersionMismatch
	}
	return nil
}

// pause waits a jittered time growing with attempt before the next round,
// or until ctx ends.
func pause(ctx context.Context, attempt int) error {
	d := time.Duration(attempt*10+rand.IntN(attempt*20+1)) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// rewrite returns the root tree of tip with entry placed at key. It refuses a
// key below an existing object.
func (g *gitStore) rewrite(ctx context.Context, tip, key string, entry treeEntry) (string, error) {
	segs := strings.Split(key, "/")
	levels := make([][]treeEntry, len(segs)) // levels[i]: entries of the tree holding segs[i]
	if tip != "" {
		es, err := g.lsTree(ctx, tip)
		if err != nil {
			return "", err
		}
		levels[0] = es
		for i := 0; i < len(segs)-1; i++ {
			e, ok := findEntry(levels[i], segs[i])
			if !ok {
				break
			}
			if e.typ != "tree" {
				return "", fmt.Errorf("%s is an object, not a directory", strings.Join(segs[:i+1], "/"))
			}
			sub, err := g.lsTree(ctx, e.id)
			if err != nil {
				return "", err
			}
			if isSplitTree(sub) {
				return "", fmt.Errorf("%s is an object, not a directory", strings.Join(segs[:i+1], "/"))
			}
			levels[i+1] = sub
		}
	}
	cur := entry
	for i := len(segs) - 1; i >= 0; i-- {
		cur.name = segs[i]
		es := replaceEntry(levels[i], cur)
		id, err := g.mktree(ctx, es)
		if err != nil {
			return "", err
		}
		cur = treeEntry{mode: "040000", typ: "tree", id: id}
	}
	return cur.id, nil
}

func replaceEntry(es []treeEntry, e treeEntry) []treeEntry {
	out := make([]treeEntry, 0, len(es)+1)
	for _, x := range es {
		if x.name != e.name {
			out = append(out, x)
		}
	}
	return append(out, e)
}

func (g *gitStore) commit(ctx context.Context, tree, parent, key string) (string, error) {
	args := []string{"commit-tree", "--no-gpg-sign", tree, "-m", commitSubject + key}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	env := []string{"LC_ALL=C"}
	if g.name == "" || g.email == "" {
		env = append(env, "GIT_AUTHOR_NAME=git-ctx", "GIT_AUTHOR_EMAIL=git-ctx@localhost",
			"GIT_COMMITTER_NAME=git-ctx", "GIT_COMMITTER_EMAIL=git-ctx@localhost")
	}
	full := append([]string{"--git-dir=" + g.gitDir}, args...)
	out, err := gitexec.Run(ctx, gitexec.Cmd{Dir: g.gitDir, Args: full, Env: env})
	if err != nil {
		return "", scrub(err)
	}
	return strings.TrimSpace(string(out)), nil
}

// push pushes commit to the remote branch without force. A non-empty
// rejection is git's reason for refusing the update ("non-fast-forward",
// "fetch first", a ref lock held by a concurrent push on the remote, a hook
// that declined); err is a failure to push at all.
func (g *gitStore) push(ctx context.Context, commit string) (rejection string, err error) {
	out, err := g.git(ctx, nil, "-c", "pack.window=0", "-c", "pack.compression=0",
		"push", "--porcelain", "--quiet", "--no-verify", g.remote, commit+":"+SessionsBranch)
	if err == nil {
		return "", nil
	}
	for _, line := range strings.Split(string(out), "\n") {
		// "!<TAB><from>:<to><TAB><summary> (<reason>)"
		if f := strings.Split(line, "\t"); len(f) >= 3 && f[0] == "!" && strings.HasSuffix(f[1], ":"+SessionsBranch) {
			return scrub(errors.New(strings.Join(f[2:], " "))).Error(), nil
		}
	}
	var ge *gitexec.Error
	if errors.As(err, &ge) && (strings.Contains(ge.Stderr, "cannot lock ref") || strings.Contains(ge.Stderr, "failed to update ref")) {
		return "cannot lock ref", nil
	}
	return "", fmt.Errorf("push to %s: %w", describeRemote(g.remote), err)
}

// writeObject stores body as blobs in the local object database and returns
// the tree entry (name unset) that represents it: one blob when it fits the
// cap, else a split tree.
func (g *gitStore) writeObject(ctx context.Context, body io.Reader) (treeEntry, error) {
	br := bufio.NewReaderSize(ctxReader{ctx, body}, 64<<10)
	whole := sha256.New()
	var parts []partRef
	var total int64
	for {
		id, size, sum, err := g.writeBlobFrom(io.TeeReader(io.LimitReader(br, g.cap), whole))
		if err != nil {
			return treeEntry{}, err
		}
		parts = append(parts, partRef{id: id, size: size, sha256: sum})
		total += size
		if size < g.cap {
			break
		}
		if _, err := br.Peek(1); err == io.EOF {
			break
		} else if err != nil {
			return treeEntry{}, err
		}
		if len(parts) >= maxParts {
			return treeEntry{}, fmt.Errorf("object larger than %d parts of %d bytes", maxParts, g.cap)
		}
	}
	if len(parts) == 1 {
		return treeEntry{mode: "100644", typ: "blob", id: parts[0].id}, nil
	}
	index := formatSplitIndex(wholeCheck{size: total, sha256: hex.EncodeToString(whole.Sum(nil))}, parts)
	idxID, _, _, err := g.writeBlobFrom(bytes.NewReader(index))
	if err != nil {
		return treeEntry{}, err
	}
	es := []treeEntry{{mode: "100644", typ: "blob", id: idxID, name: splitIndexName}}
	for i, p := range parts {
		es = append(es, treeEntry{mode: "100644", typ: "blob", id: p.id, name: partName(i)})
	}
	id, err := g.mktree(ctx, es)
	if err != nil {
		return treeEntry{}, err
	}
	return treeEntry{mode: "040000", typ: "tree", id: id}, nil
}

func (g *gitStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validPrefix(prefix); err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	keys, err := g.list(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", prefix, err)
	}
	return keys, nil
}

func (g *gitStore) list(ctx context.Context, prefix string) ([]string, error) {
	tip, err := g.lockedFetch(ctx)
	if err != nil || tip == "" {
		return nil, err
	}
	treeish := tip + "^{tree}"
	if prefix != "" {
		kind, id, err := g.resolve(ctx, tip, strings.TrimSuffix(prefix, "/"))
		if err != nil {
			return nil, err
		}
		if kind != kindDir {
			return nil, nil
		}
		treeish = id
	}
	out, err := g.git(ctx, nil, "ls-tree", "-r", "-z", "--full-tree", treeish)
	if err != nil {
		return nil, err
	}
	es, err := parseTree(out)
	if err != nil {
		return nil, err
	}
	split := map[string]bool{}
	for _, e := range es {
		if path.Base(e.name) == splitIndexName && e.typ == "blob" {
			split[path.Dir(e.name)] = true
		}
	}
	var keys []string
	seen := map[string]bool{}
	for _, e := range es {
		name := e.name
		// The outermost split tree above the entry (if any) is the object.
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if split[d] {
				name = d
			}
		}
		if name == e.name && (e.typ != "blob" || strings.HasPrefix(path.Base(name), ".")) {
			continue
		}
		key := prefix + name
		if seen[key] || ValidKey(key) != nil {
			continue
		}
		seen[key] = true
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys, nil
}
