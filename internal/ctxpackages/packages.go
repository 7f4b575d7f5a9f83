package ctxpackages

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/boundedfile"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/workspace"
	"github.com/git-ctx/git-ctx/redact"
)

// PackageTool is provenance.tool of the packages git-ctx builds.
const PackageTool = "git-ctx"

// ErrPackageFailed marks a package file that does not verify.
var ErrPackageFailed = fault.Sentinel(fault.Failed, "package verification failed")

// BuildOptions configures Build.
type BuildOptions struct {
	Name, Version string
	Description   string // default "<name> <version>: context package built by git-ctx"
	// Layers to include; nil means session plus every layer From supplies.
	Layers []ctxpkg.Layer
	// Session is the checkpoint session of the session layer; "" means this
	// device's latest session.
	Session string
	// From supplies the layers other than session (and a session layer when
	// the memory has none). It may be nil.
	From *ctxpkg.Content
	Sign bool
	Now  time.Time // zero means time.Now()
	// Producer is provenance.tool_version (the CLI passes its version; ""
	// means "dev").
	Producer string
}

// ParseLayers parses a comma-separated list of layer names.
func ParseLayers(s string) ([]ctxpkg.Layer, error) {
	var out []ctxpkg.Layer
	seen := map[ctxpkg.Layer]bool{}
	for _, f := range strings.Split(s, ",") {
		l := ctxpkg.Layer(strings.TrimSpace(f))
		switch l {
		case ctxpkg.LayerKnowledge, ctxpkg.LayerGraph, ctxpkg.LayerSession, ctxpkg.LayerPatterns, ctxpkg.LayerGotchas:
		default:
			return nil, fmt.Errorf("%w: unknown layer %q (want knowledge, graph, session, patterns or gotchas)", workspace.ErrInput, l)
		}
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out, nil
}

// ReadContentSource reads --from: a .ctxpkg (its content is used, whether
// or not it verifies) or a JSON object holding content members ("knowledge",
// "graph", "session", "patterns", "gotchas"), parsed as serde would.
func ReadContentSource(path string) (*ctxpkg.Content, error) {
	data, err := boundedfile.Read(path, ctxpkg.MaxFileSize, workspace.ErrInput)
	if err != nil {
		return nil, err
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%w: --from %s: not a JSON object: %v", workspace.ErrInput, path, err)
	}
	_, hasM := probe["manifest"]
	_, hasC := probe["content"]
	if !(hasM && hasC) {
		// A bare content object: wrap it in a stub manifest to parse it.
		stub := ctxpkg.Manifest{SchemaVersion: 1, Name: "from", Version: "0", Layers: []ctxpkg.Layer{ctxpkg.LayerSession}}
		mj, err := stub.AppendJSON(nil)
		if err != nil {
			return nil, err
		}
		doc := append(append(append([]byte(`{"manifest":`), mj...), `,"content":`...), data...)
		data = append(doc, '}')
	}
	p, err := ctxpkg.ParseFile(data)
	if err != nil {
		return nil, fmt.Errorf("%w: --from %s: %v", workspace.ErrInput, path, err)
	}
	return &p.Content, nil
}

// Build builds a .ctxpkg v1 (schema_version 1) from the memory: the
// session layer from checkpoints of one session of this device in this
// repository (SessionLayer), the other layers from opt.From. It seals
// the package (integrity over the serde writer's own bytes), signs it with
// the device key when opt.Sign, and returns it with its file bytes.
func Build(ctx context.Context, w *workspace.Workspace, opt BuildOptions) (*ctxpkg.Package, []byte, error) {
	if err := gitstore.CheckPackagePath(opt.Name, opt.Version); err != nil {
		return nil, nil, workspace.Tagged(err, workspace.ErrInput)
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC()
	from := opt.From
	if from == nil {
		from = &ctxpkg.Content{}
	}
	want := wantedLayers(opt.Layers, from)
	var content ctxpkg.Content
	var sessionID string
	if want[ctxpkg.LayerSession] {
		sl, sid, err := buildSessionLayer(ctx, w, opt.Session, from, now)
		if err != nil {
			return nil, nil, err
		}
		content.Session, sessionID = sl, sid
	}
	if err := takeLayers(&content, from, want); err != nil {
		return nil, nil, err
	}
	p := newPackage(opt, now, want, &content)
	if name, _ := w.Repo.Identity(); name != "" {
		p.Manifest.Author = strPtr(name)
	}
	if repoID, err := w.RepoID(ctx); err == nil {
		p.Manifest.Provenance.ProjectHash = strPtr(repoID)
	}
	if sessionID != "" {
		p.Manifest.Provenance.SourceSessionID = strPtr(sessionID)
	}
	return sealPackage(w, p, opt.Sign)
}

// wantedLayers is the set of layers to build: layers, or when nil the
// session layer plus every layer from supplies.
func wantedLayers(layers []ctxpkg.Layer, from *ctxpkg.Content) map[ctxpkg.Layer]bool {
	if layers == nil {
		layers = []ctxpkg.Layer{ctxpkg.LayerSession}
		for _, l := range []struct {
			l  ctxpkg.Layer
			ok bool
		}{{ctxpkg.LayerKnowledge, from.Knowledge != nil}, {ctxpkg.LayerGraph, from.Graph != nil},
			{ctxpkg.LayerPatterns, from.Patterns != nil}, {ctxpkg.LayerGotchas, from.Gotchas != nil}} {
			if l.ok {
				layers = append(layers, l.l)
			}
		}
	}
	want := map[ctxpkg.Layer]bool{}
	for _, l := range layers {
		want[l] = true
	}
	return want
}

// buildSessionLayer is the session layer of session (SessionLayer), else
// the one from supplies, else an empty one when no session was named (a
// named session without checkpoints is workspace.ErrNotFound).
func buildSessionLayer(ctx context.Context, w *workspace.Workspace, session string, from *ctxpkg.Content, now time.Time) (*ctxpkg.SessionLayer, string, error) {
	sl, sid, err := SessionLayer(ctx, w, session, now)
	if err != nil {
		return nil, "", err
	}
	if sl == nil && from.Session != nil {
		sl = from.Session
	}
	if sl == nil {
		if session != "" {
			return nil, "", workspace.Tagged(fmt.Errorf("no checkpoint of session %q by this device in this repository", session), workspace.ErrNotFound)
		}
		sl = &ctxpkg.SessionLayer{ExportedAt: now}
	}
	return sl, sid, nil
}

// takeLayers copies into content every wanted layer other than session
// from from; a wanted layer from lacks is workspace.ErrInput.
func takeLayers(content *ctxpkg.Content, from *ctxpkg.Content, want map[ctxpkg.Layer]bool) error {
	layers := []struct {
		layer ctxpkg.Layer
		take  func() bool // copies the layer; false when from lacks it
	}{
		{ctxpkg.LayerKnowledge, func() bool { content.Knowledge = from.Knowledge; return from.Knowledge != nil }},
		{ctxpkg.LayerGraph, func() bool { content.Graph = from.Graph; return from.Graph != nil }},
		{ctxpkg.LayerPatterns, func() bool { content.Patterns = from.Patterns; return from.Patterns != nil }},
		{ctxpkg.LayerGotchas, func() bool { content.Gotchas = from.Gotchas; return from.Gotchas != nil }},
	}
	for _, l := range layers {
		if want[l.layer] && !l.take() {
			return fmt.Errorf("%w: layer %s needs --from FILE supplying it", workspace.ErrInput, l.layer)
		}
	}
	return nil
}

// newPackage is the unsealed package of content with its manifest.
func newPackage(opt BuildOptions, now time.Time, want map[ctxpkg.Layer]bool, content *ctxpkg.Content) *ctxpkg.Package {
	// Layers in declaration order, as lean-ctx's builder lists them.
	var ordered []ctxpkg.Layer
	for _, l := range []ctxpkg.Layer{ctxpkg.LayerKnowledge, ctxpkg.LayerGraph, ctxpkg.LayerSession, ctxpkg.LayerPatterns, ctxpkg.LayerGotchas} {
		if want[l] {
			ordered = append(ordered, l)
		}
	}
	desc := opt.Description
	if desc == "" {
		desc = fmt.Sprintf("%s %s: context package built by git-ctx", opt.Name, opt.Version)
	}
	producer := opt.Producer
	if producer == "" {
		producer = "dev"
	}
	return &ctxpkg.Package{
		Manifest: ctxpkg.Manifest{
			SchemaVersion: 1, Name: opt.Name, Version: opt.Version, Description: desc,
			CreatedAt: now, Layers: ordered, Dependencies: []ctxpkg.Dependency{}, Tags: []string{},
			Provenance:    ctxpkg.Provenance{Tool: PackageTool, ToolVersion: producer},
			Compatibility: ctxpkg.Compatibility{TargetLanguages: []string{}, TargetFrameworks: []string{}},
			Stats:         contentStats(content),
		},
		Content: *content,
	}
}

// sealPackage seals p, signs it with the device key when sign, and returns
// it with its file bytes (over the size limit is workspace.ErrInput).
func sealPackage(w *workspace.Workspace, p *ctxpkg.Package, sign bool) (*ctxpkg.Package, []byte, error) {
	if err := p.Seal(); err != nil {
		return nil, nil, workspace.Tagged(err, workspace.ErrInput)
	}
	if sign {
		dev, err := w.Device()
		if err != nil {
			return nil, nil, err
		}
		if err := p.Manifest.Sign(dev.Key); err != nil {
			return nil, nil, err
		}
	}
	data, err := p.MarshalFile()
	if err != nil {
		return nil, nil, workspace.Tagged(err, workspace.ErrInput)
	}
	if len(data) > ctxpkg.MaxFileSize {
		return nil, nil, workspace.Tagged(fmt.Errorf("%w (%d bytes, max %d bytes)", ctxpkg.ErrTooLarge, len(data), ctxpkg.MaxFileSize), workspace.ErrInput)
	}
	return p, data, nil
}

func contentStats(c *ctxpkg.Content) ctxpkg.Stats {
	var s ctxpkg.Stats
	if c.Knowledge != nil {
		s.KnowledgeFacts = uint32(len(c.Knowledge.Facts))
		s.PatternCount += uint32(len(c.Knowledge.Patterns))
	}
	if c.Graph != nil {
		s.GraphNodes, s.GraphEdges = uint32(len(c.Graph.Nodes)), uint32(len(c.Graph.Edges))
	}
	if c.Patterns != nil {
		s.PatternCount += uint32(len(c.Patterns.Patterns))
	}
	if c.Gotchas != nil {
		s.GotchaCount = uint32(len(c.Gotchas.Gotchas))
	}
	return s
}

// Line prefixes (case-insensitive) that turn a checkpoint summary line into
// a decision or a next step of the session layer.
var (
	decisionPrefixes = []string{"decision:", "decided:"}
	nextPrefixes     = []string{"next:", "next step:", "todo:"}
)

func cutPrefixFold(line string, prefixes []string) (string, bool) {
	low := strings.ToLower(line)
	for _, p := range prefixes {
		if strings.HasPrefix(low, p) {
			return strings.TrimSpace(line[len(p):]), true
		}
	}
	return "", false
}

// SessionLayer builds a session layer from the checkpoints of session (""
// = the latest session) on this device's chain in this repository, reading
// at most its latest 512 checkpoints; nil when there are none. Oldest first:
// task_description = the first checkpoint's first summary line; one finding
// per checkpoint (its first summary line, with its file when it touched
// exactly one); decisions = summary lines starting "Decision:" or
// "Decided:" (the next line starting "Because:" or "Why:" is the
// rationale); next_steps = lines starting "Next:", "Next step:" or "TODO:"
// of the latest checkpoint that has any; files_touched = the union of the
// checkpoints' files. It returns the session id too.
func SessionLayer(ctx context.Context, w *workspace.Workspace, session string, now time.Time) (*ctxpkg.SessionLayer, string, error) {
	cps, session, err := sessionCheckpoints(ctx, w, session)
	if err != nil || len(cps) == 0 {
		return nil, session, err
	}
	sl := &ctxpkg.SessionLayer{Findings: []ctxpkg.SessionFinding{}, Decisions: []ctxpkg.SessionDecision{},
		NextSteps: []string{}, FilesTouched: []string{}, ExportedAt: now}
	seen := map[string]bool{}
	var next []string
	for i := len(cps) - 1; i >= 0; i-- {
		if steps := addToSessionLayer(sl, cps[i], seen); len(steps) > 0 {
			next = steps
		}
	}
	if next != nil {
		sl.NextSteps = next
	}
	return sl, session, nil
}

// sessionCheckpoints reads the checkpoints of session ("" = the latest
// one) among this device's latest sessionWalk checkpoints in this
// repository, newest first, and returns the session id.
func sessionCheckpoints(ctx context.Context, w *workspace.Workspace, session string) ([]*checkpoint.Checkpoint, string, error) {
	v, err := w.Store.View()
	if err != nil {
		return nil, "", err
	}
	dev, repoID, err := w.DeviceRepo(ctx)
	if err != nil {
		return nil, "", err
	}
	entries, err := v.Chain(repoID, dev.ID)
	if err != nil && !errors.Is(err, gitstore.ErrNotExist) {
		return nil, "", err
	}
	var cps []*checkpoint.Checkpoint // newest first
	for i := len(entries) - 1; i >= 0 && len(entries)-i <= sessionWalk; i-- {
		cp, err := v.Checkpoint(repoID, entries[i].Hash)
		if err != nil {
			return nil, "", fmt.Errorf("read checkpoint %s: %w", entries[i].Hash[:12], err)
		}
		if session == "" && i == len(entries)-1 {
			session = cp.SessionID
			if session == "" {
				cps = append(cps, cp)
				break // no session id: the latest checkpoint alone
			}
		}
		if cp.SessionID == session {
			cps = append(cps, cp)
		}
	}
	return cps, session, nil
}

// addToSessionLayer adds checkpoint cp (redacted) to sl: the task when sl
// has none, its finding, its decisions and its files (seen: the files
// listed so far). It returns cp's next steps.
func addToSessionLayer(sl *ctxpkg.SessionLayer, cp *checkpoint.Checkpoint, seen map[string]bool) []string {
	files, _ := redact.Strings(cp.FilesTouched)
	lines := strings.Split(strings.TrimSpace(redact.String(cp.Summary).Text), "\n")
	head := strings.TrimSpace(lines[0])
	if sl.TaskDescription == nil && head != "" {
		sl.TaskDescription = strPtr(head)
	}
	f := ctxpkg.SessionFinding{Summary: head}
	if len(files) == 1 {
		f.File = strPtr(files[0])
	}
	sl.Findings = append(sl.Findings, f)
	decisions, steps := summaryLines(lines)
	sl.Decisions = append(sl.Decisions, decisions...)
	for _, file := range files {
		if !seen[file] {
			seen[file] = true
			sl.FilesTouched = append(sl.FilesTouched, file)
		}
	}
	return steps
}

// summaryLines finds the decisions (with the rationale on the line after)
// and the next steps among a summary's lines.
func summaryLines(lines []string) ([]ctxpkg.SessionDecision, []string) {
	var decisions []ctxpkg.SessionDecision
	var steps []string
	for j := 0; j < len(lines); j++ {
		line := strings.TrimSpace(lines[j])
		if d, ok := cutPrefixFold(line, decisionPrefixes); ok && d != "" {
			dec := ctxpkg.SessionDecision{Summary: d}
			if j+1 < len(lines) {
				if r, ok := cutPrefixFold(strings.TrimSpace(lines[j+1]), []string{"because:", "why:"}); ok && r != "" {
					dec.Rationale = strPtr(r)
				}
			}
			decisions = append(decisions, dec)
		}
		if s, ok := cutPrefixFold(line, nextPrefixes); ok && s != "" {
			steps = append(steps, s)
		}
	}
	return decisions, steps
}

// sessionWalk bounds how many of this device's latest checkpoints are read
// to find the checkpoints of a session.
const sessionWalk = 512

func strPtr(s string) *string { return &s }

// Check is the verification of one package file (`pkg verify`).
type Check struct {
	File     string
	Valid    bool
	Name     string
	Version  string
	SHA256   string
	Signed   bool
	Signer   string // fingerprint of the embedded key
	Failures []string
	// Refused: over the 10,485,760-byte limit (not read).
	Refused bool
	Package *ctxpkg.Package
	Raw     []byte
}

// CheckBytes verifies package file bytes, listing every failure
// (ctxpkg Package.Problems).
func CheckBytes(file string, data []byte) Check {
	pc := Check{File: file, Failures: []string{}, Raw: data}
	p, err := ctxpkg.ParseFile(data)
	if err != nil {
		pc.Refused = errors.Is(err, ctxpkg.ErrTooLarge)
		pc.Failures = append(pc.Failures, err.Error())
		return pc
	}
	pc.Package = p
	m := &p.Manifest
	pc.Name, pc.Version, pc.SHA256, pc.Signed = m.Name, m.Version, m.Integrity.SHA256, m.Signature != nil
	if fp := signerFingerprint(m); fp != "" {
		pc.Signer = fp
	}
	for _, e := range p.Problems() {
		pc.Failures = append(pc.Failures, ctxpkg.ProblemText(e))
	}
	pc.Valid = len(pc.Failures) == 0
	return pc
}

func signerFingerprint(m *ctxpkg.Manifest) string {
	if m.Signature == nil {
		return ""
	}
	key, err := hex.DecodeString(m.Signature.PublicKey)
	if err != nil || len(key) != 32 {
		return ""
	}
	return checkpoint.Fingerprint(key)
}

// CheckFile reads and verifies a package file; a file over the size
// limit is refused without being read.
func CheckFile(path string) Check {
	data, err := boundedfile.Read(path, ctxpkg.MaxFileSize, workspace.ErrInput)
	if err != nil {
		pc := Check{File: path, Failures: []string{}}
		if errors.Is(err, workspace.ErrInput) {
			pc.Refused = true
			var fi os.FileInfo
			if fi, err = os.Stat(path); err == nil {
				err = fmt.Errorf("%w (%d bytes, max %d bytes)", ctxpkg.ErrTooLarge, fi.Size(), ctxpkg.MaxFileSize)
			}
		}
		pc.Failures = append(pc.Failures, err.Error())
		return pc
	}
	return CheckBytes(path, data)
}

// checkedFile reads path and returns its bytes when it verifies: over
// the limit wraps workspace.ErrInput, a verification failure ErrPackageFailed.
func checkedFile(path string) (*Check, error) {
	pc := CheckFile(path)
	switch {
	case pc.Refused:
		return nil, workspace.Tagged(errors.New(strings.Join(pc.Failures, "; ")), workspace.ErrInput)
	case !pc.Valid:
		return nil, fmt.Errorf("%w: %s: %s (rebuild it; 'git ctx pkg verify FILE' lists the failures)", ErrPackageFailed, path, strings.Join(pc.Failures, "; "))
	}
	return &pc, nil
}

// Publish verifies the package file at path (extension, size,
// every check of `pkg verify`) and publishes it byte for byte at
// repos/<repo-id>/packages/<name>/<version>.ctxpkg in one commit. The
// identical file already published is a no-op (Existed); a different one
// under the same name and version is gitstore.ErrPackageExists.
func Publish(ctx context.Context, w *workspace.Workspace, path string) (*gitstore.PublishResult, error) {
	if err := ctxpkg.CheckName(filepath.Base(path)); err != nil {
		return nil, workspace.Tagged(err, workspace.ErrInput)
	}
	pc, err := checkedFile(path)
	if err != nil {
		return nil, err
	}
	if err := gitstore.CheckPackagePath(pc.Name, pc.Version); err != nil {
		return nil, workspace.Tagged(err, workspace.ErrInput)
	}
	dev, repoID, err := w.DeviceRepo(ctx)
	if err != nil {
		return nil, err
	}
	return w.Store.PublishPackage(ctx, gitstore.PublishRequest{RepoID: repoID, Device: dev, Author: w.Author(), Data: pc.Raw})
}

// Info is one published package (`pkg list`).
type Info struct {
	Name        string
	Version     string
	SHA256      string
	Description string
	Layers      []string
	CreatedAt   string
	Signed      bool
	Signer      string
	// SignerDevice is the device whose key on the branch signed it.
	SignerDevice string
	Bytes        int
	Path         string
	Verified     bool
	Error        string
	raw          []byte
}

// List reads this repository's published packages from the branch
// tree (not the cache: there are few, and the tree is the truth), verifying
// each (gitstore.CheckFile). Sorted by name, then by version
// (CompareVersions, highest last).
func List(ctx context.Context, w *workspace.Workspace) ([]Info, error) {
	v, err := w.Store.View()
	if err != nil {
		return nil, err
	}
	repoID, err := w.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	good, _, err := v.WalkPackages(repoID)
	if err != nil {
		return nil, err
	}
	devKeys := map[string]string{} // fingerprint → device
	if devs, err := v.Devices(); err == nil {
		for _, d := range devs {
			if pub, _, err := v.DeviceKey(d); err == nil {
				devKeys[checkpoint.Fingerprint(pub)] = d
			}
		}
	}
	out := make([]Info, 0, len(good))
	for _, e := range good {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		info := Info{Name: e.Name, Version: e.Version, Path: e.Path, Layers: []string{}}
		raw, err := v.ReadBlob(e.Blob, ctxpkg.MaxFileSize)
		if errors.Is(err, gitstore.ErrTooLarge) {
			info.Error = err.Error()
			out = append(out, info)
			continue
		} else if err != nil {
			return nil, err
		}
		info.Bytes, info.raw = len(raw), raw
		pkg, reason, detail := chain.CheckPackage(raw, e.Path, gitstore.PackagePlacer(repoID))
		if reason != "" {
			info.Error = string(reason) + ": " + detail
		}
		info.Verified = reason == ""
		if pkg != nil {
			mf := &pkg.Manifest
			info.SHA256, info.Description, info.Signed = mf.Integrity.SHA256, mf.Description, mf.Signature != nil
			info.CreatedAt = mf.CreatedAt.UTC().Format(time.RFC3339Nano)
			for _, l := range mf.Layers {
				info.Layers = append(info.Layers, string(l))
			}
			info.Signer = signerFingerprint(mf)
			info.SignerDevice = devKeys[info.Signer]
		}
		out = append(out, info)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return CompareVersions(out[i].Version, out[j].Version) < 0
	})
	return out, nil
}

// SplitSpec splits NAME[@VERSION]; the '@' of a scoped name ("@team/x") is
// part of the name.
func SplitSpec(spec string) (name, version string) {
	if i := strings.LastIndexByte(spec, '@'); i > 0 {
		return spec[:i], spec[i+1:]
	}
	return spec, ""
}

// Get returns the published package named by spec (NAME or
// NAME@VERSION) and its file bytes. Without a version it takes the highest
// version of NAME (CompareVersions) among those that verify. A package that
// does not verify is ErrPackageFailed; none found is workspace.ErrNotFound.
func Get(ctx context.Context, w *workspace.Workspace, spec string) (*Info, []byte, error) {
	name, version := SplitSpec(spec)
	list, err := List(ctx, w)
	if err != nil {
		return nil, nil, err
	}
	var pick *Info
	for i := range list {
		p := &list[i]
		if p.Name != name || version != "" && p.Version != version {
			continue
		}
		if version == "" && !p.Verified {
			continue
		}
		pick = p // sorted: the highest version comes last
	}
	if pick == nil {
		if version != "" {
			return nil, nil, workspace.Tagged(fmt.Errorf("no package %s@%s is published in this repository (see 'git ctx pkg list')", name, version), workspace.ErrNotFound)
		}
		return nil, nil, workspace.Tagged(fmt.Errorf("no verified package %s is published in this repository (see 'git ctx pkg list')", name), workspace.ErrNotFound)
	}
	if !pick.Verified {
		return nil, nil, fmt.Errorf("%w: %s@%s on the branch: %s (run 'git ctx verify')", ErrPackageFailed, pick.Name, pick.Version, pick.Error)
	}
	return pick, pick.raw, nil
}

// EnvelopeFile is what Unwrap found.
type EnvelopeFile struct {
	Envelope *ctxpkg.Envelope
	Form     ctxpkg.HMACForm
	Check    Check // the payload package
}

// Wrap verifies the package file bytes and wraps them, verbatim, in
// a transport envelope (format_version 1, content_type context_package,
// sender "cli" with fingerprint of producer (this tool's version) and executable)
// signed with secret (HMAC form L, what lean-ctx checks). sourceFile goes
// to metadata.source_file.
func Wrap(data []byte, sourceFile string, recipient *string, secret []byte, now time.Time, producer string) ([]byte, error) {
	if len(secret) == 0 {
		return nil, fmt.Errorf("%w: the HMAC secret is empty", workspace.ErrInput)
	}
	pc := CheckBytes(sourceFile, data)
	if pc.Refused {
		return nil, workspace.Tagged(errors.New(strings.Join(pc.Failures, "; ")), workspace.ErrInput)
	}
	if !pc.Valid {
		return nil, fmt.Errorf("%w: %s: %s", ErrPackageFailed, sourceFile, strings.Join(pc.Failures, "; "))
	}
	exe, _ := os.Executable()
	meta := map[string]string{"source_file": sourceFile}
	env := ctxpkg.NewPackageEnvelope(string(data), now, recipient, ctxpkg.DaemonFingerprint(producer, exe), meta)
	env.Sign(secret)
	out, err := env.Marshal()
	if err != nil {
		return nil, workspace.Tagged(err, workspace.ErrInput)
	}
	return out, nil
}

// Unwrap parses envelope bytes (the 2,000,000-byte limit first:
// workspace.ErrInput), checks the HMAC under secret in both forms (a mismatch is
// ErrPackageFailed), requires content_type context_package (workspace.ErrInput) and
// verifies the payload package (ErrPackageFailed).
func Unwrap(data, secret []byte) (*EnvelopeFile, error) {
	if len(secret) == 0 {
		return nil, fmt.Errorf("%w: the HMAC secret is empty", workspace.ErrInput)
	}
	env, err := ctxpkg.ParseEnvelope(data)
	if errors.Is(err, ctxpkg.ErrEnvelopeTooLarge) {
		return nil, workspace.Tagged(err, workspace.ErrInput)
	} else if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPackageFailed, err)
	}
	form, err := env.VerifyHMAC(secret)
	if err != nil {
		return nil, fmt.Errorf("%w: %w (check the shared secret, or ask the sender to wrap the package again)", ErrPackageFailed, err)
	}
	if env.ContentType != ctxpkg.ContentContextPackage {
		return nil, fmt.Errorf("%w: the envelope carries %s, not a context package", workspace.ErrInput, env.ContentType)
	}
	pc := CheckBytes("payload_json", []byte(env.PayloadJSON))
	out := &EnvelopeFile{Envelope: env, Form: form, Check: pc}
	if !pc.Valid {
		return out, fmt.Errorf("%w: the payload package: %s", ErrPackageFailed, strings.Join(pc.Failures, "; "))
	}
	return out, nil
}
