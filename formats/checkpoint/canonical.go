package checkpoint

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// appendCanonical appends the canonical form of cp under rule (RuleGhyllV2,
// or RuleSeedV1 for a record without unknown members) to dst. It writes
// byte for byte what canonicalGeneric writes through encoding/json: the
// members in sorted key order, strings escaped as encoding/json escapes them
// (HTML characters, U+2028, U+2029 and invalid UTF-8 included) and float32
// values formatted by the same rule.
func (cp *Checkpoint) appendCanonical(dst []byte, rule Rule) ([]byte, error) {
	seed := rule == RuleSeedV1
	if seed {
		for _, f := range cp.Embedding {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("%w: emb holds NaN or Inf", ErrUnencodable)
			}
		}
	}
	b := append(dst, `{"author":`...)
	b = appendJSONString(b, cp.AuthorID)
	b = append(b, `,"branch":`...)
	b = appendJSONString(b, cp.Branch)
	b = append(b, `,"device":`...)
	b = appendJSONString(b, cp.DeviceID)
	if seed {
		b = append(b, `,"emb":`...)
		b = appendFloat32List(b, cp.Embedding)
	}
	b = append(b, `,"files":`...)
	b = appendStringList(b, cp.FilesTouched)
	if len(cp.InjectionSig) > 0 {
		b = append(b, `,"injections":`...)
		b = appendStringList(b, cp.InjectionSig)
	}
	b = append(b, `,"model":`...)
	b = appendJSONString(b, cp.ActiveModel)
	b = append(b, `,"parent":`...)
	b = appendJSONString(b, cp.ParentHash)
	if cp.PlanMode {
		b = append(b, `,"plan_mode":true`...)
	}
	b = append(b, `,"repo":`...)
	b = appendJSONString(b, cp.RepoRemote)
	if r := cp.ResumedFrom; r != nil {
		b = append(b, `,"resumed_from":{"session":`...)
		b = appendJSONString(b, r.Session)
		b = append(b, `,"hash":`...)
		b = appendJSONString(b, r.Hash)
		b = append(b, '}')
	}
	b = append(b, `,"session":`...)
	b = appendJSONString(b, cp.SessionID)
	b = append(b, `,"summary":`...)
	b = appendJSONString(b, cp.Summary)
	b = append(b, `,"tools":`...)
	b = appendStringList(b, cp.ToolsUsed)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, cp.Timestamp, 10)
	b = append(b, `,"turn":`...)
	b = strconv.AppendInt(b, int64(cp.Turn), 10)
	b = append(b, `,"v":`...)
	b = strconv.AppendInt(b, int64(cp.Version), 10)
	return append(b, '}'), nil
}

// canonicalSizeHint is a capacity that usually holds the canonical form.
func (cp *Checkpoint) canonicalSizeHint() int {
	n := 256 + len(cp.AuthorID) + len(cp.Branch) + len(cp.DeviceID) + len(cp.ActiveModel) +
		len(cp.ParentHash) + len(cp.RepoRemote) + len(cp.SessionID) + len(cp.Summary) + 16*len(cp.Embedding)
	for _, l := range [][]string{cp.FilesTouched, cp.ToolsUsed, cp.InjectionSig} {
		for _, s := range l {
			n += len(s) + 3
		}
	}
	if cp.ResumedFrom != nil {
		n += len(cp.ResumedFrom.Session) + len(cp.ResumedFrom.Hash) + 32
	}
	return n
}

func appendStringList(b []byte, l []string) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendFloat32List writes l as encoding/json writes a []float32 whose
// values are all finite.
func appendFloat32List(b []byte, l []float32) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, f := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat32(b, f)
	}
	return append(b, ']')
}

// appendFloat32 formats a finite f like encoding/json: the shortest decimal
// that reads back as f, in exponent form only below 1e-6 or from 1e21 on,
// with the exponent not padded ("1e-7", not "1e-07").
func appendFloat32(b []byte, f float32) []byte {
	format := byte('f')
	if abs := float32(math.Abs(float64(f))); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, float64(f), format, -1, 32)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const lowerHex = "0123456789abcdef"

// appendJSONString writes s as a JSON string exactly as encoding/json's
// Marshal does: ", \ and control characters escaped (\b \f \n \r \t short,
// the rest as \u00XX), <, > and & as \u003c, \u003e and \u0026, U+2028 and
// U+2029 as \u2028 and \u2029, and each invalid UTF-8 byte as \ufffd.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', lowerHex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
