package ctxpkg

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/git-ctx/git-ctx/formats/dalek"
)

// Validation rules. Every validation failure is a *RuleError whose text is
// lean-ctx's exact message and which matches (errors.Is) one of these. The
// fixed-text rules have the message itself as the sentinel's text.
var (
	ErrSchemaVersion  = errors.New("unsupported schema_version")              // "unsupported schema_version {n} (expected 1 or 2)"
	ErrNameEmpty      = errors.New("name must not be empty")                  //
	ErrNameTooLong    = errors.New("name must be <= 128 characters")          // bytes
	ErrNameChars      = errors.New("name must only contain [a-zA-Z0-9._@/-]") //
	ErrVersionEmpty   = errors.New("version must not be empty")
	ErrVersionTooLong = errors.New("version must be <= 64 characters")
	ErrVersionChars   = errors.New("version must only contain [a-zA-Z0-9._+-]")
	ErrVersionDot     = errors.New("version must not start with '.'")
	ErrNoLayers       = errors.New("at least one layer is required")
	ErrKindNeedsV2    = errors.New("kind requires schema_version 2") // "kind = {kind} requires schema_version 2 (v2)"
	ErrDuplicateLayer = errors.New("duplicate layer")                // "duplicate layer: {layer}"
	ErrSHA256Hex      = errors.New("integrity.sha256 must be a 64-char hex string")
	ErrContentHashHex = errors.New("integrity.content_hash must be a 64-char hex string")
	ErrByteSizeZero   = errors.New("integrity.byte_size must be > 0")
	// ErrUnsafeName is git-ctx's own rule (lean-ctx has none): a name that
	// would escape packages/{name}-{version}: starting with '/', containing
	// ".." or an empty '/' segment.
	ErrUnsafeName = errors.New("name must not contain '..', empty segments or a leading '/'")

	// Kind coherence.
	ErrAddonPayload     = errors.New("content.addon payload requires kind=addon")        // " (manifest declares kind={kind})" for context/grammar
	ErrDocumentsPayload = errors.New("content.documents payload requires kind=skills")   // same suffix
	ErrAddonMissing     = errors.New("kind=addon requires a content.addon payload")      //
	ErrAddonRefused     = errors.New("kind=addon packages cannot be imported")           // lean-ctx text, see RefuseAddon
	ErrDocumentsMissing = errors.New("kind=skills requires a content.documents payload") //
	ErrSkillsFiles      = errors.New("skills payload file count")                        // "kind=skills payload has no files" / "skills payload has {n} files (cap: 256)"
	ErrDocumentPath     = errors.New("invalid document path")                            // "invalid document path `{p}` (...)"
	ErrDuplicatePath    = errors.New("duplicate document path")                          // "duplicate document path `{p}`"
	ErrDocumentBlob     = errors.New("invalid document blob")                            // "`{p}`: ..."
)

// RuleError is one validation failure: Msg is lean-ctx's exact text.
type RuleError struct {
	Rule error
	Msg  string
}

func (e *RuleError) Error() string { return e.Msg }
func (e *RuleError) Unwrap() error { return e.Rule }

// ValidationError collects the failures of Validate or CheckKind; its text
// joins them with "; " as lean-ctx does.
type ValidationError struct {
	Errs []*RuleError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Errs))
	for i, r := range e.Errs {
		parts[i] = r.Msg
	}
	return strings.Join(parts, "; ")
}

// Unwrap lets errors.Is find any of the rules.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Errs))
	for i, r := range e.Errs {
		out[i] = r
	}
	return out
}

type collector []*RuleError

func (c *collector) add(rule error, format string, args ...any) {
	msg := rule.Error()
	if format != "" {
		msg = fmt.Sprintf(format, args...)
	}
	*c = append(*c, &RuleError{rule, msg})
}

func (c collector) err() error {
	if len(c) == 0 {
		return nil
	}
	return &ValidationError{Errs: c}
}

// isAlnum is Rust's char::is_alphanumeric (Alphabetic or Numeric).
func isAlnum(r rune) bool {
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic, unicode.Nd, unicode.No)
}

// token adds lean-ctx's three rules of a name or version, in its order:
// empty (errEmpty), longer than limit bytes (errLong), a character that is
// neither alphanumeric nor in extra (errChars).
func (c *collector) token(v string, limit int, extra string, errEmpty, errLong, errChars error) {
	if v == "" {
		c.add(errEmpty, "")
	}
	if len(v) > limit {
		c.add(errLong, "")
	}
	if strings.IndexFunc(v, func(r rune) bool { return !isAlnum(r) && !strings.ContainsRune(extra, r) }) >= 0 {
		c.add(errChars, "")
	}
}

// Validate runs lean-ctx's manifest validation (every rule, in its order,
// collected into a *ValidationError) plus git-ctx's ErrUnsafeName rule,
// reported right after the name rules.
func (m *Manifest) Validate() error {
	var c collector
	if m.SchemaVersion != 1 && m.SchemaVersion != 2 {
		c.add(ErrSchemaVersion, "unsupported schema_version %d (expected 1 or 2)", m.SchemaVersion)
	}
	c.token(m.Name, 128, "-_.@/", ErrNameEmpty, ErrNameTooLong, ErrNameChars)
	if m.Name != "" && !SafeName(m.Name) {
		c.add(ErrUnsafeName, "")
	}
	c.token(m.Version, 64, "-_.+", ErrVersionEmpty, ErrVersionTooLong, ErrVersionChars)
	if strings.HasPrefix(m.Version, ".") {
		c.add(ErrVersionDot, "")
	}
	if m.SchemaVersion != 2 && len(m.Layers) == 0 {
		c.add(ErrNoLayers, "")
	}
	if k := m.EffectiveKind(); k != KindContext && m.SchemaVersion != 2 {
		c.add(ErrKindNeedsV2, "kind = %s requires schema_version 2 (v2)", k)
	}
	seen := map[Layer]bool{}
	for _, l := range m.Layers {
		if seen[l] {
			c.add(ErrDuplicateLayer, "duplicate layer: %s", l)
		}
		seen[l] = true
	}
	if !isHex64(m.Integrity.SHA256) {
		c.add(ErrSHA256Hex, "")
	}
	if !isHex64(m.Integrity.ContentHash) {
		c.add(ErrContentHashHex, "")
	}
	if m.Integrity.ByteSize == 0 {
		c.add(ErrByteSizeZero, "")
	}
	return c.err()
}

// SafeName reports whether a package name is safe to use in a store path:
// no leading '/', no "..", no empty '/' segment, no '\\' and no control
// character. (lean-ctx's own rule 4 allows "../x".)
func SafeName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.Contains(name, "..") || strings.Contains(name, "//") || strings.ContainsRune(name, '\\') {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "." {
			return false
		}
	}
	return strings.IndexFunc(name, unicode.IsControl) < 0
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if _, ok := dalek.HexVal(s[i]); !ok {
			return false
		}
	}
	return true
}

// CheckKind runs lean-ctx's kind coherence (validate_kind_coherence),
// collecting failures into a *ValidationError. Not implemented (no TOML or
// zstd in the standard library): the embedded addon TOML checks and the
// skills zstd decompression, size caps and plaintext hash checks. Use
// RefuseAddon for the import refusal of kind=addon.
func (p *Package) CheckKind() error {
	var c collector
	m, ct := &p.Manifest, &p.Content
	switch k := m.EffectiveKind(); k {
	case KindAddon:
		if ct.Addon == nil {
			c.add(ErrAddonMissing, "")
		}
	case KindSkills:
		if ct.Addon != nil {
			c.add(ErrAddonPayload, "")
		}
		if ct.Documents == nil {
			c.add(ErrDocumentsMissing, "")
			break
		}
		checkDocuments(&c, ct.Documents.Files)
	default:
		if ct.Addon != nil {
			c.add(ErrAddonPayload, "content.addon payload requires kind=addon (manifest declares kind=%s)", k)
		}
		if ct.Documents != nil {
			c.add(ErrDocumentsPayload, "content.documents payload requires kind=skills (manifest declares kind=%s)", k)
		}
	}
	return c.err()
}

func checkDocuments(c *collector, files []DocumentBlob) {
	if len(files) == 0 {
		c.add(ErrSkillsFiles, "kind=skills payload has no files")
		return
	}
	if len(files) > 256 {
		c.add(ErrSkillsFiles, "skills payload has %d files (cap: 256)", len(files))
		return
	}
	seen := map[string]bool{}
	for _, f := range files {
		p := f.Path
		switch {
		case p == "" || len(p) > 512:
			c.add(ErrDocumentPath, "invalid document path `%s` (empty or too long)", p)
			continue
		case strings.HasPrefix(p, "/") || strings.ContainsAny(p, `\:`):
			c.add(ErrDocumentPath, "invalid document path `%s` (must be relative with `/` separators)", p)
			continue
		case !safeSegments(p):
			c.add(ErrDocumentPath, "invalid document path `%s` (unsafe component)", p)
			continue
		}
		if seen[p] {
			c.add(ErrDuplicatePath, "duplicate document path `%s`", p)
			continue
		}
		seen[p] = true
		if !isHex64(f.SHA256) {
			c.add(ErrDocumentBlob, "`%s`: sha256 must be a 64-char hex string", p)
			continue
		}
		if f.Encoding != "zstd+base64" {
			c.add(ErrDocumentBlob, "`%s`: unsupported encoding `%s` (newer lean-ctx required)", p, f.Encoding)
			continue
		}
		if _, err := base64.StdEncoding.DecodeString(strings.TrimSpace(f.Body)); err != nil {
			c.add(ErrDocumentBlob, "`%s`: body is not valid base64: %v", p, err)
		}
	}
}

func safeSegments(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || strings.HasPrefix(seg, "..") {
			return false
		}
	}
	return strings.IndexFunc(p, unicode.IsControl) < 0
}

// RefuseAddon returns lean-ctx's import refusal for a kind=addon package
// (nil for other kinds): "`{name}` is a kind=addon package — install it
// with `lean-ctx addon add {name without leading @}` (addon installs need
// capability consent + the addon trust chain)".
func (m *Manifest) RefuseAddon() error {
	if m.EffectiveKind() != KindAddon {
		return nil
	}
	return &RuleError{ErrAddonRefused, fmt.Sprintf("`%s` is a kind=addon package — install it with `lean-ctx addon add %s` (addon installs need capability consent + the addon trust chain)",
		m.Name, strings.TrimPrefix(m.Name, "@"))}
}
