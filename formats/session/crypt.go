package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"filippo.io/age"
)

// Work factors (scrypt logN).
const (
	// DefaultWorkFactor is written when Encrypt is given 0 (rc.8 and age's
	// default; about 1 s and 256 MiB).
	DefaultWorkFactor = 18
	// MaxWorkFactor is the highest accepted on read and on write (age's
	// default maximum; a file above it is refused by rc.8 too).
	MaxWorkFactor = 22
)

// age format facts used to classify errors.
const (
	ageIntro        = "age-encryption.org/v1\n"
	ageNonceSize    = 16
	ageChunkSize    = 64 << 10
	ageEncChunkSize = ageChunkSize + 16
	maxAgeHeader    = 64 << 10
)

// EncryptOption changes Encrypt's behaviour.
type EncryptOption func(*encryptConfig)

type encryptConfig struct{ allowWeak bool }

// AllowWeak lets Encrypt use a work factor below DefaultWorkFactor (for
// tests; a weak factor makes the passphrase cheaper to guess).
func AllowWeak() EncryptOption { return func(c *encryptConfig) { c.allowWeak = true } }

// Encrypt returns a writer that age-encrypts to one scrypt passphrase
// stanza and writes the binary (not armoured) age file to w. workFactor 0
// means DefaultWorkFactor; below it needs AllowWeak (ErrWeakWorkFactor);
// above MaxWorkFactor is refused (ErrWorkFactorTooHigh) because readers
// refuse it. Close the returned writer to finish the file; it does not
// close w.
//
// The passphrase is used as raw bytes, with no normalisation. age keeps a
// copy as a string for the writer's lifetime, which cannot be zeroed.
func Encrypt(w io.Writer, passphrase []byte, workFactor int, opts ...EncryptOption) (io.WriteCloser, error) {
	var cfg encryptConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := checkPassphrase(passphrase); err != nil {
		return nil, err
	}
	workFactor, err := resolveWorkFactor(workFactor, cfg)
	if err != nil {
		return nil, err
	}
	rcpt, err := age.NewScryptRecipient(string(passphrase))
	if err != nil {
		return nil, ErrEmptyPassphrase
	}
	rcpt.SetWorkFactor(workFactor)
	return age.Encrypt(w, countingRecipient{rcpt, workFactor})
}

// resolveWorkFactor applies the default and the bounds.
func resolveWorkFactor(wf int, cfg encryptConfig) (int, error) {
	if wf == 0 {
		wf = DefaultWorkFactor
	}
	switch {
	case wf > MaxWorkFactor:
		return 0, fmt.Errorf("%w: %d > %d", ErrWorkFactorTooHigh, wf, MaxWorkFactor)
	case wf < 1, wf < DefaultWorkFactor && !cfg.allowWeak:
		return 0, fmt.Errorf("%w: %d", ErrWeakWorkFactor, wf)
	}
	return wf, nil
}

func checkPassphrase(p []byte) error {
	if len(p) == 0 {
		return ErrEmptyPassphrase
	}
	if len(p) > MaxPassphraseLen {
		return ErrPassphraseTooLong
	}
	return nil
}

// Decrypt reads a binary age file encrypted to exactly one scrypt stanza
// with a work factor of at most MaxWorkFactor, and returns the plaintext
// stream. age authenticates each 64 KiB chunk before releasing it and the
// final chunk before io.EOF.
//
// Errors, returned by Decrypt or by the reader's Read:
//   - ErrEmptyPassphrase, ErrPassphraseTooLong
//   - ErrMalformedCiphertext: not a binary age v1 header (e.g. armoured)
//   - ErrNotPassphraseEncrypted: other or additional recipient stanzas
//   - ErrWorkFactorTooHigh: logN above MaxWorkFactor (checked before any
//     scrypt work is done)
//   - ErrWrongPassphrase: the passphrase does not open the stanza. A
//     modified salt, work factor or stanza body is indistinguishable from
//     this and reported the same way.
//   - ErrTruncated: the file ends inside the header or nonce, or at a chunk
//     boundary before the final chunk
//   - ErrTampered: the header MAC or a payload chunk fails authentication,
//     or data follows the final chunk
//   - both ErrTruncated and ErrTampered: the last, short chunk fails
//     authentication, which a cut inside it and a modified byte in it
//     produce alike
//   - errors of r, wrapped, when r fails.
//
// The passphrase never appears in an error.
func Decrypt(r io.Reader, passphrase []byte) (io.Reader, error) {
	if err := checkPassphrase(passphrase); err != nil {
		return nil, err
	}
	src := &srcTracker{r: r}
	br := bufio.NewReaderSize(src, 4096)
	hdr, logN, err := readAgeHeader(br)
	if err != nil {
		if src.err != nil && errors.Is(err, src.err) {
			return nil, fmt.Errorf("reading ciphertext: %w", err)
		}
		return nil, err
	}
	id, err := age.NewScryptIdentity(string(passphrase))
	if err != nil {
		return nil, ErrEmptyPassphrase
	}
	id.SetMaxWorkFactor(MaxWorkFactor)
	pr, err := age.Decrypt(io.MultiReader(bytes.NewReader(hdr), br), countingIdentity{id, logN})
	if err != nil {
		var noMatch *age.NoIdentityMatchError
		switch {
		case errors.As(err, &noMatch):
			return nil, ErrWrongPassphrase
		case src.err != nil && errors.Is(err, src.err):
			return nil, fmt.Errorf("reading ciphertext: %w", err)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("%w: no payload nonce", ErrTruncated)
		case strings.Contains(err.Error(), "header MAC"):
			return nil, fmt.Errorf("%w: header MAC mismatch", ErrTampered)
		default:
			return nil, fmt.Errorf("%w: %v", ErrMalformedCiphertext, err)
		}
	}
	return &decryptReader{r: pr, src: src, payloadStart: int64(len(hdr)) + ageNonceSize}, nil
}

// readAgeHeader reads the age header up to and including its "---" MAC
// line, bounded by maxAgeHeader, and checks it holds exactly one scrypt
// stanza with an acceptable work factor. It returns the header bytes and
// the work factor.
func readAgeHeader(br *bufio.Reader) ([]byte, int, error) {
	var hdr []byte
	var stanzas [][]string
	for {
		line, err := br.ReadSlice('\n')
		hdr = append(hdr, line...)
		if len(hdr) > maxAgeHeader {
			return nil, 0, fmt.Errorf("%w: header over %d bytes", ErrMalformedCiphertext, maxAgeHeader)
		}
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, 0, fmt.Errorf("%w: header line too long", ErrMalformedCiphertext)
			}
			if err == io.EOF {
				if !strings.HasPrefix(ageIntro, string(hdr)) && !strings.HasPrefix(string(hdr), ageIntro) {
					return nil, 0, fmt.Errorf("%w: no age intro", ErrMalformedCiphertext)
				}
				return nil, 0, fmt.Errorf("%w: inside the header", ErrTruncated)
			}
			return nil, 0, err
		}
		if len(hdr) == len(line) {
			if string(line) != ageIntro {
				return nil, 0, fmt.Errorf("%w: no age intro", ErrMalformedCiphertext)
			}
			continue
		}
		if bytes.HasPrefix(line, []byte("---")) {
			break
		}
		if bytes.HasPrefix(line, []byte("-> ")) {
			stanzas = append(stanzas, strings.Fields(string(line[3:])))
		}
	}
	if len(stanzas) != 1 || len(stanzas[0]) == 0 || stanzas[0][0] != "scrypt" {
		return nil, 0, ErrNotPassphraseEncrypted
	}
	logN, err := parseWorkFactor(stanzas[0][1:])
	if err != nil {
		return nil, 0, err
	}
	return hdr, logN, nil
}

// parseWorkFactor reads the scrypt stanza's arguments (salt, logN).
func parseWorkFactor(args []string) (int, error) {
	if len(args) != 2 {
		return 0, fmt.Errorf("%w: scrypt stanza has %d arguments", ErrMalformedCiphertext, len(args))
	}
	w := args[1]
	if w == "" || w[0] < '1' || w[0] > '9' || strings.Trim(w, "0123456789") != "" {
		return 0, fmt.Errorf("%w: work factor %q", ErrMalformedCiphertext, truncateForError(w))
	}
	n, err := strconv.Atoi(w)
	if err != nil || n > MaxWorkFactor {
		return 0, fmt.Errorf("%w: %s > %d", ErrWorkFactorTooHigh, truncateForError(w), MaxWorkFactor)
	}
	return n, nil
}

// srcTracker counts ciphertext bytes and records how the source ended.
type srcTracker struct {
	r   io.Reader
	n   int64
	eof bool
	err error
}

func (s *srcTracker) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	switch {
	case err == io.EOF:
		s.eof = true
	case err != nil && s.err == nil:
		s.err = err
	}
	return n, err
}

// decryptReader maps age's payload errors to this package's sentinels.
type decryptReader struct {
	r            io.Reader
	src          *srcTracker
	payloadStart int64 // ciphertext offset of the first chunk
	delivered    int64 // plaintext bytes returned so far
	err          error
}

func (d *decryptReader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.r.Read(p)
	d.delivered += int64(n)
	if err != nil && err != io.EOF {
		err = d.classify(err)
		d.err = err
	}
	return n, err
}

func (d *decryptReader) classify(err error) error {
	switch {
	case d.src.err != nil && d.src.err != io.ErrUnexpectedEOF && errors.Is(err, d.src.err):
		return fmt.Errorf("reading ciphertext: %w", err)
	case err == io.ErrUnexpectedEOF:
		return fmt.Errorf("%w: ends before the final chunk", ErrTruncated)
	case strings.Contains(err.Error(), "trailing data"), strings.Contains(err.Error(), "last chunk is empty"):
		return fmt.Errorf("%w: %v", ErrTampered, err)
	}
	// An authentication failure of chunk k = delivered/64KiB (every chunk
	// before it was full). If the source has ended and that chunk was
	// shorter than a full chunk, it was the last one as received: cut or
	// modified, the two cannot be told apart.
	start := d.payloadStart + d.delivered/ageChunkSize*ageEncChunkSize
	ended := d.src.eof || d.src.err == io.ErrUnexpectedEOF
	if ended && d.src.n-start < ageEncChunkSize {
		return &multiError{
			msg:   "decrypt: last chunk failed authentication: ciphertext truncated or tampered",
			kinds: []error{ErrTruncated, ErrTampered},
		}
	}
	return fmt.Errorf("%w: payload chunk", ErrTampered)
}
