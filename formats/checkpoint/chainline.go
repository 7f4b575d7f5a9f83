package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
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
func ParseChainLine(line []byte) (ChainEntry, error) {
	var e ChainEntry
	line = bytes.TrimSuffix(line, []byte("\n"))
	if len(line) > MaxChainLine {
		return e, fmt.Errorf("%w: %d bytes", ErrMalformedLine, len(line))
	}
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
