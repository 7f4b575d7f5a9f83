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

// Members: the key k, then the value as the method without "Member"
// writes it.
func (e *enc) strMember(k, s string)                { e.key(k); e.str(s) }
func (e *enc) u64Member(k string, u uint64)         { e.key(k); e.u64(u) }
func (e *enc) strsMember(k string, l []string)      { e.key(k); e.strs(l) }
func (e *enc) timeMember(k string, t time.Time)     { e.key(k); e.time(t) }
func (e *enc) optTimeMember(k string, t *time.Time) { e.key(k); e.optTime(t) }
func (e *enc) f64Member(k, field string, f float64) { e.key(k); e.f64(field, f) }
func (e *enc) f32Member(k, field string, f float32) { e.key(k); e.f32(field, f) }

// optStr writes k and *s when s is not nil (an Option<String> serde skips
// when None); optU64 does the same for an Option of an unsigned integer.
func (e *enc) optStr(k string, s *string) {
	if s != nil {
		e.strMember(k, *s)
	}
}
func (e *enc) optU64(k string, u *uint64) {
	if u != nil {
		e.u64Member(k, *u)
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
	e.u64Member("schema_version", uint64(m.SchemaVersion))
	if m.ConformanceLevel != nil {
		e.u64Member("conformance_level", uint64(*m.ConformanceLevel))
	}
	if k := m.EffectiveKind(); k != KindContext {
		e.strMember("kind", string(k))
	}
	e.strMember("name", m.Name)
	e.strMember("version", m.Version)
	e.strMember("description", m.Description)
	e.w.OptStringMember("author", m.Author)
	e.optStr("scope", m.Scope)
	e.timeMember("created_at", m.CreatedAt)
	e.optTimeMember("updated_at", m.UpdatedAt)
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
		e.strMember("name", d.Name)
		e.strMember("version_req", d.VersionReq)
		e.w.BoolMember("optional", d.Optional)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.strsMember("tags", m.Tags)
	e.optStr("visibility", m.Visibility)
	e.key("integrity")
	e.w.BeginObject()
	e.strMember("sha256", m.Integrity.SHA256)
	e.strMember("content_hash", m.Integrity.ContentHash)
	e.u64Member("byte_size", m.Integrity.ByteSize)
	e.w.EndObject()
	e.key("provenance")
	e.w.BeginObject()
	e.strMember("tool", m.Provenance.Tool)
	e.strMember("tool_version", m.Provenance.ToolVersion)
	e.w.OptStringMember("project_hash", m.Provenance.ProjectHash)
	e.w.OptStringMember("source_session_id", m.Provenance.SourceSessionID)
	e.w.EndObject()
	e.key("compatibility")
	e.w.BeginObject()
	e.w.OptStringMember("min_lean_ctx_version", m.Compatibility.MinLeanCtxVersion)
	e.strsMember("target_languages", m.Compatibility.TargetLanguages)
	e.strsMember("target_frameworks", m.Compatibility.TargetFrameworks)
	e.w.EndObject()
	e.key("stats")
	s := &m.Stats
	e.w.BeginObject()
	e.u64Member("knowledge_facts", uint64(s.KnowledgeFacts))
	e.u64Member("graph_nodes", uint64(s.GraphNodes))
	e.u64Member("graph_edges", uint64(s.GraphEdges))
	e.u64Member("pattern_count", uint64(s.PatternCount))
	e.u64Member("gotcha_count", uint64(s.GotchaCount))
	e.f64Member("compression_ratio", "stats.compression_ratio", s.CompressionRatio)
	e.w.EndObject()
	if sig := m.Signature; sig != nil {
		e.key("signature")
		e.w.BeginObject()
		e.strMember("algorithm", sig.Algorithm)
		e.strMember("public_key", sig.PublicKey)
		e.strMember("value", sig.Value)
		e.w.EndObject()
	}
	if g := m.GraphSummary; g != nil {
		e.key("graph_summary")
		e.w.BeginObject()
		e.u64Member("node_count", uint64(g.NodeCount))
		e.u64Member("edge_count", uint64(g.EdgeCount))
		e.strsMember("node_types", g.NodeTypes)
		if g.ActivationMean != nil {
			e.f64Member("activation_mean", "graph_summary.activation_mean", *g.ActivationMean)
		}
		if g.Freshness != nil {
			e.timeMember("freshness", *g.Freshness)
		}
		e.w.EndObject()
	}
	if mk := m.Marketplace; mk != nil {
		e.key("marketplace")
		e.w.BeginObject()
		e.strsMember("categories", mk.Categories)
		e.strsMember("badges", mk.Badges)
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
		e.timeMember("exported_at", p.ExportedAt)
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
		e.strMember("manifest_toml", a.ManifestTOML)
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
		e.strMember("summary", in.Summary)
		e.strsMember("from_sessions", in.FromSessions)
		e.timeMember("timestamp", in.Timestamp)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.timeMember("exported_at", k.ExportedAt)
	e.w.EndObject()
}

func (g *GraphLayer) write(e *enc) {
	e.w.BeginObject()
	e.key("nodes")
	e.w.BeginArray()
	for _, n := range g.Nodes {
		e.w.BeginObject()
		e.strMember("kind", n.Kind)
		e.strMember("name", n.Name)
		e.strMember("file_path", n.FilePath)
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
		e.strMember("source_path", ed.SourcePath)
		e.strMember("source_name", ed.SourceName)
		e.strMember("target_path", ed.TargetPath)
		e.strMember("target_name", ed.TargetName)
		e.strMember("kind", ed.Kind)
		e.optStr("metadata", ed.Metadata)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.timeMember("exported_at", g.ExportedAt)
	e.w.EndObject()
}

func (s *SessionLayer) write(e *enc) {
	e.w.BeginObject()
	e.w.OptStringMember("task_description", s.TaskDescription)
	e.key("findings")
	e.w.BeginArray()
	for _, f := range s.Findings {
		e.w.BeginObject()
		e.strMember("summary", f.Summary)
		e.optStr("file", f.File)
		if f.Line != nil {
			e.u64Member("line", uint64(*f.Line))
		}
		e.w.EndObject()
	}
	e.w.EndArray()
	e.key("decisions")
	e.w.BeginArray()
	for _, d := range s.Decisions {
		e.w.BeginObject()
		e.strMember("summary", d.Summary)
		e.optStr("rationale", d.Rationale)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.strsMember("next_steps", s.NextSteps)
	e.strsMember("files_touched", s.FilesTouched)
	e.timeMember("exported_at", s.ExportedAt)
	e.w.EndObject()
}

func (g *GotchasLayer) write(e *enc) {
	e.w.BeginObject()
	e.key("gotchas")
	e.w.BeginArray()
	for _, x := range g.Gotchas {
		e.w.BeginObject()
		e.strMember("id", x.ID)
		e.strMember("category", x.Category)
		e.strMember("severity", x.Severity)
		e.strMember("trigger", x.Trigger)
		e.strMember("resolution", x.Resolution)
		e.strsMember("file_patterns", x.FilePatterns)
		e.f32Member("confidence", "gotchas.confidence", x.Confidence)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.timeMember("exported_at", g.ExportedAt)
	e.w.EndObject()
}

func (g *ContextGraph) write(e *enc) {
	e.w.BeginObject()
	e.strMember("format", g.Format)
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
		e.strMember("from", ed.From)
		e.strMember("to", ed.To)
		e.strMember("type", ed.Type)
		e.f64Member("weight", "context_graph.edges.weight", ed.Weight)
		if ed.Coactivations != 0 {
			e.u64Member("coactivations", uint64(ed.Coactivations))
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
		e.strMember("path", f.Path)
		e.strMember("sha256", f.SHA256)
		e.strMember("encoding", f.Encoding)
		e.strMember("body", f.Body)
		e.w.EndObject()
	}
	e.w.EndArray()
	e.w.EndObject()
}

func (n *ContextNode) write(e *enc) {
	e.w.BeginObject()
	e.strMember("id", n.ID)
	e.strMember("type", n.Type)
	e.strMember("content", n.Content)
	e.f64Member("activation", "context_graph.nodes.activation", n.Activation)
	e.optStr("category", n.Category)
	e.optStr("source", n.Source)
	if n.CreatedAt != nil {
		e.timeMember("created_at", *n.CreatedAt)
	}
	if n.DecayHalfLifeDays != nil {
		e.u64Member("decay_half_life_days", uint64(*n.DecayHalfLifeDays))
	}
	e.optStr("blob_ref", n.BlobRef)
	e.optStr("file_path", n.FilePath)
	e.optU64("line_start", n.LineStart)
	e.optU64("line_end", n.LineEnd)
	if n.Confidence != nil {
		e.f32Member("confidence", "context_graph.nodes.confidence", *n.Confidence)
	}
	e.optStr("supersedes", n.Supersedes)
	e.w.EndObject()
}

func writePatterns(e *enc, ps []ProjectPattern) {
	e.w.BeginArray()
	for _, p := range ps {
		e.w.BeginObject()
		e.strMember("pattern_type", p.PatternType)
		e.strMember("description", p.Description)
		e.strsMember("examples", p.Examples)
		e.strMember("source_session", p.SourceSession)
		e.timeMember("created_at", p.CreatedAt)
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
	e.strMember("category", f.Category)
	e.strMember("key", f.Key)
	e.strMember("value", f.Value)
	e.strMember("source_session", f.SourceSession)
	e.f32Member("confidence", "knowledge.facts.confidence", f.Confidence)
	e.timeMember("created_at", f.CreatedAt)
	e.timeMember("last_confirmed", f.LastConfirmed)
	e.u64Member("retrieval_count", uint64(f.RetrievalCount))
	e.optTimeMember("last_retrieved", f.LastRetrieved)
	e.optTimeMember("valid_from", f.ValidFrom)
	e.optTimeMember("valid_until", f.ValidUntil)
	e.w.OptStringMember("supersedes", f.Supersedes)
	e.u64Member("confirmation_count", uint64(f.ConfirmationCount))
	e.u64Member("feedback_up", uint64(f.FeedbackUp))
	e.u64Member("feedback_down", uint64(f.FeedbackDown))
	e.optTimeMember("last_feedback", f.LastFeedback)
	e.strMember("privacy", string(orDefault(f.Privacy, "project_only")))
	e.strMember("sensitivity", string(orDefault(f.Sensitivity, "public")))
	e.w.OptStringMember("imported_from", f.ImportedFrom)
	e.strMember("archetype", string(orDefault(f.Archetype, "fact")))
	e.key("fidelity")
	if fd := f.Fidelity; fd == nil {
		e.w.Null()
	} else {
		e.w.BeginObject()
		e.f64Member("structural", "knowledge.facts.fidelity.structural", fd.Structural)
		e.f64Member("semantic", "knowledge.facts.fidelity.semantic", fd.Semantic)
		e.timeMember("computed_at", fd.ComputedAt)
		e.w.EndObject()
	}
	e.u64Member("revision_count", uint64(f.RevisionCount))
	e.w.EndObject()
}
