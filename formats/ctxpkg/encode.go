package ctxpkg

import (
	"fmt"
	"math"
	"time"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

// enc wraps a serdejson.Writer and records the first unencodable float.
type enc struct {
	w   serdejson.Writer
	err error
}

func (e *enc) key(k string)    { e.w.Key(k) }
func (e *enc) str(s string)    { e.w.String(s) }
func (e *enc) u64(u uint64)    { e.w.Uint64(u) }
func (e *enc) strs(l []string) { e.w.Strings(l) }
func (e *enc) time(t time.Time) {
	e.w.String(serdejson.FormatTime(t))
}
func (e *enc) optTime(t *time.Time) {
	if t == nil {
		e.w.Null()
		return
	}
	e.time(*t)
}
func (e *enc) f64(field string, f float64) {
	e.f64check(field, f)
	e.w.Float64(f)
}
func (e *enc) f32(field string, f float32) {
	e.f64check(field, float64(f))
	e.w.Float32(f)
}
func (e *enc) f64check(field string, f float64) {
	if (math.IsNaN(f) || math.IsInf(f, 0)) && e.err == nil {
		e.err = fmt.Errorf("%w: %s is %v (serde_json would write null)", ErrUnencodable, field, f)
	}
}

// optStr writes k and *s when s is not nil (an Option<String> serde skips
// when None); optU64 does the same for an Option of an unsigned integer.
func (e *enc) optStr(k string, s *string) {
	if s != nil {
		e.key(k)
		e.str(*s)
	}
}
func (e *enc) optU64(k string, u *uint64) {
	if u != nil {
		e.key(k)
		e.u64(*u)
	}
}

// AppendJSON appends the compact serde_json text of the content.
func (c *Content) AppendJSON(dst []byte) ([]byte, error) {
	e := &enc{w: *serdejson.NewWriter(dst)}
	c.write(e)
	return e.w.Bytes(), e.err
}

// AppendJSON appends the compact serde_json text of the manifest.
func (m *Manifest) AppendJSON(dst []byte) ([]byte, error) {
	e := &enc{w: *serdejson.NewWriter(dst)}
	m.write(e)
	return e.w.Bytes(), e.err
}

// MarshalCompact returns the compact serde_json text of the whole bundle,
// with the content re-serialised from Content (as lean-ctx's install does).
func (p *Package) MarshalCompact() ([]byte, error) {
	e := &enc{}
	e.w.BeginObject()
	e.key("manifest")
	p.Manifest.write(e)
	e.key("content")
	p.Content.write(e)
	e.w.EndObject()
	return e.w.Bytes(), e.err
}

// MarshalFile returns the file form lean-ctx exports: pretty serde_json
// (two-space indent, no trailing newline) of the whole bundle.
func (p *Package) MarshalFile() ([]byte, error) {
	b, err := p.MarshalCompact()
	if err != nil {
		return nil, err
	}
	return serdejson.Pretty(b), nil
}

func (m *Manifest) write(e *enc) {
	e.w.BeginObject()
	e.key("schema_version")
	e.u64(uint64(m.SchemaVersion))
	if m.ConformanceLevel != nil {
		e.key("conformance_level")
		e.u64(uint64(*m.ConformanceLevel))
	}
	if k := m.EffectiveKind(); k != KindContext {
		e.key("kind")
		e.str(string(k))
	}
	e.key("name")
	e.str(m.Name)
	e.key("version")
	e.str(m.Version)
	e.key("description")
	e.str(m.Description)
	e.key("author")
	e.w.OptString(m.Author)
	e.optStr("scope", m.Scope)
	e.key("created_at")
	e.time(m.CreatedAt)
	e.key("updated_at")
	e.optTime(m.UpdatedAt)
	e.key("layers")
	e.w.BeginArray()
	for _, l := range m.Layers {
		e.str(string(l))
	}
	e.w.EndArray()
	e.key("dependencies")
	e.w.BeginArray()
	for _, d := range m.Dependencies {
		e.w.BeginObject()
		e.key("name")
		e.str(d.Name)
		e.key("version_req")
		e.str(d.VersionReq)
		e.key("optional")
		e.w.Bool(d.Optional)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.key("tags")
	e.strs(m.Tags)
	e.optStr("visibility", m.Visibility)
	e.key("integrity")
	e.w.BeginObject()
	e.key("sha256")
	e.str(m.Integrity.SHA256)
	e.key("content_hash")
	e.str(m.Integrity.ContentHash)
	e.key("byte_size")
	e.u64(m.Integrity.ByteSize)
	e.w.EndObject()
	e.key("provenance")
	e.w.BeginObject()
	e.key("tool")
	e.str(m.Provenance.Tool)
	e.key("tool_version")
	e.str(m.Provenance.ToolVersion)
	e.key("project_hash")
	e.w.OptString(m.Provenance.ProjectHash)
	e.key("source_session_id")
	e.w.OptString(m.Provenance.SourceSessionID)
	e.w.EndObject()
	e.key("compatibility")
	e.w.BeginObject()
	e.key("min_lean_ctx_version")
	e.w.OptString(m.Compatibility.MinLeanCtxVersion)
	e.key("target_languages")
	e.strs(m.Compatibility.TargetLanguages)
	e.key("target_frameworks")
	e.strs(m.Compatibility.TargetFrameworks)
	e.w.EndObject()
	e.key("stats")
	s := &m.Stats
	e.w.BeginObject()
	e.key("knowledge_facts")
	e.u64(uint64(s.KnowledgeFacts))
	e.key("graph_nodes")
	e.u64(uint64(s.GraphNodes))
	e.key("graph_edges")
	e.u64(uint64(s.GraphEdges))
	e.key("pattern_count")
	e.u64(uint64(s.PatternCount))
	e.key("gotcha_count")
	e.u64(uint64(s.GotchaCount))
	e.key("compression_ratio")
	e.f64("stats.compression_ratio", s.CompressionRatio)
	e.w.EndObject()
	if sig := m.Signature; sig != nil {
		e.key("signature")
		e.w.BeginObject()
		e.key("algorithm")
		e.str(sig.Algorithm)
		e.key("public_key")
		e.str(sig.PublicKey)
		e.key("value")
		e.str(sig.Value)
		e.w.EndObject()
	}
	if g := m.GraphSummary; g != nil {
		e.key("graph_summary")
		e.w.BeginObject()
		e.key("node_count")
		e.u64(uint64(g.NodeCount))
		e.key("edge_count")
		e.u64(uint64(g.EdgeCount))
		e.key("node_types")
		e.strs(g.NodeTypes)
		if g.ActivationMean != nil {
			e.key("activation_mean")
			e.f64("graph_summary.activation_mean", *g.ActivationMean)
		}
		if g.Freshness != nil {
			e.key("freshness")
			e.time(*g.Freshness)
		}
		e.w.EndObject()
	}
	if mk := m.Marketplace; mk != nil {
		e.key("marketplace")
		e.w.BeginObject()
		e.key("categories")
		e.strs(mk.Categories)
		e.key("badges")
		e.strs(mk.Badges)
		e.optStr("license", mk.License)
		e.w.EndObject()
	}
	e.w.EndObject()
}

// write writes the content object: each layer present, in the order of
// lean-ctx's PackageContent fields.
func (c *Content) write(e *enc) {
	e.w.BeginObject()
	if k := c.Knowledge; k != nil {
		e.key("knowledge")
		k.write(e)
	}
	if g := c.Graph; g != nil {
		e.key("graph")
		g.write(e)
	}
	if s := c.Session; s != nil {
		e.key("session")
		s.write(e)
	}
	if p := c.Patterns; p != nil {
		e.key("patterns")
		e.w.BeginObject()
		e.key("patterns")
		writePatterns(e, p.Patterns)
		e.key("exported_at")
		e.time(p.ExportedAt)
		e.w.EndObject()
	}
	if g := c.Gotchas; g != nil {
		e.key("gotchas")
		g.write(e)
	}
	if g := c.ContextGraph; g != nil {
		e.key("context_graph")
		g.write(e)
	}
	if a := c.Addon; a != nil {
		e.key("addon")
		e.w.BeginObject()
		e.key("manifest_toml")
		e.str(a.ManifestTOML)
		e.w.EndObject()
	}
	if d := c.Documents; d != nil {
		e.key("documents")
		d.write(e)
	}
	e.w.EndObject()
}

func (k *KnowledgeLayer) write(e *enc) {
	e.w.BeginObject()
	e.key("facts")
	e.w.BeginArray()
	for i := range k.Facts {
		k.Facts[i].write(e)
	}
	e.w.EndArray()
	e.key("patterns")
	writePatterns(e, k.Patterns)
	e.key("insights")
	e.w.BeginArray()
	for _, in := range k.Insights {
		e.w.BeginObject()
		e.key("summary")
		e.str(in.Summary)
		e.key("from_sessions")
		e.strs(in.FromSessions)
		e.key("timestamp")
		e.time(in.Timestamp)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.key("exported_at")
	e.time(k.ExportedAt)
	e.w.EndObject()
}

func (g *GraphLayer) write(e *enc) {
	e.w.BeginObject()
	e.key("nodes")
	e.w.BeginArray()
	for _, n := range g.Nodes {
		e.w.BeginObject()
		e.key("kind")
		e.str(n.Kind)
		e.key("name")
		e.str(n.Name)
		e.key("file_path")
		e.str(n.FilePath)
		e.optU64("line_start", n.LineStart)
		e.optU64("line_end", n.LineEnd)
		e.optStr("metadata", n.Metadata)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.key("edges")
	e.w.BeginArray()
	for _, ed := range g.Edges {
		e.w.BeginObject()
		e.key("source_path")
		e.str(ed.SourcePath)
		e.key("source_name")
		e.str(ed.SourceName)
		e.key("target_path")
		e.str(ed.TargetPath)
		e.key("target_name")
		e.str(ed.TargetName)
		e.key("kind")
		e.str(ed.Kind)
		e.optStr("metadata", ed.Metadata)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.key("exported_at")
	e.time(g.ExportedAt)
	e.w.EndObject()
}

func (s *SessionLayer) write(e *enc) {
	e.w.BeginObject()
	e.key("task_description")
	e.w.OptString(s.TaskDescription)
	e.key("findings")
	e.w.BeginArray()
	for _, f := range s.Findings {
		e.w.BeginObject()
		e.key("summary")
		e.str(f.Summary)
		e.optStr("file", f.File)
		if f.Line != nil {
			e.key("line")
			e.u64(uint64(*f.Line))
		}
		e.w.EndObject()
	}
	e.w.EndArray()
	e.key("decisions")
	e.w.BeginArray()
	for _, d := range s.Decisions {
		e.w.BeginObject()
		e.key("summary")
		e.str(d.Summary)
		e.optStr("rationale", d.Rationale)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.key("next_steps")
	e.strs(s.NextSteps)
	e.key("files_touched")
	e.strs(s.FilesTouched)
	e.key("exported_at")
	e.time(s.ExportedAt)
	e.w.EndObject()
}

func (g *GotchasLayer) write(e *enc) {
	e.w.BeginObject()
	e.key("gotchas")
	e.w.BeginArray()
	for _, x := range g.Gotchas {
		e.w.BeginObject()
		e.key("id")
		e.str(x.ID)
		e.key("category")
		e.str(x.Category)
		e.key("severity")
		e.str(x.Severity)
		e.key("trigger")
		e.str(x.Trigger)
		e.key("resolution")
		e.str(x.Resolution)
		e.key("file_patterns")
		e.strs(x.FilePatterns)
		e.key("confidence")
		e.f32("gotchas.confidence", x.Confidence)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.key("exported_at")
	e.time(g.ExportedAt)
	e.w.EndObject()
}

func (g *ContextGraph) write(e *enc) {
	e.w.BeginObject()
	e.key("format")
	e.str(g.Format)
	e.key("nodes")
	e.w.BeginArray()
	for _, n := range g.Nodes {
		n.write(e)
	}
	e.w.EndArray()
	e.key("edges")
	e.w.BeginArray()
	for _, ed := range g.Edges {
		e.w.BeginObject()
		e.key("from")
		e.str(ed.From)
		e.key("to")
		e.str(ed.To)
		e.key("type")
		e.str(ed.Type)
		e.key("weight")
		e.f64("context_graph.edges.weight", ed.Weight)
		if ed.Coactivations != 0 {
			e.key("coactivations")
			e.u64(uint64(ed.Coactivations))
		}
		e.optStr("metadata", ed.Metadata)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.w.EndObject()
}

func (d *DocumentsContent) write(e *enc) {
	e.w.BeginObject()
	e.key("files")
	e.w.BeginArray()
	for _, f := range d.Files {
		e.w.BeginObject()
		e.key("path")
		e.str(f.Path)
		e.key("sha256")
		e.str(f.SHA256)
		e.key("encoding")
		e.str(f.Encoding)
		e.key("body")
		e.str(f.Body)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.w.EndObject()
}

func (n *ContextNode) write(e *enc) {
	e.w.BeginObject()
	e.key("id")
	e.str(n.ID)
	e.key("type")
	e.str(n.Type)
	e.key("content")
	e.str(n.Content)
	e.key("activation")
	e.f64("context_graph.nodes.activation", n.Activation)
	e.optStr("category", n.Category)
	e.optStr("source", n.Source)
	if n.CreatedAt != nil {
		e.key("created_at")
		e.time(*n.CreatedAt)
	}
	if n.DecayHalfLifeDays != nil {
		e.key("decay_half_life_days")
		e.u64(uint64(*n.DecayHalfLifeDays))
	}
	e.optStr("blob_ref", n.BlobRef)
	e.optStr("file_path", n.FilePath)
	e.optU64("line_start", n.LineStart)
	e.optU64("line_end", n.LineEnd)
	if n.Confidence != nil {
		e.key("confidence")
		e.f32("context_graph.nodes.confidence", *n.Confidence)
	}
	e.optStr("supersedes", n.Supersedes)
	e.w.EndObject()
}

func writePatterns(e *enc, ps []ProjectPattern) {
	e.w.BeginArray()
	for _, p := range ps {
		e.w.BeginObject()
		e.key("pattern_type")
		e.str(p.PatternType)
		e.key("description")
		e.str(p.Description)
		e.key("examples")
		e.strs(p.Examples)
		e.key("source_session")
		e.str(p.SourceSession)
		e.key("created_at")
		e.time(p.CreatedAt)
		e.w.EndObject()
	}
	e.w.EndArray()
}

func orDefault[T ~string](v T, def T) T {
	if v == "" {
		return def
	}
	return v
}

func (f *KnowledgeFact) write(e *enc) {
	e.w.BeginObject()
	e.key("category")
	e.str(f.Category)
	e.key("key")
	e.str(f.Key)
	e.key("value")
	e.str(f.Value)
	e.key("source_session")
	e.str(f.SourceSession)
	e.key("confidence")
	e.f32("knowledge.facts.confidence", f.Confidence)
	e.key("created_at")
	e.time(f.CreatedAt)
	e.key("last_confirmed")
	e.time(f.LastConfirmed)
	e.key("retrieval_count")
	e.u64(uint64(f.RetrievalCount))
	e.key("last_retrieved")
	e.optTime(f.LastRetrieved)
	e.key("valid_from")
	e.optTime(f.ValidFrom)
	e.key("valid_until")
	e.optTime(f.ValidUntil)
	e.key("supersedes")
	e.w.OptString(f.Supersedes)
	e.key("confirmation_count")
	e.u64(uint64(f.ConfirmationCount))
	e.key("feedback_up")
	e.u64(uint64(f.FeedbackUp))
	e.key("feedback_down")
	e.u64(uint64(f.FeedbackDown))
	e.key("last_feedback")
	e.optTime(f.LastFeedback)
	e.key("privacy")
	e.str(string(orDefault(f.Privacy, "project_only")))
	e.key("sensitivity")
	e.str(string(orDefault(f.Sensitivity, "public")))
	e.key("imported_from")
	e.w.OptString(f.ImportedFrom)
	e.key("archetype")
	e.str(string(orDefault(f.Archetype, "fact")))
	e.key("fidelity")
	if fd := f.Fidelity; fd == nil {
		e.w.Null()
	} else {
		e.w.BeginObject()
		e.key("structural")
		e.f64("knowledge.facts.fidelity.structural", fd.Structural)
		e.key("semantic")
		e.f64("knowledge.facts.fidelity.semantic", fd.Semantic)
		e.key("computed_at")
		e.time(fd.ComputedAt)
		e.w.EndObject()
	}
	e.key("revision_count")
	e.u64(uint64(f.RevisionCount))
	e.w.EndObject()
}
