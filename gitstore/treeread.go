package gitstore

import (
	"crypto/sha1"
	"hash"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// treeReader reads trees stored whole in a pack through a window of its
// own, without the Store's lock: each worker of a parallel layout walk
// (gatherCheckpointsDir) has one, so that two workers reading two regions
// of the pack do not evict each other's window, and their reads, inflates
// and checks run at the same time. It is not safe for concurrent use.
type treeReader struct {
	win window
	buf []byte // win's storage, reused
	out []byte // the inflated tree, reused (decodeTree copies out of it)
	inflater
	id    objectIDer
	reads int // windows read (tests)
}

// readTreeWith is readTree through tr (nil: readTree): a tree found in a
// pack entry stored whole is read, inflated, checked against h and decoded
// by tr outside the Store's lock; anything else (not a long operation, a
// loose object, a delta, an entry past one aheadSize window, a mismatch,
// what decodeTree refuses) goes through readTree, which gives its answer
// and error.
func (s *Store) readTreeWith(h plumbing.Hash, tr *treeReader) (*object.Tree, error) {
	if tr == nil {
		return s.readTree(h)
	}
	if t := s.cachedTree(h); t != nil {
		return t, nil
	}
	s.mu.Lock()
	p, off, ok := s.direct.packedEntry(h)
	s.mu.Unlock()
	if ok {
		if data, ok := tr.read(p, off, h); ok {
			if entries, ok := decodeTree(data); ok {
				return s.keepDecodedTree(h, entries), nil
			}
		}
	}
	return s.readTree(h)
}

// read returns the content of the tree stored whole at off in p, checked
// against id (valid until the next read), or false.
func (r *treeReader) read(p *packIndex, off int64, id plumbing.Hash) ([]byte, bool) {
	if off < 12 {
		return nil, false
	}
	for attempt := 0; attempt < 2; attempt++ {
		w, ok := r.win.from(p, off)
		if !ok || attempt > 0 {
			w = r.fill(p, off, attempt > 0)
		}
		kind, size, used, ok := entryHeaderBytes(w)
		if !ok {
			continue // the header runs past the window
		}
		if kind != byte(plumbing.TreeObject) || size > maxDirectObject {
			return nil, false
		}
		if uint64(cap(r.out)) < size {
			r.out = make([]byte, size)
		}
		data := r.out[:size]
		if err := r.inflate(w[used:], data); err != nil {
			continue // the entry may go on past the window
		}
		if r.id.of(plumbing.TreeObject, data) != id {
			return nil, false
		}
		return data, true
	}
	return nil, false
}

// fill reads a window of p's pack at off: aheadSize bytes when off lies
// just past the last window (reads going forward through the pack) or
// when forced (an entry longer than a smaller window), else windowSize.
func (r *treeReader) fill(p *packIndex, off int64, force bool) []byte {
	n := windowSize
	if force || r.win.p == p && off >= r.win.off && off <= r.win.off+int64(len(r.win.data))+windowSize {
		n = aheadSize
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, aheadSize)
	}
	k, _ := p.pack.ReadAt(r.buf[:n], off) // a short read at the pack's end is fine
	r.win = window{p: p, off: off, data: r.buf[:k]}
	r.reads++
	return r.win.data
}

// objectIDer computes objectID with its hash state and header buffer
// reused (a reader of many objects, one goroutine at a time).
type objectIDer struct {
	sum hash.Hash
	hdr []byte
	out plumbing.Hash
}

// of is objectID(t, data).
func (o *objectIDer) of(t plumbing.ObjectType, data []byte) plumbing.Hash {
	if o.sum == nil {
		o.sum = sha1.New()
	}
	o.sum.Reset()
	o.hdr = append(append(o.hdr[:0], t.String()...), ' ')
	o.hdr = append(strconv.AppendInt(o.hdr, int64(len(data)), 10), 0)
	o.sum.Write(o.hdr)
	o.sum.Write(data)
	return plumbing.Hash(o.sum.Sum(o.out[:0]))
}
