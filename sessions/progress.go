package sessions

import "io"

// Phases a command reports to Client.Progress.
const (
	PhaseDerivingKey = "deriving key" // scrypt, about a second at the default work factor
	PhaseExporting   = "exporting"    // normalising the local transcript into the TAR
	PhaseUploading   = "encrypting and uploading"
	PhaseManifest    = "updating the manifest"
	PhaseDownloading = "downloading"
	PhaseRestoring   = "decrypting and restoring"
)

// Progress receives what a command is doing, for a display. Calls come
// from the command's goroutine, in order; an implementation that draws from
// another goroutine locks.
type Progress interface {
	// Phase starts a phase of total bytes (0: no byte count).
	Phase(name string, total int64)
	// Add counts n more bytes done in the current phase.
	Add(n int64)
	// Done ends the display (the command is over, or failed).
	Done()
}

func (c *Client) phase(name string, total int64) {
	if c.Progress != nil {
		c.Progress.Phase(name, total)
	}
}

func (c *Client) progressDone() {
	if c.Progress != nil {
		c.Progress.Done()
	}
}

// progressReader counts the bytes read through it into c.Progress.
func (c *Client) progressReader(r io.Reader) io.Reader {
	if c.Progress == nil {
		return r
	}
	return &countingReader{r: r, p: c.Progress}
}

type countingReader struct {
	r io.Reader
	p Progress
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 {
		c.p.Add(int64(n))
	}
	return n, err
}
