// Package checkpoint encodes, decodes, hashes, signs and verifies ghyll
// checkpoints (Checkpoint Format v1, and the v2 records ghyll's own code
// writes), their per-device chain lines and their ed25519 PEM keys.
//
// It is pure: it takes bytes and returns values, and knows nothing of git,
// SQLite or files.
//
// Two canonicalisation rules exist and give different hashes for one record:
//
//   - RuleSeedV1 (the seed document, and what git-ctx writes in a ctx-v1
//     branch): every field of the record except "hash" and "sig", exactly
//     as the record's own JSON encoding has them (so "emb" is covered, nil
//     lists are null, empty lists are [], and an empty "injections" is
//     absent), keys sorted, no whitespace.
//   - RuleGhyllV2 (ghyll's CanonicalHash, and what git-ctx writes in a
//     ghyll-v1 branch, as v2 records): as above but "emb" and unknown
//     members are left out and plan_mode, resumed_from and injections
//     appear only when set.
//
// Seal and SealRule write under one rule; Verify accepts either and reports
// which one matched.
package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// ZeroHash is the parent of the first checkpoint in a device's chain.
const ZeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

// MaxFileSize is the largest checkpoint file this package parses. Callers
// reading from a stream must check it before reading the whole input.
const MaxFileSize = 1 << 20

// WriteVersion is the format version git-ctx writes under RuleSeedV1 (a
// ctx-v1 branch); under RuleGhyllV2 it writes RuleGhyllV2.Version().
const WriteVersion = 1

// Checkpoint is one record. Field order is the key order of checkpoint files
// (ghyll's v2 declaration order; the v2-only fields are omitted when unset, so
// v1 records encode exactly as the seed's struct does).
type Checkpoint struct {
	Version      int          `json:"v"`
	Hash         string       `json:"hash"`
	ParentHash   string       `json:"parent"`
	DeviceID     string       `json:"device"`
	AuthorID     string       `json:"author"`
	Timestamp    int64        `json:"ts"`
	RepoRemote   string       `json:"repo"`
	Branch       string       `json:"branch"`
	SessionID    string       `json:"session"`
	Turn         int          `json:"turn"`
	ActiveModel  string       `json:"model"`
	PlanMode     bool         `json:"plan_mode,omitempty"`
	ResumedFrom  *ResumedFrom `json:"resumed_from,omitempty"`
	Summary      string       `json:"summary"`
	Embedding    []float32    `json:"emb"`
	FilesTouched []string     `json:"files"`
	ToolsUsed    []string     `json:"tools"`
	InjectionSig []string     `json:"injections,omitempty"`
	Signature    string       `json:"sig"`

	// Extra holds members this version does not know, in file order, with
	// their raw (compacted) values. They are covered by RuleSeedV1 when
	// verifying, and written back unchanged by MarshalFile.
	Extra []Member `json:"-"`
}

// ResumedFrom links the first checkpoint of a resumed session (v2 only).
type ResumedFrom struct {
	Session string `json:"session"`
	Hash    string `json:"hash"`
}

// CoversEmbedding reports whether a hash under r covers "emb". A value the
// hash does not cover can be changed in transit without detection, so it is
// never trusted.
func (r Rule) CoversEmbedding() bool { return r == RuleSeedV1 }

// CoversUnknown reports whether a hash under r covers unknown members.
func (r Rule) CoversUnknown() bool { return r == RuleSeedV1 }

// Member is one unknown top-level member of a checkpoint object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Rule names a canonicalisation rule.
type Rule string

// The canonicalisation rules a checkpoint may have been hashed with.
const (
	RuleSeedV1  Rule = "seed-v1"
	RuleGhyllV2 Rule = "ghyll-code-v2"
)

// Errors callers branch on. Verification failures wrap one of them.
var (
	ErrHashMismatch  = errors.New("hash_mismatch")
	ErrBadSignature  = errors.New("bad_signature")
	ErrMalformed     = errors.New("malformed checkpoint")
	ErrTooLarge      = errors.New("checkpoint too large")
	ErrBadKey        = errors.New("bad key")
	ErrUnencodable   = errors.New("value cannot be encoded")
	ErrMalformedLine = errors.New("malformed chain line")
)

var knownKeys = map[string]bool{
	"v": true, "hash": true, "parent": true, "device": true, "author": true,
	"ts": true, "repo": true, "branch": true, "session": true, "turn": true,
	"model": true, "plan_mode": true, "resumed_from": true, "summary": true,
	"emb": true, "files": true, "tools": true, "injections": true, "sig": true,
}

// Parse decodes one checkpoint object. It refuses input over MaxFileSize,
// duplicate keys, trailing data and values of the wrong type; unknown members
// are kept in Extra. Integers are decoded exactly (ts exceeds 2^53).
//
// The common shape of a file (known keys only, plain strings, integers where
// integers belong) is decoded in one pass by fastParse; anything else, and
// every error, goes through parseGeneric, which is the reference: the two
// give the same result on every input (FuzzParseDifferential).
func Parse(data []byte) (*Checkpoint, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, len(data), MaxFileSize)
	}
	if cp, ok := fastParse(data); ok {
		return cp, nil
	}
	return parseGeneric(data)
}

// parseGeneric is Parse through encoding/json: a validation pass, a member
// walk and a decode. It is the reference fastParse is tested against.
func parseGeneric(data []byte) (*Checkpoint, error) {
	members, err := splitObject(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	// Common case: every key is known exactly, so decoding the original
	// bytes once is safe (no case-insensitive matches can happen).
	allKnown := true
	for _, m := range members {
		allKnown = allKnown && knownKeys[m.Key]
	}
	if allKnown {
		var cp Checkpoint
		if err := json.Unmarshal(data, &cp); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return &cp, nil
	}
	// Otherwise decode only the exactly-known members: encoding/json would
	// match keys case-insensitively ("pArent" setting the parent).
	var known bytes.Buffer
	var extra []Member
	known.WriteByte('{')
	for _, m := range members {
		if !knownKeys[m.Key] {
			if k := foldedKnownKey(m.Key); k != "" {
				return nil, fmt.Errorf("%w: key %q differs from %q only in case", ErrMalformed, m.Key, k)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, m.Value); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
			}
			extra = append(extra, Member{Key: m.Key, Value: buf.Bytes()})
			continue
		}
		if known.Len() > 1 {
			known.WriteByte(',')
		}
		kb, _ := json.Marshal(m.Key)
		known.Write(kb)
		known.WriteByte(':')
		known.Write(m.Value)
	}
	known.WriteByte('}')
	var cp Checkpoint
	if err := json.Unmarshal(known.Bytes(), &cp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	cp.Extra = extra
	return &cp, nil
}

func foldedKnownKey(key string) string {
	for k := range knownKeys {
		if strings.EqualFold(k, key) {
			return k
		}
	}
	return ""
}

// splitObject returns the top-level members of a JSON object in order, with
// their raw values as written, refusing duplicates and anything after the
// object.
// It checks well-formedness with json.Valid first, then walks the members
// by hand (much faster than json.Decoder's token API).
func splitObject(data []byte) ([]Member, error) {
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v) // for the message
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, err
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	i = skipSpace(data, i+1)
	var members []Member
	seen := map[string]bool{}
	for i < len(data) && data[i] != '}' {
		end := stringEnd(data, i)
		rawKey := data[i:end]
		var key string
		// Escapes and invalid UTF-8 (which decoding turns into U+FFFD) go
		// through the decoder, so keys read exactly as encoding/json reads them.
		if bytes.IndexByte(rawKey, '\\') >= 0 || !utf8.Valid(rawKey) {
			if err := json.Unmarshal(rawKey, &key); err != nil {
				return nil, err
			}
		} else {
			key = string(rawKey[1 : len(rawKey)-1])
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // ':'
		vEnd := valueEnd(data, i)
		members = append(members, Member{Key: key, Value: json.RawMessage(data[i:vEnd])})
		i = skipSpace(data, vEnd)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	// Only whitespace may follow the object: any other byte would change the
	// file without changing its hash.
	if skipSpace(data, i+1) != len(data) {
		return nil, errors.New("data after the object")
	}
	return members, nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at data[i] == '"'.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// valueEnd returns the index after the (valid) JSON value starting at i.
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = stringEnd(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	}
	j := i
	for j < len(data) && data[j] != ',' && data[j] != '}' && data[j] != ']' && data[j] != ' ' &&
		data[j] != '\t' && data[j] != '\n' && data[j] != '\r' {
		j++
	}
	return j
}

// Canonical returns the exact bytes hashed under rule.
//
// Records without unknown members (or under RuleGhyllV2, which leaves them
// out) are encoded directly by appendCanonical; the rest go through
// canonicalGeneric, the reference the direct encoding is tested against.
func (cp *Checkpoint) Canonical(rule Rule) ([]byte, error) {
	if rule == RuleGhyllV2 || rule == RuleSeedV1 && len(cp.Extra) == 0 {
		return cp.appendCanonical(make([]byte, 0, cp.canonicalSizeHint()), rule)
	}
	return cp.canonicalGeneric(rule)
}

// canonicalGeneric builds the canonical form through a map and
// encoding/json (keys sorted by the encoder's rules, values by reflection).
func (cp *Checkpoint) canonicalGeneric(rule Rule) ([]byte, error) {
	fields := map[string]any{
		"v": cp.Version, "parent": cp.ParentHash, "device": cp.DeviceID,
		"author": cp.AuthorID, "ts": cp.Timestamp, "repo": cp.RepoRemote,
		"branch": cp.Branch, "session": cp.SessionID, "turn": cp.Turn,
		"model": cp.ActiveModel, "summary": cp.Summary,
		"files": cp.FilesTouched, "tools": cp.ToolsUsed,
	}
	if cp.PlanMode {
		fields["plan_mode"] = true
	}
	if cp.ResumedFrom != nil {
		fields["resumed_from"] = cp.ResumedFrom
	}
	if len(cp.InjectionSig) > 0 {
		fields["injections"] = cp.InjectionSig
	}
	switch rule {
	case RuleSeedV1:
		for _, f := range cp.Embedding {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("%w: emb holds NaN or Inf", ErrUnencodable)
			}
		}
		fields["emb"] = cp.Embedding
		for _, m := range cp.Extra {
			if _, dup := fields[m.Key]; !dup && m.Key != "hash" && m.Key != "sig" {
				fields[m.Key] = m.Value
			}
		}
	case RuleGhyllV2:
	default:
		return nil, fmt.Errorf("unknown canonicalisation rule %q", rule)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := json.Marshal(fields[k])
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUnencodable, k, err)
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// ComputeHash returns the lowercase hex SHA-256 of the canonical form.
func (cp *Checkpoint) ComputeHash(rule Rule) (string, error) {
	sum, err := cp.canonicalSum(rule)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(sum[:]), nil
}

// hashIs reports whether the hex SHA-256 of the canonical form under rule
// is h (ComputeHash(rule) == h, without making the hex string).
func (cp *Checkpoint) hashIs(rule Rule, h string) (bool, error) {
	sum, err := cp.canonicalSum(rule)
	if err != nil {
		return false, err
	}
	var x [2 * sha256.Size]byte
	hex.Encode(x[:], sum[:])
	return string(x[:]) == h, nil
}

// canonicalBuffers are the buffers canonicalSum writes canonical forms
// into (a whole-branch verify hashes one per record).
var canonicalBuffers = sync.Pool{New: func() any { return new([]byte) }}

// canonicalSum is the SHA-256 of Canonical(rule).
func (cp *Checkpoint) canonicalSum(rule Rule) ([sha256.Size]byte, error) {
	if rule == RuleGhyllV2 || rule == RuleSeedV1 && len(cp.Extra) == 0 {
		b := canonicalBuffers.Get().(*[]byte)
		c, err := cp.appendCanonical((*b)[:0], rule)
		var sum [sha256.Size]byte
		if err == nil {
			sum = sha256.Sum256(c)
		}
		if cap(c) <= 64<<10 {
			*b = c
			canonicalBuffers.Put(b)
		}
		return sum, err
	}
	c, err := cp.Canonical(rule)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(c), nil
}

// MarshalFile returns the pretty file encoding: Go's MarshalIndent with a
// two-space indent, declaration order, no trailing newline. Unknown members
// kept in Extra are written after the known ones, before "sig".
func (cp *Checkpoint) MarshalFile() ([]byte, error) {
	compact, err := cp.MarshalCompact()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// MarshalCompact returns the record as one line of JSON (no newline).
func (cp *Checkpoint) MarshalCompact() ([]byte, error) {
	b, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnencodable, err)
	}
	if len(cp.Extra) == 0 {
		return b, nil
	}
	// Re-insert unknown members before the trailing "sig" member.
	idx := bytes.LastIndex(b, []byte(`,"sig":`))
	if idx < 0 {
		return nil, fmt.Errorf("%w: no sig member", ErrUnencodable)
	}
	var buf bytes.Buffer
	buf.Write(b[:idx])
	for _, m := range cp.Extra {
		if knownKeys[m.Key] {
			continue
		}
		kb, _ := json.Marshal(m.Key)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(m.Value)
	}
	buf.Write(b[idx:])
	return buf.Bytes(), nil
}

// IsHexHash reports whether s is 64 lowercase hex characters.
func IsHexHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckShape reports the first structural problem of a record that a hash
// alone would not catch: malformed hashes or an empty device.
func (cp *Checkpoint) CheckShape() error {
	switch {
	case cp.Version < 1:
		return fmt.Errorf("%w: version %d", ErrMalformed, cp.Version)
	case !IsHexHash(cp.Hash):
		return fmt.Errorf("%w: hash is not 64 lowercase hex characters", ErrMalformed)
	case !IsHexHash(cp.ParentHash):
		return fmt.Errorf("%w: parent is not 64 lowercase hex characters", ErrMalformed)
	case strings.TrimSpace(cp.DeviceID) == "":
		return fmt.Errorf("%w: empty device", ErrMalformed)
	}
	return nil
}
