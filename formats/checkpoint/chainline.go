package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ChainEntry is one line of a device's chain file:
// {"hash":"…","parent":"…","ts":…} followed by "\n".
type ChainEntry struct {
	Hash   string `json:"hash"`
	Parent string `json:"parent"`
	TS     int64  `json:"ts"`
}

// MaxChainLine bounds one chain line; real lines are 158 bytes or so.
const MaxChainLine = 512

// Entry returns the chain entry of cp.
func (cp *Checkpoint) Entry() ChainEntry {
	return ChainEntry{Hash: cp.Hash, Parent: cp.ParentHash, TS: cp.Timestamp}
}

// MarshalLine returns the compact line with its trailing newline.
func (e ChainEntry) MarshalLine() []byte {
	b, _ := json.Marshal(e) // strings and an int64 always encode
	return append(b, '\n')
}

// ParseChainLine decodes one line (with or without its newline). Both hashes
// must be 64 lowercase hex characters and the line must be exactly what
// MarshalLine writes for them, so that an edited line cannot hide.
//
// A line in that exact form is decoded by fastChainLine; every other line
// goes through parseChainLineGeneric (encoding/json), the reference, for
// its error (FuzzChainLineDifferential).
func ParseChainLine(line []byte) (ChainEntry, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if len(line) > MaxChainLine {
		return ChainEntry{}, fmt.Errorf("%w: %d bytes", ErrMalformedLine, len(line))
	}
	if e, ok := fastChainLine(line); ok {
		return e, nil
	}
	return parseChainLineGeneric(line)
}

// chainLineParts are the fixed bytes of a line in MarshalLine's form.
const (
	chainLinePrefix = `{"hash":"`
	chainLineMiddle = `","parent":"`
	chainLineTS     = `","ts":`
)

// fastChainLine decodes a line (without its newline) that is exactly
// MarshalLine's output for two 64-character lowercase hex hashes and an
// int64 written as strconv writes it; it reports false for anything else.
func fastChainLine(line []byte) (ChainEntry, bool) {
	const tsAt = len(chainLinePrefix) + 64 + len(chainLineMiddle) + 64 + len(chainLineTS)
	if len(line) < tsAt+2 || line[len(line)-1] != '}' ||
		string(line[:len(chainLinePrefix)]) != chainLinePrefix ||
		string(line[len(chainLinePrefix)+64:len(chainLinePrefix)+64+len(chainLineMiddle)]) != chainLineMiddle ||
		string(line[tsAt-len(chainLineTS):tsAt]) != chainLineTS {
		return ChainEntry{}, false
	}
	hash := line[len(chainLinePrefix) : len(chainLinePrefix)+64]
	parent := line[len(chainLinePrefix)+64+len(chainLineMiddle) : tsAt-len(chainLineTS)]
	digits := line[tsAt : len(line)-1]
	p := fastParser{data: digits}
	ts := p.int(64)
	var buf [24]byte
	if p.bad || p.i != len(digits) || string(strconv.AppendInt(buf[:0], ts, 10)) != string(digits) ||
		!isHexBytes(hash) || !isHexBytes(parent) {
		return ChainEntry{}, false
	}
	return ChainEntry{Hash: string(hash), Parent: string(parent), TS: ts}, true
}

// isHexBytes reports whether b is lowercase hex characters only.
func isHexBytes(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// parseChainLineGeneric is ParseChainLine through encoding/json (line
// without its newline, length already checked): the reference
// fastChainLine is tested against, and the source of every error.
func parseChainLineGeneric(line []byte) (ChainEntry, error) {
	var e ChainEntry
	if _, err := splitObject(line); err != nil {
		return e, fmt.Errorf("%w: %v", ErrMalformedLine, err)
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return e, fmt.Errorf("%w: %v", ErrMalformedLine, err)
	}
	if !IsHexHash(e.Hash) || !IsHexHash(e.Parent) {
		return e, fmt.Errorf("%w: hash and parent must be 64 lowercase hex characters", ErrMalformedLine)
	}
	if !bytes.Equal(append(line, '\n'), e.MarshalLine()) {
		return e, fmt.Errorf("%w: not in canonical form", ErrMalformedLine)
	}
	return e, nil
}

// ParseChain decodes a whole chain file: every line must end in "\n".
// It returns the entries and, on error, the 1-based line number at fault.
func ParseChain(data []byte) ([]ChainEntry, int, error) {
	var out []ChainEntry
	n := 0
	for len(data) > 0 {
		n++
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return out, n, fmt.Errorf("%w: line %d has no newline", ErrMalformedLine, n)
		}
		e, err := ParseChainLine(data[:i])
		if err != nil {
			return out, n, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, e)
		data = data[i+1:]
	}
	return out, 0, nil
}
