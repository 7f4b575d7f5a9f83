package ctxpkg

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/formats/serdejson"

	"github.com/git-ctx/git-ctx/formats/dalek"
)

// ContentType is the envelope's content_type (its JSON value).
type ContentType string

// Content types. The A2A JSON values follow serde's snake_case rule
// (unverified at runtime); their HMAC header strings differ (HeaderName).
const (
	ContentHandoffBundle  ContentType = "handoff_bundle"
	ContentContextPackage ContentType = "context_package"
	ContentA2AMessage     ContentType = "a2_a_message"
	ContentA2ATask        ContentType = "a2_a_task"
)

var contentTypeVariants = []string{"handoff_bundle", "context_package", "a2_a_message", "a2_a_task"}

// HeaderName is the string lean-ctx puts in the HMAC header.
func (c ContentType) HeaderName() string {
	switch c {
	case ContentA2AMessage:
		return "a2a_message"
	case ContentA2ATask:
		return "a2a_task"
	}
	return string(c)
}

// AgentIdentity is AgentIdentityV1.
type AgentIdentity struct {
	AgentID           string
	AgentType         string
	DaemonFingerprint string
	Capabilities      []string
}

// Envelope is TransportEnvelopeV1 as lean-ctx implements it.
type Envelope struct {
	FormatVersion uint32
	SentAt        time.Time
	Sender        AgentIdentity
	Recipient     *string // a plain string; null when nil
	ContentType   ContentType
	PayloadJSON   string  // for packages: the .ctxpkg file text, verbatim
	Signature     *string // lowercase hex HMAC; null when nil
	Metadata      map[string]string
}

// Envelope errors.
var (
	// ErrEnvelopeTooLarge: "envelope too large ({n} bytes, max 2000000)".
	ErrEnvelopeTooLarge = errors.New("envelope too large")
	// ErrEnvelopeParse wraps serde errors of the envelope.
	ErrEnvelopeParse = errors.New("parse envelope")
	// ErrFormatVersion: "unsupported format_version {n} (expected 1)".
	ErrFormatVersion = errors.New("unsupported format_version")
	// ErrUnsigned: the envelope carries no signature.
	ErrUnsigned = errors.New("envelope is not signed")
	// ErrHMACMismatch: lean-ctx's text for a failed check, verbatim (its
	// capital and full stop are part of the interchange; docs/SECURITY.md
	// quotes it).
	//lint:ignore ST1005 lean-ctx's exact message, reproduced byte for byte
	ErrHMACMismatch = errors.New("Signature verification failed. Envelope may be tampered.")
)

// CLI capabilities lean-ctx's pack send declares.
var SendCapabilities = []string{"context_compression", "knowledge_graph", "shared_sessions", "a2a_messaging"}

// DaemonFingerprint is the first 16 hex characters of SHA-256 over the tool
// version bytes followed by the executable path bytes.
func DaemonFingerprint(version, exePath string) string {
	sum := sha256.Sum256([]byte(version + exePath))
	return hex.EncodeToString(sum[:])[:16]
}

// NewPackageEnvelope returns a format_version 1, context_package envelope
// carrying the package file text, sent by the "cli" identity pack send
// uses. metadata may be nil (written as {}).
func NewPackageEnvelope(fileText string, sentAt time.Time, recipient *string, fingerprint string, metadata map[string]string) *Envelope {
	if metadata == nil {
		metadata = map[string]string{}
	}
	return &Envelope{
		FormatVersion: 1,
		SentAt:        sentAt.UTC(),
		Sender: AgentIdentity{
			AgentID:           "cli",
			AgentType:         "lean-ctx-cli",
			DaemonFingerprint: fingerprint,
			Capabilities:      slices.Clone(SendCapabilities),
		},
		Recipient:   recipient,
		ContentType: ContentContextPackage,
		PayloadJSON: fileText,
		Metadata:    metadata,
	}
}

// AppendJSON appends the compact serde_json text; metadata keys are
// written sorted (lean-ctx's order is random, and unhashed).
func (e *Envelope) AppendJSON(dst []byte) []byte {
	w := serdejson.NewWriter(dst)
	w.BeginObject()
	w.Uint64Member("format_version", uint64(e.FormatVersion))
	w.TimeMember("sent_at", e.SentAt)
	w.ObjectMember("sender", func() {
		w.StringMember("agent_id", e.Sender.AgentID)
		w.StringMember("agent_type", e.Sender.AgentType)
		w.StringMember("daemon_fingerprint", e.Sender.DaemonFingerprint)
		w.StringsMember("capabilities", e.Sender.Capabilities)
	})
	w.OptStringMember("recipient", e.Recipient)
	w.StringMember("content_type", string(e.ContentType))
	w.StringMember("payload_json", e.PayloadJSON)
	w.OptStringMember("signature", e.Signature)
	w.ObjectMember("metadata", func() {
		for _, k := range sortedKeys(e.Metadata) {
			w.StringMember(k, e.Metadata[k])
		}
	})
	w.EndObject()
	return w.Bytes()
}

// Marshal returns the pretty envelope text lean-ctx writes, refusing one
// over MaxEnvelopeSize.
func (e *Envelope) Marshal() ([]byte, error) {
	out := serdejson.Pretty(e.AppendJSON(nil))
	if len(out) > MaxEnvelopeSize {
		return nil, fmt.Errorf("%w (%d bytes, max %d)", ErrEnvelopeTooLarge, len(out), MaxEnvelopeSize)
	}
	return out, nil
}

// ReadEnvelope reads at most MaxEnvelopeSize+1 bytes and parses them.
func ReadEnvelope(r io.Reader) (*Envelope, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxEnvelopeSize+1))
	if err != nil {
		return nil, err
	}
	return ParseEnvelope(data)
}

// ParseEnvelope parses an envelope as lean-ctx does: size limit first, then
// the typed parse (wrapping ErrEnvelopeParse), then format_version == 1.
func ParseEnvelope(data []byte) (*Envelope, error) {
	if len(data) > MaxEnvelopeSize {
		return nil, fmt.Errorf("%w (%d bytes, max %d)", ErrEnvelopeTooLarge, len(data), MaxEnvelopeSize)
	}
	v, err := serdejson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEnvelopeParse, err)
	}
	e := new(Envelope)
	err = serdejson.DecodeStruct(v, "TransportEnvelopeV1", []field{
		req("format_version", u32(&e.FormatVersion)),
		req("sent_at", tm(&e.SentAt)),
		req("sender", func(v serdejson.Value) error {
			s := &e.Sender
			return serdejson.DecodeStruct(v, "AgentIdentityV1", []field{
				req("agent_id", str(&s.AgentID)),
				req("agent_type", str(&s.AgentType)),
				req("daemon_fingerprint", str(&s.DaemonFingerprint)),
				req("capabilities", strList(&s.Capabilities)),
			})
		}),
		opt("recipient", optStr(&e.Recipient)),
		req("content_type", variant(&e.ContentType, contentTypeVariants)),
		req("payload_json", str(&e.PayloadJSON)),
		opt("signature", optStr(&e.Signature)),
		req("metadata", func(v serdejson.Value) error {
			e.Metadata = map[string]string{}
			return v.Members(func(k string, val serdejson.Value) error {
				s, err := val.Text()
				e.Metadata[k] = s
				return err
			})
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEnvelopeParse, err)
	}
	if e.FormatVersion != 1 {
		return nil, &RuleError{ErrFormatVersion, fmt.Sprintf("unsupported format_version %d (expected 1)", e.FormatVersion)}
	}
	return e, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // byte order
	return keys
}

// HMACHeader is the header of lean-ctx's HMAC (reference §9.6), built from
// the parsed fields: sent_at in UTC re-rendered with to_rfc3339.
func (e *Envelope) HMACHeader() string {
	meta := make([]string, 0, len(e.Metadata))
	for _, k := range sortedKeys(e.Metadata) {
		meta = append(meta, k+"="+e.Metadata[k])
	}
	recipient := ""
	if e.Recipient != nil {
		recipient = *e.Recipient
	}
	return "v2:" + strconv.FormatUint(uint64(e.FormatVersion), 10) +
		":" + e.Sender.AgentID +
		":" + recipient +
		":" + e.ContentType.HeaderName() +
		":" + serdejson.FormatRFC3339(e.SentAt) +
		":" + strings.Join(meta, ",") +
		":" + strconv.Itoa(len(e.PayloadJSON))
}

func (e *Envelope) leanMAC(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(e.HMACHeader()))
	m.Write([]byte{0})
	m.Write([]byte(e.PayloadJSON))
	return m.Sum(nil)
}

func (e *Envelope) simpleMAC(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("v2:" + string(e.ContentType) + ":" + e.PayloadJSON))
	return m.Sum(nil)
}

// ComputeHMAC is the lowercase hex HMAC lean-ctx computes (form L):
// HMAC-SHA256(secret, header || 0x00 || payload).
func (e *Envelope) ComputeHMAC(secret []byte) string {
	return hex.EncodeToString(e.leanMAC(secret))
}

// ComputeSimpleHMAC is the spec document's form S:
// HMAC-SHA256(secret, "v2:{content_type}:{payload_json}"). lean-ctx does
// not accept it; it is only verified, never written.
func (e *Envelope) ComputeSimpleHMAC(secret []byte) string {
	return hex.EncodeToString(e.simpleMAC(secret))
}

// Sign sets Signature to ComputeHMAC(secret) (form L, what lean-ctx checks).
func (e *Envelope) Sign(secret []byte) {
	s := e.ComputeHMAC(secret)
	e.Signature = &s
}

// HMACForm says which HMAC form matched.
type HMACForm int

// HMAC forms.
const (
	HMACNone   HMACForm = iota // no match
	HMACLean                   // lean-ctx's header form (§9.6)
	HMACSimple                 // the spec document's "v2:{content_type}:{payload}" form
)

func (f HMACForm) String() string {
	switch f {
	case HMACLean:
		return "lean-ctx"
	case HMACSimple:
		return "spec-simple"
	}
	return "none"
}

// VerifyHMAC checks the signature against both forms in constant time
// (both are always computed and compared) and reports which matched,
// preferring HMACLean. ErrUnsigned when there is no signature;
// ErrHMACMismatch when neither form matches or the hex is malformed. The
// hex is decoded as lean-ctx does: pairs, either case, a leading '+' in a
// pair accepted, a trailing odd character ignored.
func (e *Envelope) VerifyHMAC(secret []byte) (HMACForm, error) {
	if e.Signature == nil {
		return HMACNone, ErrUnsigned
	}
	got, ok := leanHexDecode(*e.Signature)
	lean := subtle.ConstantTimeCompare(got, e.leanMAC(secret))
	simple := subtle.ConstantTimeCompare(got, e.simpleMAC(secret))
	switch {
	case !ok:
	case lean == 1:
		return HMACLean, nil
	case simple == 1:
		return HMACSimple, nil
	}
	return HMACNone, ErrHMACMismatch
}

// leanHexDecode decodes len(s)/2 pairs as Rust's u8::from_str_radix(_, 16)
// does (an optional leading '+', then one or two hex digits).
func leanHexDecode(s string) ([]byte, bool) {
	out := make([]byte, len(s)/2)
	for i := range out {
		a, b := s[2*i], s[2*i+1]
		lo, ok := dalek.HexVal(b)
		if !ok {
			return nil, false
		}
		if a == '+' {
			out[i] = lo
			continue
		}
		hi, ok := dalek.HexVal(a)
		if !ok {
			return nil, false
		}
		out[i] = hi<<4 | lo
	}
	return out, true
}
