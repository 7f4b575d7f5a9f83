package ctxpkg

import (
	"fmt"
	"math"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

// enc is a serdejson.Writer that also records the first unencodable float.
type enc struct {
	serdejson.Writer
	err error
}

func (e *enc) f64check(field string, f float64) {
	if (math.IsNaN(f) || math.IsInf(f, 0)) && e.err == nil {
		e.err = fmt.Errorf("%w: %s is %v (serde_json would write null)", ErrUnencodable, field, f)
	}
}

// f64Member and f32Member write the key k and the float, recording field
// when it is NaN or ±Inf.
func (e *enc) f64Member(k, field string, f float64) {
	e.f64check(field, f)
	e.Float64Member(k, f)
}
func (e *enc) f32Member(k, field string, f float32) {
	e.f64check(field, float64(f))
	e.Key(k)
	e.Float32(f)
}

// optStr writes k and *s when s is not nil (an Option<String> serde skips
// when None); optU64 does the same for an Option of an unsigned integer.
func (e *enc) optStr(k string, s *string) {
	if s != nil {
		e.StringMember(k, *s)
	}
}
func (e *enc) optU64(k string, u *uint64) {
	if u != nil {
		e.Uint64Member(k, *u)
	}
}

// objects writes the key k and a Vec of structs (serdejson.ObjectsMember).
func objects[T any](e *enc, k string, list []T, body func(*T)) {
	serdejson.ObjectsMember(&e.Writer, k, list, body)
}

// AppendJSON appends the compact serde_json text of the content.
func (c *Content) AppendJSON(dst []byte) ([]byte, error) {
	e := &enc{Writer: *serdejson.NewWriter(dst)}
	c.write(e)
	return e.Bytes(), e.err
}

// AppendJSON appends the compact serde_json text of the manifest.
func (m *Manifest) AppendJSON(dst []byte) ([]byte, error) {
	e := &enc{Writer: *serdejson.NewWriter(dst)}
	m.write(e)
	return e.Bytes(), e.err
}

// MarshalCompact returns the compact serde_json text of the whole bundle,
// with the content re-serialised from Content (as lean-ctx's install does).
func (p *Package) MarshalCompact() ([]byte, error) {
	e := &enc{}
	e.BeginObject()
	e.Key("manifest")
	p.Manifest.write(e)
	e.Key("content")
	p.Content.write(e)
	e.EndObject()
	return e.Bytes(), e.err
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
	e.BeginObject()
	e.Uint64Member("schema_version", uint64(m.SchemaVersion))
	if m.ConformanceLevel != nil {
		e.Uint64Member("conformance_level", uint64(*m.ConformanceLevel))
	}
	if k := m.EffectiveKind(); k != KindContext {
		e.StringMember("kind", string(k))
	}
	e.StringMember("name", m.Name)
	e.StringMember("version", m.Version)
	e.StringMember("description", m.Description)
	e.OptStringMember("author", m.Author)
	e.optStr("scope", m.Scope)
	e.TimeMember("created_at", m.CreatedAt)
	e.OptTimeMember("updated_at", m.UpdatedAt)
	e.Key("layers")
	e.BeginArray()
	for _, l := range m.Layers {
		e.String(string(l))
	}
	e.EndArray()
	objects(e, "dependencies", m.Dependencies, func(d *Dependency) {
		e.StringMember("name", d.Name)
		e.StringMember("version_req", d.VersionReq)
		e.BoolMember("optional", d.Optional)
	})
	e.StringsMember("tags", m.Tags)
	e.optStr("visibility", m.Visibility)
	e.ObjectMember("integrity", func() {
		e.StringMember("sha256", m.Integrity.SHA256)
		e.StringMember("content_hash", m.Integrity.ContentHash)
		e.Uint64Member("byte_size", m.Integrity.ByteSize)
	})
	e.ObjectMember("provenance", func() {
		e.StringMember("tool", m.Provenance.Tool)
		e.StringMember("tool_version", m.Provenance.ToolVersion)
		e.OptStringMember("project_hash", m.Provenance.ProjectHash)
		e.OptStringMember("source_session_id", m.Provenance.SourceSessionID)
	})
	e.ObjectMember("compatibility", func() {
		e.OptStringMember("min_lean_ctx_version", m.Compatibility.MinLeanCtxVersion)
		e.StringsMember("target_languages", m.Compatibility.TargetLanguages)
		e.StringsMember("target_frameworks", m.Compatibility.TargetFrameworks)
	})
	s := &m.Stats
	e.ObjectMember("stats", func() {
		e.Uint64Member("knowledge_facts", uint64(s.KnowledgeFacts))
		e.Uint64Member("graph_nodes", uint64(s.GraphNodes))
		e.Uint64Member("graph_edges", uint64(s.GraphEdges))
		e.Uint64Member("pattern_count", uint64(s.PatternCount))
		e.Uint64Member("gotcha_count", uint64(s.GotchaCount))
		e.f64Member("compression_ratio", "stats.compression_ratio", s.CompressionRatio)
	})
	if sig := m.Signature; sig != nil {
		e.ObjectMember("signature", func() {
			e.StringMember("algorithm", sig.Algorithm)
			e.StringMember("public_key", sig.PublicKey)
			e.StringMember("value", sig.Value)
		})
	}
	if g := m.GraphSummary; g != nil {
		e.ObjectMember("graph_summary", func() {
			e.Uint64Member("node_count", uint64(g.NodeCount))
			e.Uint64Member("edge_count", uint64(g.EdgeCount))
			e.StringsMember("node_types", g.NodeTypes)
			if g.ActivationMean != nil {
				e.f64Member("activation_mean", "graph_summary.activation_mean", *g.ActivationMean)
			}
			if g.Freshness != nil {
				e.TimeMember("freshness", *g.Freshness)
			}
		})
	}
	if mk := m.Marketplace; mk != nil {
		e.ObjectMember("marketplace", func() {
			e.StringsMember("categories", mk.Categories)
			e.StringsMember("badges", mk.Badges)
			e.optStr("license", mk.License)
		})
	}
	e.EndObject()
}

// write writes the content object: each layer present, in the order of
// lean-ctx's PackageContent fields.
func (c *Content) write(e *enc) {
	e.BeginObject()
	if k := c.Knowledge; k != nil {
		e.ObjectMember("knowledge", func() { k.write(e) })
	}
	if g := c.Graph; g != nil {
		e.ObjectMember("graph", func() { g.write(e) })
	}
	if s := c.Session; s != nil {
		e.ObjectMember("session", func() { s.write(e) })
	}
	if p := c.Patterns; p != nil {
		e.ObjectMember("patterns", func() {
			writePatterns(e, p.Patterns)
			e.TimeMember("exported_at", p.ExportedAt)
		})
	}
	if g := c.Gotchas; g != nil {
		e.ObjectMember("gotchas", func() { g.write(e) })
	}
	if g := c.ContextGraph; g != nil {
		e.ObjectMember("context_graph", func() { g.write(e) })
	}
	if a := c.Addon; a != nil {
		e.ObjectMember("addon", func() { e.StringMember("manifest_toml", a.ManifestTOML) })
	}
	if d := c.Documents; d != nil {
		e.ObjectMember("documents", func() { d.write(e) })
	}
	e.EndObject()
}

// The layers' write methods write their members (the caller writes the
// braces).

func (k *KnowledgeLayer) write(e *enc) {
	objects(e, "facts", k.Facts, func(f *KnowledgeFact) { f.write(e) })
	writePatterns(e, k.Patterns)
	objects(e, "insights", k.Insights, func(in *ConsolidatedInsight) {
		e.StringMember("summary", in.Summary)
		e.StringsMember("from_sessions", in.FromSessions)
		e.TimeMember("timestamp", in.Timestamp)
	})
	e.TimeMember("exported_at", k.ExportedAt)
}

func (g *GraphLayer) write(e *enc) {
	objects(e, "nodes", g.Nodes, func(n *GraphNode) {
		e.StringMember("kind", n.Kind)
		e.StringMember("name", n.Name)
		e.StringMember("file_path", n.FilePath)
		e.optU64("line_start", n.LineStart)
		e.optU64("line_end", n.LineEnd)
		e.optStr("metadata", n.Metadata)
	})
	objects(e, "edges", g.Edges, func(ed *GraphEdge) {
		e.StringMember("source_path", ed.SourcePath)
		e.StringMember("source_name", ed.SourceName)
		e.StringMember("target_path", ed.TargetPath)
		e.StringMember("target_name", ed.TargetName)
		e.StringMember("kind", ed.Kind)
		e.optStr("metadata", ed.Metadata)
	})
	e.TimeMember("exported_at", g.ExportedAt)
}

func (s *SessionLayer) write(e *enc) {
	e.OptStringMember("task_description", s.TaskDescription)
	objects(e, "findings", s.Findings, func(f *SessionFinding) {
		e.StringMember("summary", f.Summary)
		e.optStr("file", f.File)
		if f.Line != nil {
			e.Uint64Member("line", uint64(*f.Line))
		}
	})
	objects(e, "decisions", s.Decisions, func(d *SessionDecision) {
		e.StringMember("summary", d.Summary)
		e.optStr("rationale", d.Rationale)
	})
	e.StringsMember("next_steps", s.NextSteps)
	e.StringsMember("files_touched", s.FilesTouched)
	e.TimeMember("exported_at", s.ExportedAt)
}

func (g *GotchasLayer) write(e *enc) {
	objects(e, "gotchas", g.Gotchas, func(x *Gotcha) {
		e.StringMember("id", x.ID)
		e.StringMember("category", x.Category)
		e.StringMember("severity", x.Severity)
		e.StringMember("trigger", x.Trigger)
		e.StringMember("resolution", x.Resolution)
		e.StringsMember("file_patterns", x.FilePatterns)
		e.f32Member("confidence", "gotchas.confidence", x.Confidence)
	})
	e.TimeMember("exported_at", g.ExportedAt)
}

func (g *ContextGraph) write(e *enc) {
	e.StringMember("format", g.Format)
	objects(e, "nodes", g.Nodes, func(n *ContextNode) { n.write(e) })
	objects(e, "edges", g.Edges, func(ed *ContextEdge) {
		e.StringMember("from", ed.From)
		e.StringMember("to", ed.To)
		e.StringMember("type", ed.Type)
		e.f64Member("weight", "context_graph.edges.weight", ed.Weight)
		if ed.Coactivations != 0 {
			e.Uint64Member("coactivations", uint64(ed.Coactivations))
		}
		e.optStr("metadata", ed.Metadata)
	})
}

func (d *DocumentsContent) write(e *enc) {
	objects(e, "files", d.Files, func(f *DocumentBlob) {
		e.StringMember("path", f.Path)
		e.StringMember("sha256", f.SHA256)
		e.StringMember("encoding", f.Encoding)
		e.StringMember("body", f.Body)
	})
}

func (n *ContextNode) write(e *enc) {
	e.StringMember("id", n.ID)
	e.StringMember("type", n.Type)
	e.StringMember("content", n.Content)
	e.f64Member("activation", "context_graph.nodes.activation", n.Activation)
	e.optStr("category", n.Category)
	e.optStr("source", n.Source)
	if n.CreatedAt != nil {
		e.TimeMember("created_at", *n.CreatedAt)
	}
	if n.DecayHalfLifeDays != nil {
		e.Uint64Member("decay_half_life_days", uint64(*n.DecayHalfLifeDays))
	}
	e.optStr("blob_ref", n.BlobRef)
	e.optStr("file_path", n.FilePath)
	e.optU64("line_start", n.LineStart)
	e.optU64("line_end", n.LineEnd)
	if n.Confidence != nil {
		e.f32Member("confidence", "context_graph.nodes.confidence", *n.Confidence)
	}
	e.optStr("supersedes", n.Supersedes)
}

// writePatterns writes the key "patterns" and a Vec<ProjectPattern>.
func writePatterns(e *enc, ps []ProjectPattern) {
	objects(e, "patterns", ps, func(p *ProjectPattern) {
		e.StringMember("pattern_type", p.PatternType)
		e.StringMember("description", p.Description)
		e.StringsMember("examples", p.Examples)
		e.StringMember("source_session", p.SourceSession)
		e.TimeMember("created_at", p.CreatedAt)
	})
}

func orDefault[T ~string](v T, def T) T {
	if v == "" {
		return def
	}
	return v
}

// write writes a KnowledgeFact's members.
func (f *KnowledgeFact) write(e *enc) {
	e.StringMember("category", f.Category)
	e.StringMember("key", f.Key)
	e.StringMember("value", f.Value)
	e.StringMember("source_session", f.SourceSession)
	e.f32Member("confidence", "knowledge.facts.confidence", f.Confidence)
	e.TimeMember("created_at", f.CreatedAt)
	e.TimeMember("last_confirmed", f.LastConfirmed)
	e.Uint64Member("retrieval_count", uint64(f.RetrievalCount))
	e.OptTimeMember("last_retrieved", f.LastRetrieved)
	e.OptTimeMember("valid_from", f.ValidFrom)
	e.OptTimeMember("valid_until", f.ValidUntil)
	e.OptStringMember("supersedes", f.Supersedes)
	e.Uint64Member("confirmation_count", uint64(f.ConfirmationCount))
	e.Uint64Member("feedback_up", uint64(f.FeedbackUp))
	e.Uint64Member("feedback_down", uint64(f.FeedbackDown))
	e.OptTimeMember("last_feedback", f.LastFeedback)
	e.StringMember("privacy", string(orDefault(f.Privacy, "project_only")))
	e.StringMember("sensitivity", string(orDefault(f.Sensitivity, "public")))
	e.OptStringMember("imported_from", f.ImportedFrom)
	e.StringMember("archetype", string(orDefault(f.Archetype, "fact")))
	if fd := f.Fidelity; fd == nil {
		e.Key("fidelity")
		e.Null()
	} else {
		e.ObjectMember("fidelity", func() {
			e.f64Member("structural", "knowledge.facts.fidelity.structural", fd.Structural)
			e.f64Member("semantic", "knowledge.facts.fidelity.semantic", fd.Semantic)
			e.TimeMember("computed_at", fd.ComputedAt)
		})
	}
	e.Uint64Member("revision_count", uint64(f.RevisionCount))
}
