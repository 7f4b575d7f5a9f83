package session

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// StableModTime is the TAR mtime git-ctx writes (the Unix epoch), so that
// the artifact, and its sha256, depend only on the entry's name and content.
// rc.8 writes the wall-clock export time instead, so identical content
// never hashes the same twice.
var StableModTime = time.Unix(0, 0).UTC()

const tarBlock = 512

// WriteTAR writes the single-entry TAR rc.8 writes, with archive/tar's
// defaults: one regular-file header (typeflag '0', mode 0600, uid/gid 0,
// empty uname/gname, mtime rounded to the nearest second), USTAR when the
// name and size fit and PAX records otherwise, then the body, padding and
// the two-block trailer, with no padding to a 10 KiB record.
//
// modTime is the header mtime; the zero Time means StableModTime. Passing
// the wall clock reproduces rc.8 exactly; git-ctx passes the zero Time.
//
// name must pass CheckSafePath; size must be at most MaxPayloadSize; body
// must hold exactly size bytes (else ErrTARSizeMismatch, with the output
// incomplete and to be discarded).
func WriteTAR(w io.Writer, name string, body io.Reader, size int64, modTime time.Time) error {
	if err := CheckSafePath(name); err != nil {
		return err
	}
	if size < 0 || size > MaxPayloadSize {
		return fmt.Errorf("%w: %d bytes", ErrTAREntryTooLarge, size)
	}
	if modTime.IsZero() {
		modTime = StableModTime
	}
	tw := tar.NewWriter(w)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: FileMode, Size: size, ModTime: modTime}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if err := copyExact(tw, body, size, "body", ErrTARSizeMismatch); err != nil {
		return err
	}
	return tw.Close()
}

// TARHeader returns the header WriteTAR writes for an entry named name of
// size bytes with modTime (the zero Time means StableModTime): what comes
// before the body. Its length depends on name alone while size is below
// 8 GiB (the USTAR size field; larger sizes take a PAX record), so a writer
// that learns the size only after the body can reserve the header and fill
// it in afterwards. name and size are checked as WriteTAR checks them.
func TARHeader(name string, size int64, modTime time.Time) ([]byte, error) {
	if err := CheckSafePath(name); err != nil {
		return nil, err
	}
	if size < 0 || size > MaxPayloadSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrTAREntryTooLarge, size)
	}
	if modTime.IsZero() {
		modTime = StableModTime
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: FileMode, Size: size, ModTime: modTime}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TARTrailer returns what WriteTAR writes after a body of size bytes: the
// zero padding to a whole block, then the two zero blocks that end the
// archive.
func TARTrailer(size int64) []byte {
	pad := (tarBlock - size%tarBlock) % tarBlock
	return make([]byte, pad+2*tarBlock)
}

// TAREntry streams the body of a snapshot TAR's only entry.
type TAREntry struct {
	Name    string
	Size    int64
	Mode    int64
	ModTime time.Time

	tr       *tar.Reader
	cr       *countingReader
	end      int64 // offset just past the two-block trailer
	read     int64
	bodyDone bool
	err      error
}

// ReadTAR opens a snapshot TAR (USTAR, PAX or GNU, as archive/tar reads)
// and checks its first header:
//
//   - no entry at all                                  ErrTAREmpty
//   - unreadable header                                ErrTARMalformed
//   - symbolic link                                    ErrTARSymlink
//   - hard link                                        ErrTARHardlink
//   - character/block device or FIFO                   ErrTARDevice
//   - anything else but a regular file (directories,
//     GNU or PAX sparse files, global headers, ...)    ErrTARNotRegular
//   - a name failing CheckSafePath: ".." component     ErrPathTraversal
//     absolute                                         ErrPathAbsolute
//     backslash                                        ErrPathBackslash
//     over MaxPathLen (or a component over 255)        ErrPathTooLong
//     other                                            ErrPathInvalid
//   - a name other than wantName (if non-empty)        ErrTARNameMismatch
//   - a body larger than MaxPayloadSize                ErrTAREntryTooLarge
//
// Reading the returned entry yields the body; at its end the entry checks
// that the body was complete (ErrTARSizeMismatch), that the next thing is
// the two-zero-block end marker and not another header (ErrTARSecondEntry,
// ErrTARNoTrailer, ErrTARMalformed), and that r holds nothing but zero
// bytes after it up to its EOF (ErrTARTrailingData). It returns io.EOF only
// after all of that and after r itself returned io.EOF, so when r is the
// payload from ReadSnapshot, io.EOF also means the payload's size and hash
// were verified. Errors from r are returned unchanged (wrapped).
func ReadTAR(r io.Reader, wantName string) (*TAREntry, error) {
	cr := &countingReader{r: r}
	tr := tar.NewReader(cr)
	hdr, err := tr.Next()
	if err != nil {
		switch {
		case err == io.EOF:
			return nil, ErrTAREmpty
		case cr.err != nil && errors.Is(err, cr.err):
			return nil, err
		default:
			return nil, fmt.Errorf("%w: %v", ErrTARMalformed, err)
		}
	}
	switch hdr.Typeflag {
	case tar.TypeReg:
	case tar.TypeSymlink:
		return nil, ErrTARSymlink
	case tar.TypeLink:
		return nil, ErrTARHardlink
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return nil, ErrTARDevice
	default:
		return nil, fmt.Errorf("%w: typeflag %q", ErrTARNotRegular, hdr.Typeflag)
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return nil, fmt.Errorf("%w: sparse file", ErrTARNotRegular)
		}
	}
	if err := CheckSafePath(hdr.Name); err != nil {
		return nil, err
	}
	if wantName != "" && hdr.Name != wantName {
		return nil, fmt.Errorf("%w: %q", ErrTARNameMismatch, truncateForError(hdr.Name))
	}
	if hdr.Size > MaxPayloadSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrTAREntryTooLarge, hdr.Size)
	}
	padded := (hdr.Size + tarBlock - 1) / tarBlock * tarBlock
	return &TAREntry{
		Name: hdr.Name, Size: hdr.Size, Mode: hdr.Mode, ModTime: hdr.ModTime,
		tr: tr, cr: cr, end: cr.n + padded + 2*tarBlock,
	}, nil
}

// Read implements io.Reader; see ReadTAR for what io.EOF guarantees.
func (e *TAREntry) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.bodyDone {
		e.err = e.finish()
		return 0, e.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := e.tr.Read(p)
	e.read += int64(n)
	switch {
	case err == nil:
	case err == io.EOF:
		e.bodyDone = true
		if n == 0 {
			e.err = e.finish()
			return 0, e.err
		}
	case e.cr.err != nil && errors.Is(err, e.cr.err):
		e.err = err
	case err == io.ErrUnexpectedEOF:
		e.err = fmt.Errorf("%w: got %d of %d bytes", ErrTARSizeMismatch, e.read, e.Size)
	default:
		e.err = fmt.Errorf("%w: %v", ErrTARMalformed, err)
	}
	if n > 0 || e.err == nil {
		return n, nil
	}
	return 0, e.err
}

func (e *TAREntry) finish() error {
	if e.read != e.Size {
		return fmt.Errorf("%w: got %d of %d bytes", ErrTARSizeMismatch, e.read, e.Size)
	}
	hdr, err := e.tr.Next()
	switch {
	case err == nil:
		return fmt.Errorf("%w: %q", ErrTARSecondEntry, truncateForError(hdr.Name))
	case err == io.EOF:
		if e.cr.n != e.end {
			return ErrTARNoTrailer
		}
	case e.cr.err != nil && errors.Is(err, e.cr.err):
		return err
	case err == io.ErrUnexpectedEOF:
		return ErrTARNoTrailer
	default:
		return fmt.Errorf("%w: after the entry: %v", ErrTARMalformed, err)
	}
	var buf [4096]byte
	for idle := 0; idle < 100; {
		n, err := e.cr.Read(buf[:])
		if n == 0 && err == nil {
			idle++
			continue
		}
		idle = 0
		for _, b := range buf[:n] {
			if b != 0 {
				return ErrTARTrailingData
			}
		}
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// countingReader counts bytes and remembers the first non-EOF error of r.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

func truncateForError(s string) string {
	if len(s) > 128 {
		return s[:128] + "..."
	}
	return s
}
