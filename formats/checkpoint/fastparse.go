package checkpoint

import (
	"strconv"
	"unicode/utf8"
)

// fastParse decodes the common shape of a checkpoint file in a single pass,
// without encoding/json: an object whose keys are all known, written without
// escapes and each present once, whose strings use only the short escapes
// (\" \\ \/ \b \f \n \r \t) and valid UTF-8, whose integers are plain JSON
// integers in range, and whose lists are null or hold no null. It reports
// false for anything else (including every invalid input), and the caller
// then falls back to parseGeneric; so fastParse never decides an error and
// only has to agree with parseGeneric on what it accepts.
func fastParse(data []byte) (*Checkpoint, bool) {
	p := fastParser{data: data}
	cp := &Checkpoint{}
	p.skipSpace()
	if !p.consume('{') {
		return nil, false
	}
	var seen uint32
	p.skipSpace()
	if !p.consume('}') {
		for {
			p.skipSpace()
			f := fieldIndex(p.plainKey())
			if f < 0 || seen&(1<<f) != 0 {
				return nil, false
			}
			seen |= 1 << f
			p.skipSpace()
			if !p.consume(':') {
				return nil, false
			}
			p.skipSpace()
			if !p.field(cp, f) {
				return nil, false
			}
			p.skipSpace()
			if p.consume(',') {
				continue
			}
			if p.consume('}') {
				break
			}
			return nil, false
		}
	}
	p.skipSpace()
	if p.bad || p.i != len(data) {
		return nil, false
	}
	return cp, true
}

// The known members, by index (at most 32, a bit each in fastParse's seen).
const (
	fVersion = iota
	fHash
	fParent
	fDevice
	fAuthor
	fTS
	fRepo
	fBranch
	fSession
	fTurn
	fModel
	fPlanMode
	fResumedFrom
	fSummary
	fEmb
	fFiles
	fTools
	fInjections
	fSig
)

// fieldIndex returns the index of a known key, or -1 (also for nil).
func fieldIndex(key []byte) int {
	switch string(key) {
	case "v":
		return fVersion
	case "hash":
		return fHash
	case "parent":
		return fParent
	case "device":
		return fDevice
	case "author":
		return fAuthor
	case "ts":
		return fTS
	case "repo":
		return fRepo
	case "branch":
		return fBranch
	case "session":
		return fSession
	case "turn":
		return fTurn
	case "model":
		return fModel
	case "plan_mode":
		return fPlanMode
	case "resumed_from":
		return fResumedFrom
	case "summary":
		return fSummary
	case "emb":
		return fEmb
	case "files":
		return fFiles
	case "tools":
		return fTools
	case "injections":
		return fInjections
	case "sig":
		return fSig
	}
	return -1
}

// fastParser is a cursor over one input. Once bad is set every method is a
// no-op returning a zero value, and fastParse reports false.
type fastParser struct {
	data []byte
	i    int
	bad  bool
	buf  []byte // scratch for strings with escapes
}

func (p *fastParser) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) consume(c byte) bool {
	if !p.bad && p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// plainKey reads a string of printable ASCII without escapes and returns its
// bytes without quotes; nil (and bad) for anything else.
func (p *fastParser) plainKey() []byte {
	if !p.consume('"') {
		p.bad = true
		return nil
	}
	start := p.i
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return p.data[start : p.i-1]
		case c < 0x20 || c >= 0x7f || c == '\\':
			p.bad = true
			return nil
		}
		p.i++
	}
	p.bad = true
	return nil
}

// str reads a JSON string into a Go string: valid UTF-8, short escapes only.
func (p *fastParser) str() string {
	if !p.consume('"') {
		p.bad = true
		return ""
	}
	start := p.i
	ascii := true
	p.buf = p.buf[:0]
	escaped := false
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			seg := p.data[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(seg) {
				p.bad = true
				return ""
			}
			if escaped {
				p.buf = append(p.buf, seg...)
				return string(p.buf)
			}
			return string(seg)
		case c == '\\':
			if p.i+1 >= len(p.data) {
				p.bad = true
				return ""
			}
			var r byte
			switch p.data[p.i+1] {
			case '"', '\\', '/':
				r = p.data[p.i+1]
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default: // \u and anything invalid
				p.bad = true
				return ""
			}
			seg := p.data[start:p.i]
			if !ascii && !utf8.Valid(seg) {
				p.bad = true
				return ""
			}
			p.buf = append(p.buf, seg...)
			p.buf = append(p.buf, r)
			escaped = true
			ascii = true
			p.i += 2
			start = p.i
			continue
		case c < 0x20:
			p.bad = true
			return ""
		case c >= utf8.RuneSelf:
			ascii = false
		}
		p.i++
	}
	p.bad = true
	return ""
}

// number reads a JSON number and returns its bytes and whether it is an
// integer (no fraction, no exponent).
func (p *fastParser) number() ([]byte, bool) {
	d := p.data
	start := p.i
	i := p.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		p.bad = true
		return nil, false
	}
	integer := true
	if i < len(d) && d[i] == '.' {
		integer = false
		if i = digits(d, i+1); i < 0 {
			p.bad = true
			return nil, false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		integer = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i = digits(d, i); i < 0 {
			p.bad = true
			return nil, false
		}
	}
	p.i = i
	return d[start:i], integer
}

// digits returns the index after the run of at least one digit at d[i],
// or -1 when there is none.
func digits(d []byte, i int) int {
	j := i
	for j < len(d) && d[j] >= '0' && d[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// int reads a JSON integer that fits in bits bits (what encoding/json
// accepts for an int of that size); anything else is bad.
func (p *fastParser) int(bits int) int64 {
	if p.bad {
		return 0
	}
	b, integer := p.number()
	if p.bad || !integer {
		p.bad = true
		return 0
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var u uint64
	limit := uint64(1) << (bits - 1) // |min|; max is limit-1
	for _, c := range b {
		if u > (limit-uint64(c-'0'))/10 {
			p.bad = true
			return 0
		}
		u = u*10 + uint64(c-'0')
	}
	if !neg && u >= limit {
		p.bad = true
		return 0
	}
	if neg {
		return int64(-u) // u <= limit, so -u fits
	}
	return int64(u)
}

// float32 reads a JSON number into a float32 as encoding/json does.
func (p *fastParser) float32() float32 {
	if p.bad {
		return 0
	}
	b, _ := p.number()
	if p.bad {
		return 0
	}
	f, err := strconv.ParseFloat(string(b), 32)
	if err != nil {
		p.bad = true
		return 0
	}
	return float32(f)
}

// null consumes the literal null if it is next.
func (p *fastParser) null() bool {
	if !p.bad && len(p.data)-p.i >= 4 && string(p.data[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// bool reads true or false.
func (p *fastParser) bool() bool {
	switch {
	case p.bad:
	case len(p.data)-p.i >= 4 && string(p.data[p.i:p.i+4]) == "true":
		p.i += 4
		return true
	case len(p.data)-p.i >= 5 && string(p.data[p.i:p.i+5]) == "false":
		p.i += 5
		return false
	}
	p.bad = true
	return false
}

// list reads null (a nil slice) or an array whose elements each is reads;
// [] gives an empty non-nil slice, as encoding/json does.
func list[T any](p *fastParser, elem func() T) []T {
	if p.null() {
		return nil
	}
	if !p.consume('[') {
		p.bad = true
		return nil
	}
	out := []T{}
	p.skipSpace()
	if p.consume(']') {
		return out
	}
	for !p.bad {
		p.skipSpace()
		out = append(out, elem())
		p.skipSpace()
		if p.consume(',') {
			continue
		}
		if p.consume(']') {
			return out
		}
		p.bad = true
	}
	return nil
}

// resumedFrom reads null or an object whose keys are exactly "session" and
// "hash", each at most once.
func (p *fastParser) resumedFrom() *ResumedFrom {
	if p.null() {
		return nil
	}
	if !p.consume('{') {
		p.bad = true
		return nil
	}
	r := &ResumedFrom{}
	p.skipSpace()
	if p.consume('}') {
		return r
	}
	var seenSession, seenHash bool
	for !p.bad {
		p.skipSpace()
		key := string(p.plainKey())
		p.skipSpace()
		if !p.consume(':') {
			p.bad = true
			return nil
		}
		p.skipSpace()
		switch {
		case key == "session" && !seenSession:
			seenSession = true
			r.Session = p.str()
		case key == "hash" && !seenHash:
			seenHash = true
			r.Hash = p.str()
		default:
			p.bad = true
			return nil
		}
		p.skipSpace()
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			return r
		}
		p.bad = true
	}
	return nil
}

// field reads the value of known member f into cp.
func (p *fastParser) field(cp *Checkpoint, f int) bool {
	switch f {
	case fVersion:
		cp.Version = int(p.int(strconv.IntSize))
	case fHash:
		cp.Hash = p.str()
	case fParent:
		cp.ParentHash = p.str()
	case fDevice:
		cp.DeviceID = p.str()
	case fAuthor:
		cp.AuthorID = p.str()
	case fTS:
		cp.Timestamp = p.int(64)
	case fRepo:
		cp.RepoRemote = p.str()
	case fBranch:
		cp.Branch = p.str()
	case fSession:
		cp.SessionID = p.str()
	case fTurn:
		cp.Turn = int(p.int(strconv.IntSize))
	case fModel:
		cp.ActiveModel = p.str()
	case fPlanMode:
		cp.PlanMode = p.bool()
	case fResumedFrom:
		cp.ResumedFrom = p.resumedFrom()
	case fSummary:
		cp.Summary = p.str()
	case fEmb:
		cp.Embedding = list(p, p.float32)
	case fFiles:
		cp.FilesTouched = list(p, p.str)
	case fTools:
		cp.ToolsUsed = list(p, p.str)
	case fInjections:
		cp.InjectionSig = list(p, p.str)
	case fSig:
		cp.Signature = p.str()
	}
	return !p.bad
}
