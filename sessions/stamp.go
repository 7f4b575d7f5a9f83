package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/git-ctx/git-ctx/internal/inodetime"
)

// stampMargin is how long before its stamp was taken a file must have last
// changed for the stamp to be trusted: a change in the same tick of the
// file system's clock as the stamp (1 s on some file systems, 2 s on FAT)
// could leave every field of the stamp as it was. Like git's index, a
// stamp taken too soon after the file changed is "racy" and the file is
// read again.
var stampMargin = 2 * time.Second

// fileStamp is what the file system said about a session's local file
// when its bytes were last hashed and found to be the state's
// LocalRevision. While the file's stat data still match it, the file is
// taken to hold those bytes and is not read again (`session list` on a
// 64 MiB session: one stat instead of hashing 64 MiB).
//
// It is kept beside the state (<state>.stamp), written only by the reads
// that hash the file, and trusted only for the revision and path it names:
// a stamp that loses a race with a push or pull saving new state names the
// old revision and is ignored, so it can cost a re-read but never a wrong
// answer.
type fileStamp struct {
	Revision string `json:"revision"` // the SHA-256 (hex) of the bytes hashed
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	MTimeNS  int64  `json:"mtime_ns"`
	CTimeNS  int64  `json:"ctime_ns"` // changes whenever the inode does, even if mtime is set back
	Inode    uint64 `json:"inode"`
	Device   uint64 `json:"device"`
	TakenNS  int64  `json:"taken_ns"` // when the stat data were read, after the hash
}

// hashedFiles counts the files hashed in full (tests).
var hashedFiles atomic.Int64

// statOf is fi's stat data as a stamp (no revision, path or time).
func statOf(fi fs.FileInfo) fileStamp {
	s := fileStamp{Size: fi.Size(), MTimeNS: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Inode, s.Device = uint64(st.Ino), uint64(st.Dev)
	}
	s.CTimeNS, _ = inodetime.Nanos(fi)
	return s
}

// sameFile: s and o describe the same inode with the same size and times.
func (s fileStamp) sameFile(o fileStamp) bool {
	return s.Size == o.Size && s.MTimeNS == o.MTimeNS && s.CTimeNS == o.CTimeNS && s.Inode == o.Inode && s.Device == o.Device
}

// racy: the file changed within stampMargin of the stamp being taken.
func (s fileStamp) racy() bool {
	return s.TakenNS-max(s.MTimeNS, s.CTimeNS) < int64(stampMargin)
}

func (c *Client) stampPath(key string) string {
	return strings.TrimSuffix(c.statePath(key), ".json") + ".stamp"
}

// localHash is the SHA-256 (hex) of the local file p of session key, whose
// last synced bytes hashed to revision: revision itself without reading
// the file when the stamp kept for that revision and path still matches
// the file's stat data, else the hash of the file read in full (and, when
// the bytes are still revision's and the file is not racy, a new stamp).
func (c *Client) localHash(key, p, revision string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if revision != "" {
		if s, ok := c.loadStamp(key); ok && s.Revision == revision && s.Path == p && !s.racy() && s.sameFile(statOf(fi)) {
			return revision, nil
		}
	}
	h, s, err := hashStamped(p)
	if err != nil {
		return "", err
	}
	if h == revision && s != nil && !s.racy() {
		s.Revision, s.Path = h, p
		c.saveStamp(key, *s)
	}
	return h, nil
}

// hashStamped hashes the file at p and returns its stat data when they did
// not change while it was read (nil otherwise).
func hashStamped(p string) (string, *fileStamp, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", nil, err
	}
	hashedFiles.Add(1)
	sum := hex.EncodeToString(h.Sum(nil))
	after, err := f.Stat()
	if err != nil {
		return sum, nil, nil
	}
	s := statOf(after)
	if !s.sameFile(statOf(before)) {
		return sum, nil, nil
	}
	// The real clock, not c.Now: it is compared with the file system's.
	s.TakenNS = time.Now().UnixNano()
	return sum, &s, nil
}

// loadStamp reads the stamp of session key; ok is false when there is none
// or it is unreadable (it is then simply not used).
func (c *Client) loadStamp(key string) (fileStamp, bool) {
	data, err := os.ReadFile(c.stampPath(key))
	if err != nil {
		return fileStamp{}, false
	}
	var s fileStamp
	if err := json.Unmarshal(data, &s); err != nil || s.Revision == "" {
		return fileStamp{}, false
	}
	return s, true
}

// saveStamp writes the stamp of session key. It is a cache: a failure to
// write it only means the next command hashes the file again, so it is
// reported as a warning, once per command at most, and not as an error.
func (c *Client) saveStamp(key string, s fileStamp) {
	data, err := json.Marshal(s)
	if err == nil {
		err = writeAtomic(c.stampPath(key), strings.NewReader(string(data)+"\n"))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !c.stampWarned {
		c.stampWarned = true
		c.warn("%v", fmt.Errorf("keep the stat data of %s (it will be hashed again next time): %w", s.Path, err))
	}
}
