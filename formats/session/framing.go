package session

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
)

// WriteSnapshot writes the snapshot plaintext: env's compact JSON, "\n",
// then exactly size bytes copied from tarPayload. w is normally the
// io.WriteCloser returned by Encrypt.
//
// env must pass Validate plus the writer's rules (lowercase sha256, mode
// 0600, created_at in TimeLayout), and env.Files[0].Size must equal size.
// The payload is streamed and hashed on the way; if it is shorter or longer
// than size, or does not hash to env.Files[0].SHA256, WriteSnapshot returns
// ErrPayloadSizeMismatch or ErrPayloadHashMismatch after having written
// bytes: the caller must then discard w's destination (do not Close and
// upload the ciphertext). At most size bytes of the payload are written.
func WriteSnapshot(w io.Writer, env Envelope, tarPayload io.Reader, size int64) error {
	if err := env.validateForWrite(); err != nil {
		return err
	}
	if env.Files[0].Size != size {
		return fmt.Errorf("%w: envelope says %d, caller says %d", ErrPayloadSizeMismatch, env.Files[0].Size, size)
	}
	line, err := env.MarshalLine()
	if err != nil {
		return err
	}
	if _, err := w.Write(line); err != nil {
		return err
	}
	h := sha256.New()
	if err := copyExact(io.MultiWriter(w, h), tarPayload, size, "payload", ErrPayloadSizeMismatch); err != nil {
		return err
	}
	if !equalHex(env.Files[0].SHA256, h.Sum(nil)) {
		return ErrPayloadHashMismatch
	}
	return nil
}

// copyExact copies the first size bytes of src to dst. When src holds
// fewer or more than size bytes it returns mismatch, wrapped in a message
// naming what src is (the payload, a TAR entry's body) and the counts.
func copyExact(dst io.Writer, src io.Reader, size int64, what string, mismatch error) error {
	n, err := io.Copy(dst, io.LimitReader(src, size))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%w: %s has %d bytes, want %d", mismatch, what, n, size)
	}
	longer, err := probeByte(src)
	if err != nil {
		return err
	}
	if longer {
		return fmt.Errorf("%w: %s longer than %d bytes", mismatch, what, size)
	}
	return nil
}

// probeByte reports whether r has at least one more byte. A reader that
// keeps returning (0, nil) is given up on after 100 tries, as io.ErrNoProgress.
func probeByte(r io.Reader) (bool, error) {
	var b [1]byte
	for i := 0; i < 100; i++ {
		n, err := r.Read(b[:])
		if n > 0 {
			return true, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return false, io.ErrNoProgress
}

// ReadSnapshot reads a snapshot plaintext (normally the reader returned by
// Decrypt): it reads the metadata line without ever holding more than
// MaxMetadataLine bytes of it, parses it with ParseEnvelope (rc.8 leniency),
// validates it, and returns the envelope and a reader of the TAR payload.
//
// The payload reader streams; it returns io.EOF only once it has delivered
// exactly files[0].size bytes, found the plaintext ends there (which also
// makes the age reader authenticate its final chunk), and the bytes hash to
// files[0].sha256. Otherwise its last Read returns ErrPayloadSizeMismatch,
// ErrPayloadHashMismatch, or the underlying (e.g. decryption) error. Bytes
// it delivered before that error are unverified: copy them to a temporary
// file and rename only after io.Copy returned nil (see the package comment).
//
// The caller still has to compare the envelope with what it asked for
// (Envelope.Match) and check the TAR (ReadTAR).
func ReadSnapshot(r io.Reader) (*Envelope, io.Reader, error) {
	return readSnapshot(r, ParseEnvelope)
}

// ReadSnapshotStrict is ReadSnapshot with ParseEnvelopeStrict.
func ReadSnapshotStrict(r io.Reader) (*Envelope, io.Reader, error) {
	return readSnapshot(r, ParseEnvelopeStrict)
}

func readSnapshot(r io.Reader, parse func([]byte) (*Envelope, error)) (*Envelope, io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	line, err := readLine(br, MaxMetadataLine, ErrMetadataTooLarge)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, nil, ErrMetadataTruncated
	}
	if err != nil {
		return nil, nil, err
	}
	env, err := parse(line[:len(line)-1])
	if err != nil {
		return nil, nil, err
	}
	if err := env.Validate(); err != nil {
		return nil, nil, err
	}
	f := env.Files[0]
	return env, &payloadReader{r: br, remaining: f.Size, size: f.Size, want: f.SHA256, h: sha256.New()}, nil
}

// readLine returns the bytes up to and including the first '\n', failing
// with tooLarge as soon as more than max bytes have been seen without one.
// It returns io.ErrUnexpectedEOF when the stream ends inside a line (io.EOF
// when it ends before any byte).
func readLine(br *bufio.Reader, max int, tooLarge error) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, fmt.Errorf("%w: more than %d bytes", tooLarge, max)
		}
		switch {
		case err == nil:
			if line == nil {
				return append([]byte(nil), chunk...), nil
			}
			return append(line, chunk...), nil
		case errors.Is(err, bufio.ErrBufferFull):
			line = append(line, chunk...)
		case err == io.EOF:
			if len(line)+len(chunk) == 0 {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// payloadReader yields exactly size bytes and verifies them at the end.
type payloadReader struct {
	r         io.Reader
	remaining int64
	size      int64
	want      string
	h         hash.Hash
	err       error
}

func (p *payloadReader) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	if p.remaining == 0 {
		p.err = p.finish()
		return 0, p.err
	}
	if len(b) == 0 {
		return 0, nil
	}
	if int64(len(b)) > p.remaining {
		b = b[:p.remaining]
	}
	n, err := p.r.Read(b)
	p.h.Write(b[:n])
	p.remaining -= int64(n)
	switch {
	case err == io.EOF && p.remaining > 0:
		p.err = fmt.Errorf("%w: got %d want %d", ErrPayloadSizeMismatch, p.size-p.remaining, p.size)
	case err == io.EOF:
		p.err = p.finish()
	case err != nil:
		p.err = err
	}
	if n > 0 {
		return n, nil
	}
	if p.err == nil {
		return 0, nil
	}
	return 0, p.err
}

func (p *payloadReader) finish() error {
	extra, err := probeByte(p.r)
	if err != nil {
		return err
	}
	if extra {
		return fmt.Errorf("%w: more than %d bytes", ErrPayloadSizeMismatch, p.size)
	}
	if !equalHex(p.want, p.h.Sum(nil)) {
		return ErrPayloadHashMismatch
	}
	return io.EOF
}
