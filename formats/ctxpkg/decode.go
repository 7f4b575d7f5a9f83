package ctxpkg

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

// Field decoders shared with other serde formats (formats/serdejson).
var (
	str     = serdejson.StringField
	optStr  = serdejson.OptStringField
	u32     = serdejson.Uint32Field
	optU32  = serdejson.OptUint32Field
	u64     = serdejson.Uint64Field
	optU64  = serdejson.OptUint64Field
	f32     = serdejson.Float32Field
	f64     = serdejson.Float64Field
	boolean = serdejson.BoolField
	strList = serdejson.StringsField
)

// ReadFile reads a .ctxpkg from r, refusing more than MaxFileSize bytes
// before reading the rest, and parses it with ParseFile.
func ReadFile(r io.Reader) (*Package, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w (more than %d bytes, max %d bytes)", ErrTooLarge, MaxFileSize, MaxFileSize)
	}
	return ParseFile(data)
}

// ParseFile parses a whole bundle as lean-ctx's typed parse does (manifest
// and content), refusing input over MaxFileSize ("package file too large
// ({n} bytes, max 10485760 bytes)"). Parse errors wrap ErrParse and read
// "parse package: {reason}". ContentText is set to the compacted text of the
// (first, and by the typed parse only) top-level content member. It checks
// neither validation, integrity nor signature.
func ParseFile(data []byte) (*Package, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w (%d bytes, max %d bytes)", ErrTooLarge, len(data), MaxFileSize)
	}
	v, err := serdejson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParse, err)
	}
	p := new(Package)
	var raw []byte
	err = serdejson.DecodeStruct(v, "ContextPackageBundle", []field{
		req("manifest", p.Manifest.decode),
		req("content", func(v serdejson.Value) error {
			raw = v.Raw()
			return p.Content.decode(v)
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParse, err)
	}
	p.ContentText = Compact(raw)
	return p, nil
}

type field = serdejson.Field

// Field kinds (formats/serdejson): req must be present, def is
// #[serde(default)], opt is an Option<T> (missing or null leaves None).
var (
	req = serdejson.Required
	def = serdejson.Defaulted
	opt = serdejson.Option
)

// nullable is an Option<T> without #[serde(default)]: serde_derive still
// treats a missing key as None, so it reads like opt (it is only written
// differently: null, never omitted).
var nullable = opt

// list decodes a Vec<T>, each element by dec.
func list[T any](dst *[]T, dec func(*T, serdejson.Value) error) func(serdejson.Value) error {
	return serdejson.ListField(dst, dec)
}

// ParseTime parses a chrono DateTime<Utc> the way its serde form is read:
// RFC 3339 (YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM), 'T' and 'Z' in either
// case, fraction digits beyond nanoseconds truncated) with any offset,
// converted to UTC. Leap seconds (":60"), which chrono accepts, are refused.
func ParseTime(s string) (time.Time, error) {
	norm, ok := rfc3339Shape(s)
	if !ok {
		return time.Time{}, fmt.Errorf("invalid RFC 3339 timestamp %q", s)
	}
	t, err := time.Parse(time.RFC3339Nano, norm)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid RFC 3339 timestamp %q", s)
	}
	return t.UTC(), nil
}

// rfc3339Shape checks the exact digit layout (time.Parse accepts one-digit
// hours) and returns s with 't'/'z' upper-cased.
func rfc3339Shape(s string) (string, bool) {
	const layout = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(layout)+1 {
		return "", false
	}
	b := []byte(s)
	if !dateTimeShape(b, layout) {
		return "", false
	}
	i, ok := skipFraction(b, len(layout))
	if !ok || !offsetShape(b[i:]) {
		return "", false
	}
	return string(b), true
}

// dateTimeShape checks b's first len(layout) bytes against layout ('d' a
// digit, 'T' a 'T' or 't', anything else itself) and upper-cases the 'T'.
func dateTimeShape(b []byte, layout string) bool {
	for i := 0; i < len(layout); i++ {
		c := b[i]
		switch layout[i] {
		case 'd':
			if c < '0' || c > '9' {
				return false
			}
		case 'T':
			if c != 'T' && c != 't' {
				return false
			}
			b[i] = 'T'
		default:
			if c != layout[i] {
				return false
			}
		}
	}
	return true
}

// skipFraction returns the index past an optional ".digits" at b[i]; a dot
// without digits is refused.
func skipFraction(b []byte, i int) (int, bool) {
	if b[i] != '.' {
		return i, true
	}
	j := i + 1
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return j, j != i+1
}

// offsetShape checks that rest is exactly "Z" (either case, upper-cased in
// place) or "±HH:MM".
func offsetShape(rest []byte) bool {
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
		rest[0] = 'Z'
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && isDigit(rest[1]) && isDigit(rest[2]) &&
		rest[3] == ':' && isDigit(rest[4]) && isDigit(rest[5]):
	default:
		return false
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func tm(dst *time.Time) func(serdejson.Value) error {
	return func(v serdejson.Value) error {
		s, err := v.Text()
		if err != nil {
			return err
		}
		*dst, err = ParseTime(s)
		return err
	}
}

func optTm(dst **time.Time) func(serdejson.Value) error {
	return func(v serdejson.Value) error {
		var t time.Time
		if err := tm(&t)(v); err != nil {
			return err
		}
		*dst = &t
		return nil
	}
}

func unknownVariant(s string, variants []string) error {
	return fmt.Errorf("unknown variant `%s`, expected one of `%s`", s, strings.Join(variants, "`, `"))
}

func variant[T ~string](dst *T, variants []string) func(serdejson.Value) error {
	return func(v serdejson.Value) error {
		s, err := v.Text()
		if err != nil {
			return err
		}
		for _, x := range variants {
			if s == x {
				*dst = T(s)
				return nil
			}
		}
		return unknownVariant(s, variants)
	}
}

func (m *Manifest) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "PackageManifest", []field{
		req("schema_version", u32(&m.SchemaVersion)),
		opt("conformance_level", optU32(&m.ConformanceLevel)),
		def("kind", variant(&m.Kind, kindVariants)),
		req("name", str(&m.Name)),
		req("version", str(&m.Version)),
		req("description", str(&m.Description)),
		opt("author", optStr(&m.Author)),
		opt("scope", optStr(&m.Scope)),
		req("created_at", tm(&m.CreatedAt)),
		opt("updated_at", optTm(&m.UpdatedAt)),
		req("layers", list(&m.Layers, func(l *Layer, v serdejson.Value) error {
			return variant(l, layerVariants)(v)
		})),
		def("dependencies", list(&m.Dependencies, func(d *Dependency, v serdejson.Value) error {
			return serdejson.DecodeStruct(v, "PackageDependency", []field{
				req("name", str(&d.Name)),
				req("version_req", str(&d.VersionReq)),
				def("optional", boolean(&d.Optional)),
			})
		})),
		def("tags", strList(&m.Tags)),
		opt("visibility", optStr(&m.Visibility)),
		req("integrity", func(v serdejson.Value) error {
			i := &m.Integrity
			return serdejson.DecodeStruct(v, "PackageIntegrity", []field{
				req("sha256", str(&i.SHA256)),
				req("content_hash", str(&i.ContentHash)),
				req("byte_size", u64(&i.ByteSize)),
			})
		}),
		req("provenance", func(v serdejson.Value) error {
			p := &m.Provenance
			return serdejson.DecodeStruct(v, "PackageProvenance", []field{
				req("tool", str(&p.Tool)),
				req("tool_version", str(&p.ToolVersion)),
				nullable("project_hash", optStr(&p.ProjectHash)),
				opt("source_session_id", optStr(&p.SourceSessionID)),
			})
		}),
		def("compatibility", func(v serdejson.Value) error {
			c := &m.Compatibility
			return serdejson.DecodeStruct(v, "CompatibilitySpec", []field{
				opt("min_lean_ctx_version", optStr(&c.MinLeanCtxVersion)),
				def("target_languages", strList(&c.TargetLanguages)),
				def("target_frameworks", strList(&c.TargetFrameworks)),
			})
		}),
		def("stats", func(v serdejson.Value) error {
			s := &m.Stats
			return serdejson.DecodeStruct(v, "PackageStats", []field{
				req("knowledge_facts", u32(&s.KnowledgeFacts)),
				req("graph_nodes", u32(&s.GraphNodes)),
				req("graph_edges", u32(&s.GraphEdges)),
				req("pattern_count", u32(&s.PatternCount)),
				req("gotcha_count", u32(&s.GotchaCount)),
				req("compression_ratio", f64(&s.CompressionRatio)),
			})
		}),
		opt("signature", func(v serdejson.Value) error {
			s := new(Signature)
			m.Signature = s
			return serdejson.DecodeStruct(v, "PackageSignature", []field{
				req("algorithm", str(&s.Algorithm)),
				req("public_key", str(&s.PublicKey)),
				req("value", str(&s.Value)),
			})
		}),
		opt("graph_summary", func(v serdejson.Value) error {
			g := new(GraphSummary)
			m.GraphSummary = g
			return serdejson.DecodeStruct(v, "GraphSummary", []field{
				req("node_count", u32(&g.NodeCount)),
				req("edge_count", u32(&g.EdgeCount)),
				def("node_types", strList(&g.NodeTypes)),
				opt("activation_mean", serdejson.OptFloat64Field(&g.ActivationMean)),
				opt("freshness", optTm(&g.Freshness)),
			})
		}),
		opt("marketplace", func(v serdejson.Value) error {
			mk := new(Marketplace)
			m.Marketplace = mk
			return serdejson.DecodeStruct(v, "MarketplaceMeta", []field{
				def("categories", strList(&mk.Categories)),
				def("badges", strList(&mk.Badges)),
				opt("license", optStr(&mk.License)),
			})
		}),
	})
}

func decodePattern(p *ProjectPattern, v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "ProjectPattern", []field{
		req("pattern_type", str(&p.PatternType)),
		req("description", str(&p.Description)),
		req("examples", strList(&p.Examples)),
		req("source_session", str(&p.SourceSession)),
		req("created_at", tm(&p.CreatedAt)),
	})
}

func (c *Content) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "PackageContent", []field{
		opt("knowledge", func(v serdejson.Value) error {
			k := new(KnowledgeLayer)
			c.Knowledge = k
			return serdejson.DecodeStruct(v, "KnowledgeLayer", []field{
				req("facts", list(&k.Facts, (*KnowledgeFact).decode)),
				req("patterns", list(&k.Patterns, decodePattern)),
				req("insights", list(&k.Insights, func(in *ConsolidatedInsight, v serdejson.Value) error {
					return serdejson.DecodeStruct(v, "ConsolidatedInsight", []field{
						req("summary", str(&in.Summary)),
						req("from_sessions", strList(&in.FromSessions)),
						req("timestamp", tm(&in.Timestamp)),
					})
				})),
				req("exported_at", tm(&k.ExportedAt)),
			})
		}),
		opt("graph", func(v serdejson.Value) error {
			g := new(GraphLayer)
			c.Graph = g
			return serdejson.DecodeStruct(v, "GraphLayer", []field{
				req("nodes", list(&g.Nodes, func(n *GraphNode, v serdejson.Value) error {
					return serdejson.DecodeStruct(v, "GraphNodeExport", []field{
						req("kind", str(&n.Kind)),
						req("name", str(&n.Name)),
						req("file_path", str(&n.FilePath)),
						opt("line_start", optU64(&n.LineStart)),
						opt("line_end", optU64(&n.LineEnd)),
						opt("metadata", optStr(&n.Metadata)),
					})
				})),
				req("edges", list(&g.Edges, func(e *GraphEdge, v serdejson.Value) error {
					return serdejson.DecodeStruct(v, "GraphEdgeExport", []field{
						req("source_path", str(&e.SourcePath)),
						req("source_name", str(&e.SourceName)),
						req("target_path", str(&e.TargetPath)),
						req("target_name", str(&e.TargetName)),
						req("kind", str(&e.Kind)),
						opt("metadata", optStr(&e.Metadata)),
					})
				})),
				req("exported_at", tm(&g.ExportedAt)),
			})
		}),
		opt("session", func(v serdejson.Value) error {
			s := new(SessionLayer)
			c.Session = s
			return serdejson.DecodeStruct(v, "SessionLayer", []field{
				nullable("task_description", optStr(&s.TaskDescription)),
				req("findings", list(&s.Findings, func(f *SessionFinding, v serdejson.Value) error {
					return serdejson.DecodeStruct(v, "SessionFinding", []field{
						req("summary", str(&f.Summary)),
						opt("file", optStr(&f.File)),
						opt("line", optU32(&f.Line)),
					})
				})),
				req("decisions", list(&s.Decisions, func(d *SessionDecision, v serdejson.Value) error {
					return serdejson.DecodeStruct(v, "SessionDecision", []field{
						req("summary", str(&d.Summary)),
						opt("rationale", optStr(&d.Rationale)),
					})
				})),
				req("next_steps", strList(&s.NextSteps)),
				req("files_touched", strList(&s.FilesTouched)),
				req("exported_at", tm(&s.ExportedAt)),
			})
		}),
		opt("patterns", func(v serdejson.Value) error {
			p := new(PatternsLayer)
			c.Patterns = p
			return serdejson.DecodeStruct(v, "PatternsLayer", []field{
				req("patterns", list(&p.Patterns, decodePattern)),
				req("exported_at", tm(&p.ExportedAt)),
			})
		}),
		opt("gotchas", func(v serdejson.Value) error {
			g := new(GotchasLayer)
			c.Gotchas = g
			return serdejson.DecodeStruct(v, "GotchasLayer", []field{
				req("gotchas", list(&g.Gotchas, func(x *Gotcha, v serdejson.Value) error {
					return serdejson.DecodeStruct(v, "GotchaExport", []field{
						req("id", str(&x.ID)),
						req("category", str(&x.Category)),
						req("severity", str(&x.Severity)),
						req("trigger", str(&x.Trigger)),
						req("resolution", str(&x.Resolution)),
						def("file_patterns", strList(&x.FilePatterns)),
						req("confidence", f32(&x.Confidence)),
					})
				})),
				req("exported_at", tm(&g.ExportedAt)),
			})
		}),
		opt("context_graph", func(v serdejson.Value) error {
			g := new(ContextGraph)
			c.ContextGraph = g
			return serdejson.DecodeStruct(v, "ContextGraph", []field{
				req("format", str(&g.Format)),
				req("nodes", list(&g.Nodes, (*ContextNode).decode)),
				req("edges", list(&g.Edges, func(e *ContextEdge, v serdejson.Value) error {
					e.Weight = 1.0
					return serdejson.DecodeStruct(v, "ContextEdge", []field{
						req("from", str(&e.From)),
						req("to", str(&e.To)),
						req("type", str(&e.Type)),
						def("weight", f64(&e.Weight)),
						def("coactivations", u32(&e.Coactivations)),
						opt("metadata", optStr(&e.Metadata)),
					})
				})),
			})
		}),
		opt("addon", func(v serdejson.Value) error {
			a := new(AddonContent)
			c.Addon = a
			return serdejson.DecodeStruct(v, "AddonContent", []field{
				req("manifest_toml", str(&a.ManifestTOML)),
			})
		}),
		opt("documents", func(v serdejson.Value) error {
			d := new(DocumentsContent)
			c.Documents = d
			return serdejson.DecodeStruct(v, "DocumentsContent", []field{
				req("files", list(&d.Files, func(b *DocumentBlob, v serdejson.Value) error {
					return serdejson.DecodeStruct(v, "DocumentBlob", []field{
						req("path", str(&b.Path)),
						req("sha256", str(&b.SHA256)),
						req("encoding", str(&b.Encoding)),
						req("body", str(&b.Body)),
					})
				})),
			})
		}),
	})
}

func (n *ContextNode) decode(v serdejson.Value) error {
	n.Activation = 1.0
	return serdejson.DecodeStruct(v, "ContextNode", []field{
		req("id", str(&n.ID)),
		req("type", str(&n.Type)),
		req("content", str(&n.Content)),
		def("activation", f64(&n.Activation)),
		opt("category", optStr(&n.Category)),
		opt("source", optStr(&n.Source)),
		opt("created_at", optTm(&n.CreatedAt)),
		opt("decay_half_life_days", optU32(&n.DecayHalfLifeDays)),
		opt("blob_ref", optStr(&n.BlobRef)),
		opt("file_path", optStr(&n.FilePath)),
		opt("line_start", optU64(&n.LineStart)),
		opt("line_end", optU64(&n.LineEnd)),
		opt("confidence", serdejson.OptFloat32Field(&n.Confidence)),
		opt("supersedes", optStr(&n.Supersedes)),
	})
}

func (f *KnowledgeFact) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "KnowledgeFact", []field{
		req("category", str(&f.Category)),
		req("key", str(&f.Key)),
		req("value", str(&f.Value)),
		req("source_session", str(&f.SourceSession)),
		req("confidence", f32(&f.Confidence)),
		req("created_at", tm(&f.CreatedAt)),
		req("last_confirmed", tm(&f.LastConfirmed)),
		def("retrieval_count", u32(&f.RetrievalCount)),
		opt("last_retrieved", optTm(&f.LastRetrieved)),
		opt("valid_from", optTm(&f.ValidFrom)),
		opt("valid_until", optTm(&f.ValidUntil)),
		opt("supersedes", optStr(&f.Supersedes)),
		def("confirmation_count", u32(&f.ConfirmationCount)),
		def("feedback_up", u32(&f.FeedbackUp)),
		def("feedback_down", u32(&f.FeedbackDown)),
		opt("last_feedback", optTm(&f.LastFeedback)),
		def("privacy", variant(&f.Privacy, privacyVariants)),
		def("sensitivity", variant(&f.Sensitivity, sensitivityVariants)),
		opt("imported_from", optStr(&f.ImportedFrom)),
		def("archetype", variant(&f.Archetype, archetypeVariants)),
		opt("fidelity", func(v serdejson.Value) error {
			fd := new(FidelityScore)
			f.Fidelity = fd
			return serdejson.DecodeStruct(v, "FidelityScore", []field{
				req("structural", f64(&fd.Structural)),
				req("semantic", f64(&fd.Semantic)),
				req("computed_at", tm(&fd.ComputedAt)),
			})
		}),
		def("revision_count", u32(&f.RevisionCount)),
	})
}
