// Package ctxpkg reads, writes, verifies and signs lean-ctx Context Packages
// (.ctxpkg v1, schema_version 1 and the v2 fields lean-ctx also accepts) and
// their agent-to-agent transport envelope (TransportEnvelopeV1), byte for
// byte as lean-ctx 3.9.18 does (see reference/context-package.md).
//
// Writing goes through formats/serdejson: keys in Rust declaration order,
// serde's null-versus-omit rules per field, serde float (f32 and f64) and
// chrono AutoSi timestamp formats, serde string escaping. Integrity is
// computed over the writer's own content text with whitespace outside
// strings removed, never over a canonical re-serialisation.
//
// Reading follows serde_derive: unknown fields ignored (and therefore
// dropped on re-serialisation), duplicate known fields, missing required
// fields, wrong types and unknown enum variants refused.
package ctxpkg

import (
	"errors"
	"strings"
	"time"
)

// Size limits.
const (
	// MaxFileSize is the largest accepted .ctxpkg file (10 MiB, inclusive).
	MaxFileSize = 10_485_760
	// MaxEnvelopeSize is the largest accepted transport envelope (decimal).
	MaxEnvelopeSize = 2_000_000
)

// Extensions accepted by IsPackageName; Extension is the one a writer uses.
const (
	Extension       = ".ctxpkg"
	LegacyExtension = ".lctxpkg"
)

// IsPackageName reports whether a file name has the .ctxpkg or legacy
// .lctxpkg extension (case-sensitive, as lean-ctx checks it).
func IsPackageName(name string) bool {
	ext, ok := extension(name)
	return ok && (ext == "ctxpkg" || ext == "lctxpkg")
}

// extension is Rust's Path::extension: the text after the last '.' of the
// final component, none for names without a dot or starting with their only
// dot (".ctxpkg").
func extension(name string) (string, bool) {
	name = strings.TrimRight(name, "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if name == ".." {
		return "", false
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return "", false
	}
	return name[i+1:], true
}

// Kind is the manifest's package kind; the empty Kind means KindContext.
type Kind string

// Package kinds.
const (
	KindContext Kind = "context"
	KindSkills  Kind = "skills"
	KindAddon   Kind = "addon"
	KindGrammar Kind = "grammar"
)

// Layer is a PackageLayer value.
type Layer string

// Layers.
const (
	LayerKnowledge Layer = "knowledge"
	LayerGraph     Layer = "graph"
	LayerSession   Layer = "session"
	LayerPatterns  Layer = "patterns"
	LayerGotchas   Layer = "gotchas"
)

// Package is a whole .ctxpkg bundle.
type Package struct {
	Manifest Manifest
	Content  Content
	// ContentText is the compacted text of the content member the integrity
	// is checked against: for a parsed file the file's own content text with
	// whitespace outside strings removed; for a sealed package the compact
	// serialisation of Content. Nil when neither applies.
	ContentText []byte
}

// Manifest is PackageManifest, fields in declaration order.
type Manifest struct {
	SchemaVersion    uint32
	ConformanceLevel *uint32 // skipped when nil
	Kind             Kind    // skipped when context (or empty)
	Name             string
	Version          string
	Description      string
	Author           *string // null when nil
	Scope            *string // skipped when nil
	CreatedAt        time.Time
	UpdatedAt        *time.Time // null when nil
	Layers           []Layer
	Dependencies     []Dependency
	Tags             []string
	Visibility       *string // skipped when nil
	Integrity        Integrity
	Provenance       Provenance
	Compatibility    Compatibility
	Stats            Stats
	Signature        *Signature    // skipped when nil
	GraphSummary     *GraphSummary // skipped when nil
	Marketplace      *Marketplace  // skipped when nil
}

// EffectiveKind returns Kind, with the empty Kind meaning KindContext.
func (m *Manifest) EffectiveKind() Kind {
	if m.Kind == "" {
		return KindContext
	}
	return m.Kind
}

// Dependency is PackageDependency.
type Dependency struct {
	Name       string
	VersionReq string
	Optional   bool
}

// Integrity is PackageIntegrity.
type Integrity struct {
	SHA256      string
	ContentHash string
	ByteSize    uint64
}

// Provenance is PackageProvenance.
type Provenance struct {
	Tool            string
	ToolVersion     string
	ProjectHash     *string // null when nil
	SourceSessionID *string // null when nil
}

// Compatibility is CompatibilitySpec.
type Compatibility struct {
	MinLeanCtxVersion *string // null when nil
	TargetLanguages   []string
	TargetFrameworks  []string
}

// Stats is PackageStats (informational; covered by no hash).
type Stats struct {
	KnowledgeFacts   uint32
	GraphNodes       uint32
	GraphEdges       uint32
	PatternCount     uint32
	GotchaCount      uint32
	CompressionRatio float64
}

// Signature is PackageSignature.
type Signature struct {
	Algorithm string
	PublicKey string
	Value     string
}

// GraphSummary is the v2 GraphSummary.
type GraphSummary struct {
	NodeCount      uint32
	EdgeCount      uint32
	NodeTypes      []string
	ActivationMean *float64   // skipped when nil
	Freshness      *time.Time // skipped when nil
}

// Marketplace is MarketplaceMeta.
type Marketplace struct {
	Categories []string
	Badges     []string
	License    *string // skipped when nil
}

// Content is PackageContent: every member is skipped when nil.
type Content struct {
	Knowledge    *KnowledgeLayer
	Graph        *GraphLayer
	Session      *SessionLayer
	Patterns     *PatternsLayer
	Gotchas      *GotchasLayer
	ContextGraph *ContextGraph
	Addon        *AddonContent
	Documents    *DocumentsContent
}

// KnowledgeLayer is the knowledge layer.
type KnowledgeLayer struct {
	Facts      []KnowledgeFact
	Patterns   []ProjectPattern
	Insights   []ConsolidatedInsight
	ExportedAt time.Time
}

// Privacy, Sensitivity and Archetype are KnowledgeFact enums (snake_case).
type (
	Privacy     string
	Sensitivity string
	Archetype   string
)

var (
	privacyVariants     = []string{"project_only", "linked_projects", "team"}
	sensitivityVariants = []string{"public", "internal", "confidential", "secret"}
	archetypeVariants   = []string{"pattern", "preference", "architecture", "gotcha", "convention", "dependency", "workflow", "observation", "decision", "fact"}
	layerVariants       = []string{"knowledge", "graph", "session", "patterns", "gotchas"}
	kindVariants        = []string{"context", "skills", "addon", "grammar"}
)

// KnowledgeFact: every key is always written. Empty enum values are written
// as their defaults (project_only, public, fact).
type KnowledgeFact struct {
	Category          string
	Key               string
	Value             string
	SourceSession     string
	Confidence        float32
	CreatedAt         time.Time
	LastConfirmed     time.Time
	RetrievalCount    uint32
	LastRetrieved     *time.Time
	ValidFrom         *time.Time
	ValidUntil        *time.Time
	Supersedes        *string
	ConfirmationCount uint32
	FeedbackUp        uint32
	FeedbackDown      uint32
	LastFeedback      *time.Time
	Privacy           Privacy
	Sensitivity       Sensitivity
	ImportedFrom      *string
	Archetype         Archetype
	Fidelity          *FidelityScore
	RevisionCount     uint32
}

// FidelityScore is KnowledgeFact.fidelity.
type FidelityScore struct {
	Structural float64
	Semantic   float64
	ComputedAt time.Time
}

// ProjectPattern: all fields required.
type ProjectPattern struct {
	PatternType   string
	Description   string
	Examples      []string
	SourceSession string
	CreatedAt     time.Time
}

// ConsolidatedInsight: all fields required.
type ConsolidatedInsight struct {
	Summary      string
	FromSessions []string
	Timestamp    time.Time
}

// GraphLayer is the graph layer.
type GraphLayer struct {
	Nodes      []GraphNode
	Edges      []GraphEdge
	ExportedAt time.Time
}

// GraphNode is GraphNodeExport.
type GraphNode struct {
	Kind      string
	Name      string
	FilePath  string
	LineStart *uint64 // skipped when nil
	LineEnd   *uint64 // skipped when nil
	Metadata  *string // skipped when nil
}

// GraphEdge is GraphEdgeExport.
type GraphEdge struct {
	SourcePath string
	SourceName string
	TargetPath string
	TargetName string
	Kind       string
	Metadata   *string // skipped when nil
}

// SessionLayer is the session layer.
type SessionLayer struct {
	TaskDescription *string // null when nil (never omitted)
	Findings        []SessionFinding
	Decisions       []SessionDecision
	NextSteps       []string
	FilesTouched    []string
	ExportedAt      time.Time
}

// SessionFinding.
type SessionFinding struct {
	Summary string
	File    *string // skipped when nil
	Line    *uint32 // skipped when nil
}

// SessionDecision.
type SessionDecision struct {
	Summary   string
	Rationale *string // skipped when nil
}

// PatternsLayer is the patterns layer.
type PatternsLayer struct {
	Patterns   []ProjectPattern
	ExportedAt time.Time
}

// GotchasLayer is the gotchas layer.
type GotchasLayer struct {
	Gotchas    []Gotcha
	ExportedAt time.Time
}

// Gotcha is GotchaExport.
type Gotcha struct {
	ID           string
	Category     string
	Severity     string
	Trigger      string
	Resolution   string
	FilePatterns []string
	Confidence   float32
}

// ContextGraph is the v2 content graph.
type ContextGraph struct {
	Format string // "ctxpkg-graph-v2"
	Nodes  []ContextNode
	Edges  []ContextEdge
}

// ContextNode; the pointer fields are skipped when nil.
type ContextNode struct {
	ID                string
	Type              string
	Content           string
	Activation        float64 // default 1.0 on input
	Category          *string
	Source            *string
	CreatedAt         *time.Time
	DecayHalfLifeDays *uint32
	BlobRef           *string
	FilePath          *string
	LineStart         *uint64
	LineEnd           *uint64
	Confidence        *float32
	Supersedes        *string
}

// ContextEdge; Coactivations is omitted when 0, Metadata when nil.
type ContextEdge struct {
	From          string
	To            string
	Type          string
	Weight        float64 // default 1.0 on input
	Coactivations uint32
	Metadata      *string
}

// AddonContent is the v2 addon payload.
type AddonContent struct {
	ManifestTOML string
}

// DocumentsContent is the v2 skills payload.
type DocumentsContent struct {
	Files []DocumentBlob
}

// DocumentBlob is one skills file.
type DocumentBlob struct {
	Path     string
	SHA256   string
	Encoding string
	Body     string
}

// Errors of reading and writing. Their texts are lean-ctx's where lean-ctx
// has one.
var (
	// ErrTooLarge: "package file too large ({n} bytes, max 10485760 bytes)".
	ErrTooLarge = errors.New("package file too large")
	// ErrParse wraps typed-parse failures: "parse package: {serde error}".
	ErrParse = errors.New("parse package")
	// ErrNoContent: "package has no top-level content member".
	ErrNoContent = errors.New("package has no top-level content member")
	// ErrUnencodable: a NaN or ±Inf float that serde_json would write as
	// null, which does not parse back.
	ErrUnencodable = errors.New("package cannot be encoded")
)
