package snapshot

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-ctx/git-ctx/formats/sigcheck"
)

// Timeline lines as git-ctx stores them on the memory branch (docs/FORMAT.md
// §2.3). A line is either
//
//   - legacy: exactly TimelineEntry.MarshalLine without its "\n" (what
//     git-ctx wrote before timeline lines were signed), or
//   - signed: the same object with three members appended,
//     `,"seq":<n>,"prev":"<64 hex>","line_sig":"<128 hex>"`, where line_sig
//     is an Ed25519 signature by the timeline owner's device key over
//     TimelineLineMessage.
//
// lean-ctx ignores unknown members, so both forms still read as its
// index.jsonl lines. Only the exact bytes these encoders produce parse.

// TimelineSignPrefix is the domain-separation line that starts every signed
// timeline message.
const TimelineSignPrefix = "git-ctx-timeline-line-v1"

// GenesisPrev is the prev of the first line of a timeline (64 "0").
const GenesisPrev = "0000000000000000000000000000000000000000000000000000000000000000"

// MaxTimelineLine bounds one timeline line (without its "\n"); the fields
// of an entry are short (ids, an RFC 3339 time, a commit and branch name).
const MaxTimelineLine = 8192

// ErrTimelineLine: a timeline line is not in either exact form.
var ErrTimelineLine = errors.New("malformed timeline line")

// TimelineLine is one stored line of a device's timeline.
type TimelineLine struct {
	Entry TimelineEntry
	// Seq, Prev and Sig are set on a signed line (Sig non-nil).
	Seq  uint64
	Prev string // lowercase hex, 64 characters
	Sig  []byte // ed25519 signature, 64 bytes; nil on a legacy line
	raw  []byte // the line's bytes without "\n"
}

// LineSigned reports whether l carries a line signature (the timeline
// owner's statement); a legacy line does not.
func (l TimelineLine) LineSigned() bool { return l.Sig != nil }

// Bytes returns the line's exact bytes without the trailing "\n".
func (l TimelineLine) Bytes() []byte { return l.raw }

// TimelineLineMessage returns the bytes a signed line's line_sig covers:
//
//	git-ctx-timeline-line-v1\n
//	repo <repo id>\n
//	device <device id>\n
//	seq <decimal>\n
//	prev <64 hex>\n
//	entry <TimelineEntry compact JSON>\n
//
// The entry JSON holds snapshot_id; prev chains the line to every line
// before it (NextPrev).
func TimelineLineMessage(repo, device string, seq uint64, prev string, e TimelineEntry) ([]byte, error) {
	ej, err := e.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(TimelineSignPrefix + "\n")
	b.WriteString("repo " + repo + "\n")
	b.WriteString("device " + device + "\n")
	b.WriteString("seq " + strconv.FormatUint(seq, 10) + "\n")
	b.WriteString("prev " + prev + "\n")
	b.WriteString("entry ")
	b.Write(ej)
	b.WriteString("\n")
	return b.Bytes(), nil
}

// NextPrev returns the prev of the line after one whose own prev is prev
// and whose bytes (without "\n") are line: the lowercase hex SHA-256 of the
// 64 ASCII characters of prev followed by line. Starting from GenesisPrev it
// hashes the whole timeline prefix, so a signed line vouches for every line
// before it, signed or not.
func NextPrev(prev string, line []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(line)
	return hex.EncodeToString(h.Sum(nil))
}

// SignTimelineLine builds the signed line for e at position seq of device's
// timeline in repo, after lines that chain to prev.
func SignTimelineLine(priv ed25519.PrivateKey, repo, device string, seq uint64, prev string, e TimelineEntry) (TimelineLine, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return TimelineLine{}, fmt.Errorf("%w: private key is %d bytes, want %d", ErrBadKey, len(priv), ed25519.PrivateKeySize)
	}
	if !isLowerHex(prev, 64) {
		return TimelineLine{}, fmt.Errorf("%w: prev %q is not 64 lowercase hex characters", ErrTimelineLine, prev)
	}
	msg, err := TimelineLineMessage(repo, device, seq, prev, e)
	if err != nil {
		return TimelineLine{}, err
	}
	l := TimelineLine{Entry: e, Seq: seq, Prev: prev, Sig: ed25519.Sign(priv, msg)}
	if l.raw, err = l.encode(); err != nil {
		return TimelineLine{}, err
	}
	return l, nil
}

// LegacyTimelineLine returns the unsigned line for e (the form git-ctx
// wrote before line signatures; kept for reading and tests).
func LegacyTimelineLine(e TimelineEntry) (TimelineLine, error) {
	l := TimelineLine{Entry: e}
	var err error
	if l.raw, err = l.encode(); err != nil {
		return TimelineLine{}, err
	}
	return l, nil
}

func (l TimelineLine) encode() ([]byte, error) {
	b, err := l.Entry.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	if l.Sig == nil {
		return b, nil
	}
	b = b[:len(b)-1] // drop "}"
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, l.Seq, 10)
	b = append(b, `,"prev":"`...)
	b = append(b, l.Prev...)
	b = append(b, `","line_sig":"`...)
	b = hex.AppendEncode(b, l.Sig)
	b = append(b, `"}`...)
	return b, nil
}

// VerifyLine reports whether l's line signature verifies under pub as a
// line of device's timeline in repo (false for a legacy line). Position
// (Seq, Prev) is the caller's to compare.
func (l TimelineLine) VerifyLine(pub ed25519.PublicKey, repo, device string) bool {
	if l.Sig == nil || len(pub) != ed25519.PublicKeySize {
		return false
	}
	msg, err := TimelineLineMessage(repo, device, l.Seq, l.Prev, l.Entry)
	if err != nil {
		return false
	}
	return sigcheck.Verify(pub, msg, l.Sig)
}

const (
	sigTail  = `","line_sig":"`
	prevHead = `,"prev":"`
	seqHead  = `,"seq":`
)

// ParseTimelineLine parses one stored line (without "\n"). The line must be
// byte-identical to what LegacyTimelineLine or SignTimelineLine produce for
// its values; anything else is ErrTimelineLine.
func ParseTimelineLine(line []byte) (TimelineLine, error) {
	if len(line) > MaxTimelineLine {
		return TimelineLine{}, fmt.Errorf("%w: %d bytes (limit %d)", ErrTimelineLine, len(line), MaxTimelineLine)
	}
	var l TimelineLine
	head := line
	// A signed line ends in ,"seq":N,"prev":"<64>","line_sig":"<128>"}.
	if n := len(line); n > 2+128+len(sigTail)+64+len(prevHead)+len(seqHead) && bytes.HasSuffix(line, []byte(`"}`)) &&
		bytes.Contains(line, []byte(`"line_sig":`)) {
		rest := line[:n-2]
		sigHex := string(rest[len(rest)-128:])
		rest = rest[:len(rest)-128]
		if !bytes.HasSuffix(rest, []byte(sigTail)) || !isLowerHex(sigHex, 128) {
			return TimelineLine{}, fmt.Errorf("%w: bad line_sig", ErrTimelineLine)
		}
		rest = rest[:len(rest)-len(sigTail)]
		if len(rest) < 64 {
			return TimelineLine{}, fmt.Errorf("%w: bad prev", ErrTimelineLine)
		}
		prev := string(rest[len(rest)-64:])
		rest = rest[:len(rest)-64]
		if !bytes.HasSuffix(rest, []byte(prevHead)) || !isLowerHex(prev, 64) {
			return TimelineLine{}, fmt.Errorf("%w: bad prev", ErrTimelineLine)
		}
		rest = rest[:len(rest)-len(prevHead)]
		i := bytes.LastIndex(rest, []byte(seqHead))
		if i < 0 {
			return TimelineLine{}, fmt.Errorf("%w: no seq", ErrTimelineLine)
		}
		seq, err := strconv.ParseUint(string(rest[i+len(seqHead):]), 10, 64)
		if err != nil {
			return TimelineLine{}, fmt.Errorf("%w: bad seq", ErrTimelineLine)
		}
		sig, _ := hex.DecodeString(sigHex)
		l.Seq, l.Prev, l.Sig = seq, prev, sig
		head = append(append([]byte{}, rest[:i]...), '}')
	}
	e, err := ParseTimelineEntry(head)
	if err != nil {
		return TimelineLine{}, fmt.Errorf("%w: %v", ErrTimelineLine, err)
	}
	l.Entry = e
	enc, err := l.encode()
	if err != nil {
		return TimelineLine{}, fmt.Errorf("%w: %v", ErrTimelineLine, err)
	}
	if !bytes.Equal(enc, line) {
		return TimelineLine{}, fmt.Errorf("%w: not in the exact form git-ctx writes", ErrTimelineLine)
	}
	l.raw = append([]byte{}, line...)
	return l, nil
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') }) < 0
}
