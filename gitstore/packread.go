package gitstore

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// A short-lived command (a hook's append, `git ctx log`) reads a handful of
// objects. go-git loads every pack index of the repository whole before it
// reads its first packed object: on a branch of 100k checkpoints that is
// several megabytes and most of the command's time. directReader answers
// single reads instead: loose objects directly, packed ones by a binary
// search in the .idx file and a read at the pack offset (resolving deltas),
// touching a few pages of each file. A long operation (verify, reindex, a
// pull) goes on with it, keeping delta bases and headers it probed
// (bounded caches) instead of go-git's whole indexes and object cache,
// which grew with the branch. Every object it returns is checked against
// its id (SHA-1 of header and content), and anything it does not handle
// with certainty is left to go-git.

// directReadLimit is how many packed objects one Store reads before the
// direct reader keeps what a long operation (verify, pull, reindex) reads
// again and again: the objects deltas are built on (inflating a delta
// chain once, not once per object built on it) and the headers the size
// probes walk. Both caches are bounded (baseCacheBytes, probeCacheEntries)
// and emptied when full.
const directReadLimit = 256

// baseCacheBytes bounds the delta bases kept; probeCacheEntries the
// headers.
const (
	baseCacheBytes    = 8 << 20
	probeCacheEntries = 1 << 16
)

// packAt is a pack entry: the pack and the entry's offset.
type packAt struct {
	p   *packIndex
	off int64
}

type cachedBase struct {
	t    plumbing.ObjectType
	data []byte // shared: never modified
}

// cachedProbe is a probed header; a delta's also depends on the bound
// its bases were checked against (maxBase; -1 for an object stored whole).
type cachedProbe struct {
	t       plumbing.ObjectType
	size    int64
	maxBase int64
}

// errDirect means the direct reader cannot answer; the caller asks go-git.
var errDirect = errors.New("direct object read not possible")

// maxDirectObject bounds an object read directly (larger ones go to go-git).
const maxDirectObject = 64 << 20

type packIndex struct {
	name      string // the .idx file
	idx, pack *os.File
	count     uint32
	fanout    [256]uint32
	// mapped is the .idx file mapped read-only (nil: read with ReadAt).
	// Only the pages a lookup touches are read.
	mapped []byte
}

type directReader struct {
	objects string
	packs   []*packIndex
	opened  bool
	// packsMod: the pack directory's modification time when it was last
	// listed (openPacks lists it again only when it changed).
	packsMod time.Time
	reads    int // packed objects read so far
	// Past directReadLimit reads: delta bases and probed headers kept.
	bases     map[packAt]cachedBase
	baseBytes int
	probes    map[packAt]cachedProbe
	// zr is one inflater reset for every entry (zlib.Resetter).
	zr io.ReadCloser
	// win: the first bytes of the last object asked for by id, read once
	// for its probe and its read (entryAt).
	win window
	// windowReads counts the windows read (tests).
	windowReads int
	// readers and probeReaders: the buffered readers of pack entries, one
	// per delta depth (bufReader).
	readers, probeReaders [maxDeltaDepth + 1]*bufio.Reader
	// noWhole turns readPackedWhole off (tests compare it with the probe
	// and read it stands for).
	noWhole bool
}

// window is bytes of p's pack from off on.
type window struct {
	p    *packIndex
	off  int64
	data []byte
}

// from returns the window's bytes from off on, when it holds off.
func (w *window) from(p *packIndex, off int64) ([]byte, bool) {
	if w.p != p || off < w.off || off >= w.off+int64(len(w.data)) {
		return nil, false
	}
	return w.data[off-w.off:], true
}

// windowSize is how much of an entry one read takes: a checkpoint file's
// whole entry, compressed.
const windowSize = 4096

// aheadSize is how much one read takes when the reads go forward through
// a pack: a whole-branch walk reads the trees of the tip in the order git
// packed them (git writes a commit's trees in the order a walk of it meets
// them), about a hundred bytes apart, so one read serves hundreds of them.
const aheadSize = 64 << 10

// entryAt returns a reader of p's pack from off on. With keep (an object
// asked for by id, not a delta base), a window of the pack holding off is
// read once and kept for the next entryAt within it: a blob is probed,
// then read, and trees read in pack order share one read (aheadSize). Each
// window is its own buffer (readers of an earlier one stay valid). The
// reader is the one kept for depth and size (readers are reset, not
// made, per entry): it is valid until the next entryAt of the same depth
// and size.
func (d *directReader) entryAt(p *packIndex, off int64, size int, keep bool, depth int) *bufio.Reader {
	w, ok := d.win.from(p, off)
	if !ok && !keep {
		return d.bufReader(depth, size, io.NewSectionReader(p.pack, off, 1<<62))
	}
	if !ok {
		n := windowSize
		if d.win.p == p && off >= d.win.off && off <= d.win.off+int64(len(d.win.data))+windowSize {
			n = aheadSize // just past the last window: reading forward
		}
		b := make([]byte, n)
		k, _ := p.pack.ReadAt(b, off) // a short read at the pack's end is fine
		d.win = window{p: p, off: off, data: b[:k]}
		d.windowReads++
		w = d.win.data
	}
	return d.bufReader(depth, size, io.MultiReader(bytes.NewReader(w), io.NewSectionReader(p.pack, off+int64(len(w)), 1<<62)))
}

// maxDeltaDepth is the deepest delta chain the reader follows.
const maxDeltaDepth = 64

// bufReader returns the reader kept for depth and size (64 for a header
// probe, else 4096), reset to read r.
func (d *directReader) bufReader(depth, size int, r io.Reader) *bufio.Reader {
	set := &d.readers
	if size <= 64 {
		set = &d.probeReaders
	}
	if depth < 0 || depth > maxDeltaDepth {
		return bufio.NewReaderSize(r, size)
	}
	if set[depth] == nil {
		set[depth] = bufio.NewReaderSize(r, size)
		return set[depth]
	}
	set[depth].Reset(r)
	return set[depth]
}

// close releases the files the reader opened.
func (d *directReader) close() {
	for _, p := range d.packs {
		p.unmap()
		p.idx.Close()
		p.pack.Close()
	}
	d.packs, d.opened, d.packsMod = nil, false, time.Time{}
	d.bases, d.probes, d.baseBytes = nil, nil, 0
	d.win = window{}
}

// inflate returns a zlib reader of r, reusing the reader's inflater.
func (d *directReader) inflate(r io.Reader) (io.Reader, error) {
	if d.zr != nil {
		if err := d.zr.(zlib.Resetter).Reset(r, nil); err != nil {
			return nil, err
		}
		return d.zr, nil
	}
	zr, err := zlib.NewReader(r)
	if err != nil {
		return nil, err
	}
	d.zr = zr
	return zr, nil
}

// caching reports whether this is a long operation, whose bases and
// headers are kept.
func (d *directReader) caching() bool { return d.reads >= directReadLimit }

// keepBase keeps the object at e, a delta's base.
func (d *directReader) keepBase(e packAt, t plumbing.ObjectType, data []byte) {
	if !d.caching() || len(data) > baseCacheBytes/8 {
		return
	}
	if _, ok := d.bases[e]; ok {
		return
	}
	if d.bases == nil || d.baseBytes+len(data) > baseCacheBytes {
		d.bases, d.baseBytes = map[packAt]cachedBase{}, 0
	}
	d.bases[e] = cachedBase{t: t, data: data}
	d.baseBytes += len(data)
}

// keepProbe keeps the header probed at e.
func (d *directReader) keepProbe(e packAt, c cachedProbe) {
	if !d.caching() {
		return
	}
	if d.probes == nil || len(d.probes) >= probeCacheEntries {
		d.probes = map[packAt]cachedProbe{}
	}
	d.probes[e] = c
}

// read returns the type and content of object id, or errDirect.
// A long operation (caching) looks in the packs first: most of what it
// reads is packed, and a failed open of a loose object costs a system call.
func (d *directReader) read(id plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	packedFirst := d.caching()
	if !packedFirst {
		if t, data, err := d.readLoose(id); err == nil {
			return t, data, nil
		}
	}
	d.reads++
	if !d.opened {
		d.openPacks()
	}
	for _, p := range d.packs {
		off, ok := p.find(id)
		if !ok {
			continue
		}
		t, data, err := d.readPacked(p, off, 0)
		if err != nil || objectID(t, data) != id {
			break
		}
		return t, data, nil
	}
	if packedFirst {
		if t, data, err := d.readLoose(id); err == nil {
			return t, data, nil
		}
	}
	if d.openPacks() { // a pack arrived since (a fetch, a repack)
		return d.read(id)
	}
	return 0, nil, errDirect
}

// hasPacked reports whether object id is in a pack (one that arrived since
// the packs were listed included). It makes no system call when the id is
// in a pack already listed, one (a stat of the pack directory) otherwise.
func (d *directReader) hasPacked(id plumbing.Hash) bool {
	if !d.opened {
		d.openPacks()
	}
	for attempt := 0; attempt < 2; attempt++ {
		for _, p := range d.packs {
			if _, ok := p.find(id); ok {
				return true
			}
		}
		if !d.openPacks() {
			break
		}
	}
	return false
}

// readLoose reads objects/xx/yyyy.
func (d *directReader) readLoose(id plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	hexID := id.String()
	f, err := os.Open(filepath.Join(d.objects, hexID[:2], hexID[2:]))
	if err != nil {
		return 0, nil, errDirect
	}
	defer f.Close()
	zr, err := zlib.NewReader(bufio.NewReader(f))
	if err != nil {
		return 0, nil, errDirect
	}
	br := bufio.NewReader(zr)
	header, err := br.ReadString(0)
	if err != nil || len(header) > 32 {
		return 0, nil, errDirect
	}
	typeName, sizeText, ok := strings.Cut(strings.TrimSuffix(header, "\x00"), " ")
	t, terr := plumbing.ParseObjectType(typeName)
	size, serr := strconv.Atoi(sizeText)
	if !ok || terr != nil || serr != nil || size < 0 || size > maxDirectObject {
		return 0, nil, errDirect
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(br, data); err != nil {
		return 0, nil, errDirect
	}
	if objectID(t, data) != id {
		return 0, nil, errDirect
	}
	return t, data, nil
}

// openPacks opens every version-2 index with its pack that is not open
// yet (a fetch or a repack adds packs while a Store is in use), and
// reports whether it opened any. The directory is listed again only when
// its modification time changed (a pack that arrives within the file
// system's timestamp granularity of the last listing may be missed: the
// callers then fall back to go-git or git, or write an object again).
func (d *directReader) openPacks() bool {
	dir := filepath.Join(d.objects, "pack")
	fi, err := os.Stat(dir)
	if err == nil && d.opened && fi.ModTime().Equal(d.packsMod) {
		return false
	}
	d.opened = true
	if err == nil {
		d.packsMod = fi.ModTime()
	}
	idxs, _ := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	added := false
	for _, name := range idxs {
		if slices.ContainsFunc(d.packs, func(p *packIndex) bool { return p.name == name }) {
			continue
		}
		p, err := openPackIndex(name)
		if err == nil {
			d.packs = append(d.packs, p)
			added = true
		}
	}
	return added
}

// probe returns the type and size of object id from its header alone: the
// loose object's first bytes, or the pack entry's header (for a delta, the
// first bytes of the delta, which give the result's size). Every object a
// packed delta is built on must be at most maxBase bytes (reading the
// delta means holding its base whole), else the error is a *TooLargeError
// for the base. errDirect: the reader cannot tell (the caller asks git).
//
// A long operation (caching) looks in the packs first (see read): an
// object both loose and packed is then judged by its packed header, which
// refuses it when a delta base is too large even if the loose copy is not.
func (d *directReader) probe(id plumbing.Hash, maxBase int64) (plumbing.ObjectType, int64, error) {
	if !d.opened {
		d.openPacks()
	}
	if d.caching() {
		for _, p := range d.packs {
			if off, ok := p.find(id); ok {
				return d.probePacked(p, off, maxBase, 0)
			}
		}
	}
	if t, size, err := d.probeLoose(id); err == nil {
		return t, size, nil
	}
	for attempt := 0; attempt < 2; attempt++ {
		for _, p := range d.packs {
			if off, ok := p.find(id); ok {
				return d.probePacked(p, off, maxBase, 0)
			}
		}
		if !d.openPacks() { // the object may be in a pack that arrived since
			break
		}
	}
	return 0, 0, errDirect
}

// probeLoose reads the header of objects/xx/yyyy.
func (d *directReader) probeLoose(id plumbing.Hash) (plumbing.ObjectType, int64, error) {
	hexID := id.String()
	f, err := os.Open(filepath.Join(d.objects, hexID[:2], hexID[2:]))
	if err != nil {
		return 0, 0, errDirect
	}
	defer f.Close()
	zr, err := zlib.NewReader(bufio.NewReaderSize(f, 512))
	if err != nil {
		return 0, 0, errDirect
	}
	defer zr.Close()
	var head [32]byte
	n, _ := io.ReadFull(zr, head[:])
	typeName, rest, ok := bytes.Cut(head[:n], []byte{' '})
	sizeText, _, ok2 := bytes.Cut(rest, []byte{0})
	t, terr := plumbing.ParseObjectType(string(typeName))
	size, serr := strconv.ParseInt(string(sizeText), 10, 64)
	if !ok || !ok2 || terr != nil || serr != nil || size < 0 {
		return 0, 0, errDirect
	}
	return t, size, nil
}

// probePacked reads the header of the pack entry at off (and of the
// entries a delta is built on).
func (d *directReader) probePacked(p *packIndex, off, maxBase int64, depth int) (plumbing.ObjectType, int64, error) {
	if depth > maxDeltaDepth || off < 12 {
		return 0, 0, errDirect
	}
	if c, ok := d.probes[packAt{p, off}]; ok && (c.maxBase < 0 || c.maxBase == maxBase) {
		return c.t, c.size, nil
	}
	br := d.entryAt(p, off, 64, depth == 0, depth)
	kind, size, err := entryHeader(br)
	if err != nil {
		return 0, 0, err
	}
	var baseOff int64
	switch kind {
	case 1, 2, 3, 4:
		d.keepProbe(packAt{p, off}, cachedProbe{plumbing.ObjectType(kind), int64(size), -1})
		return plumbing.ObjectType(kind), int64(size), nil
	case packOfsDelta:
		rel, err := ofsDeltaDistance(br)
		if err != nil {
			return 0, 0, err
		}
		baseOff = off - rel
	case packRefDelta:
		var baseID plumbing.Hash
		if _, err := io.ReadFull(br, baseID[:]); err != nil {
			return 0, 0, errDirect
		}
		boff, ok := p.find(baseID)
		if !ok {
			return 0, 0, errDirect // a base in another pack: git answers
		}
		baseOff = boff
	default:
		return 0, 0, errDirect
	}
	// The delta's own first bytes: the base's size and the result's.
	zr, err := d.inflate(br)
	if err != nil {
		return 0, 0, errDirect
	}
	var head [20]byte
	n, _ := io.ReadFull(zr, head[:])
	_, used, ok := uvarint(head[:n])
	if !ok {
		return 0, 0, errDirect
	}
	dst, _, ok := uvarint(head[used:n])
	if !ok || dst > 1<<62 {
		return 0, 0, errDirect
	}
	baseType, baseSize, err := d.probePacked(p, baseOff, maxBase, depth+1)
	if err != nil {
		return 0, 0, err
	}
	if baseSize > maxBase {
		return 0, 0, &TooLargeError{Size: baseSize, Limit: maxBase, Base: true}
	}
	d.keepProbe(packAt{p, off}, cachedProbe{baseType, int64(dst), maxBase})
	return baseType, int64(dst), nil
}

// readPackedWhole reads blob id in a long operation (caching) when the
// first pack holding it stores it whole and its compressed entry fits in
// windowSize bytes (a checkpoint file): one pread gives the header, whose
// size is checked against limit before anything is inflated, and the body.
// It stands for probe and read (one index lookup, one pread, no
// allocation besides the blob) and answers exactly what they would: with
// handled and a nil data, size is the header's size, over limit. It
// reports handled=false whenever it cannot be certain (not caching, not
// packed, a delta, another type, a short window, an id mismatch); the
// caller then probes and reads.
func (d *directReader) readPackedWhole(id plumbing.Hash, limit int64) (data []byte, size int64, handled bool) {
	p, off, ok := d.wholeEntry(id)
	if !ok {
		return nil, 0, false
	}
	return readWholeAt(p, off, id, limit)
}

// wholeEntry finds the pack entry readPackedWhole reads for id (ok false:
// it does not apply). It is the part of readPackedWhole that uses the
// reader's state (callers hold the Store's lock); readWholeAt, the rest,
// needs no lock, so that the look-ahead workers of a verify read, inflate
// and check their records at the same time.
func (d *directReader) wholeEntry(id plumbing.Hash) (*packIndex, int64, bool) {
	if d.noWhole {
		return nil, 0, false
	}
	return d.packedEntry(id)
}

// packedEntry finds id's pack entry in a long operation (caching), as read
// would look first (ok false: not caching, or in no pack). Callers hold the
// Store's lock; the entry is then read without it (readWholeAt,
// treeReader.read).
func (d *directReader) packedEntry(id plumbing.Hash) (*packIndex, int64, bool) {
	if !d.caching() {
		return nil, 0, false
	}
	if !d.opened {
		d.openPacks()
	}
	for _, p := range d.packs {
		if off, ok := p.find(id); ok {
			d.reads++
			return p, off, true
		}
	}
	return nil, 0, false
}

// wholeReader is readWholeAt's buffer, the reader its inflater reads and
// the inflater (zlib.Resetter), reused across reads (wholeReaders).
type wholeReader struct {
	buf []byte
	inflater
	id objectIDer
}

var wholeReaders = sync.Pool{New: func() any { return &wholeReader{buf: make([]byte, windowSize)} }}

// readWholeAt is readPackedWhole for the entry at off in p. It is safe for
// concurrent use (pack files are read with pread; its state is pooled).
func readWholeAt(p *packIndex, off int64, id plumbing.Hash, limit int64) ([]byte, int64, bool) {
	if off < 12 {
		return nil, 0, false
	}
	r := wholeReaders.Get().(*wholeReader)
	defer wholeReaders.Put(r)
	n, _ := p.pack.ReadAt(r.buf[:firstRead], off) // a short read at the pack's end is fine
	w := r.buf[:n]
	kind, size, used, ok := entryHeaderBytes(w)
	if !ok || kind != byte(plumbing.BlobObject) {
		return nil, 0, false
	}
	if int64(size) > limit {
		return nil, int64(size), true // what probe reports, and readBlob refuses
	}
	if size > maxDirectObject {
		return nil, 0, false
	}
	data := make([]byte, size)
	err := r.inflate(w[used:], data)
	if err != nil && n == firstRead {
		// The entry may go on past the first read: the rest of the window.
		m, _ := p.pack.ReadAt(r.buf[firstRead:], off+firstRead)
		err = r.inflate(r.buf[used:firstRead+m], data)
	}
	if err != nil || r.id.of(plumbing.BlobObject, data) != id {
		return nil, 0, false // past the window, or damaged: the general path decides
	}
	return data, int64(size), true
}

// firstRead is how much of an entry readWholeAt reads first: a checkpoint
// file's entry is 300–500 bytes compressed (the rest of the window is read
// only when the entry goes on).
const firstRead = 1024

// inflater inflates zlib streams held in memory, its reader reset for
// each (one goroutine at a time).
type inflater struct {
	in bytes.Reader
	fr io.ReadCloser // raw DEFLATE (flate.Resetter)
}

// errZlibHeader is a zlib stream header that RFC 1950 does not allow for
// git's objects (not DEFLATE, a window over 32 KiB, a bad check or a
// preset dictionary).
var errZlibHeader = errors.New("not a zlib stream")

// inflate inflates the zlib stream at the start of in into all of out. It
// checks the stream's header as zlib.NewReader does but not its Adler-32
// trailer: every caller checks what it inflated against its object id
// (SHA-1 over the same bytes), which a damaged stream cannot pass, and
// computing the Adler-32 took ~0.7% of a whole-branch verify.
func (r *inflater) inflate(in, out []byte) error {
	if len(in) < 2 || in[0]&0x0f != 8 || in[0]>>4 > 7 || in[1]&0x20 != 0 || (uint16(in[0])<<8|uint16(in[1]))%31 != 0 {
		return errZlibHeader
	}
	r.in.Reset(in[2:])
	if r.fr == nil {
		r.fr = flate.NewReader(&r.in)
	} else if err := r.fr.(flate.Resetter).Reset(&r.in, nil); err != nil {
		return err
	}
	_, err := io.ReadFull(r.fr, out)
	return err
}

// entryHeaderBytes is entryHeader on the bytes of an entry, also returning
// how many bytes the header took; false where entryHeader fails.
func entryHeaderBytes(w []byte) (kind byte, size uint64, used int, ok bool) {
	if len(w) == 0 {
		return 0, 0, 0, false
	}
	c := w[0]
	used = 1
	kind = (c >> 4) & 7
	size = uint64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if used >= len(w) || shift > 56 {
			return 0, 0, 0, false
		}
		c = w[used]
		used++
		size |= uint64(c&0x7f) << shift
	}
	return kind, size, used, true
}

// entryHeader reads a pack entry's type and (inflated) size.
func entryHeader(br *bufio.Reader) (byte, uint64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, 0, errDirect
	}
	kind := (c >> 4) & 7
	size := uint64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = br.ReadByte(); err != nil || shift > 56 {
			return 0, 0, errDirect
		}
		size |= uint64(c&0x7f) << shift
	}
	return kind, size, nil
}

// ofsDeltaDistance reads an offset delta's distance back to its base.
func ofsDeltaDistance(br *bufio.Reader) (int64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, errDirect
	}
	rel := int64(c & 0x7f)
	for c&0x80 != 0 {
		if c, err = br.ReadByte(); err != nil || rel > 1<<48 {
			return 0, errDirect
		}
		rel = (rel+1)<<7 | int64(c&0x7f)
	}
	return rel, nil
}

// uvarint decodes a delta header's little-endian base-128 size.
func uvarint(b []byte) (v uint64, n int, ok bool) {
	for shift := 0; n < len(b) && shift < 64; shift += 7 {
		c := b[n]
		n++
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, n, true
		}
	}
	return 0, 0, false
}

func openPackIndex(idxName string) (*packIndex, error) {
	idx, err := os.Open(idxName)
	if err != nil {
		return nil, err
	}
	var head [8 + 1024]byte
	if _, err := idx.ReadAt(head[:], 0); err != nil || !bytes.Equal(head[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		idx.Close()
		return nil, errDirect
	}
	pack, err := os.Open(strings.TrimSuffix(idxName, ".idx") + ".pack")
	if err != nil {
		idx.Close()
		return nil, err
	}
	p := &packIndex{name: idxName, idx: idx, pack: pack}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(head[8+4*i:])
	}
	p.count = p.fanout[255]
	p.mapIndex()
	return p, nil
}

// mapIndex maps the .idx file when it holds its whole name and offset
// tables (else lookups read it with ReadAt, which fail on a short file).
func (p *packIndex) mapIndex() {
	st, err := p.idx.Stat()
	if err != nil || st.Size() < int64(8+1024)+int64(p.count)*24 || st.Size() > 1<<40 {
		return
	}
	m, err := syscall.Mmap(int(p.idx.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err == nil {
		p.mapped = m
	}
}

func (p *packIndex) unmap() {
	if p.mapped != nil {
		_ = syscall.Munmap(p.mapped)
		p.mapped = nil
	}
}

// readIndex reads len(b) bytes of the .idx file at off.
func (p *packIndex) readIndex(b []byte, off int64) error {
	if p.mapped == nil {
		_, err := p.idx.ReadAt(b, off)
		return err
	}
	if off < 0 || off+int64(len(b)) > int64(len(p.mapped)) {
		return io.ErrUnexpectedEOF
	}
	copy(b, p.mapped[off:])
	return nil
}

// nameAt returns the i-th object id of the index: a slice of the mapped
// file where it is mapped (no copy: a whole-branch verify makes a few of
// these per object it reads), else read into a new buffer.
func (p *packIndex) nameAt(i uint32) ([]byte, bool) {
	const names = 8 + 1024
	off := names + int64(i)*20
	if p.mapped != nil {
		if off+20 > int64(len(p.mapped)) {
			return nil, false
		}
		return p.mapped[off : off+20 : off+20], true
	}
	name := make([]byte, 20)
	return name, p.readIndex(name, off) == nil
}

// find returns the pack offset of id, searching the index file's sorted
// names within id's fan-out bucket. Object ids are SHA-1 hashes, spread
// evenly, so each probe first guesses where id would sit between the
// names that bound the range (interpolation: ~3 probes where bisection
// takes ~17 at 300k objects, each probe likely a cache miss); after
// maxGuesses guesses it bisects, so that no spread of names costs more
// than a binary search plus maxGuesses probes.
func (p *packIndex) find(id plumbing.Hash) (int64, bool) {
	lo := uint32(0)
	if id[0] > 0 {
		lo = p.fanout[id[0]-1]
	}
	hi := p.fanout[id[0]]
	// key is the 8 bytes after the bucket's byte; [kLo, kHi] bounds the
	// keys of names[lo:hi].
	key := binary.BigEndian.Uint64(id[1:9])
	kLo, kHi := uint64(0), ^uint64(0)
	for guesses := 0; lo < hi; guesses++ {
		mid := lo + (hi-lo)/2
		if guesses < maxGuesses {
			mid = interpolate(lo, hi, key, kLo, kHi)
		}
		name, ok := p.nameAt(mid)
		if !ok {
			return 0, false
		}
		switch c := bytes.Compare(name, id[:]); {
		case c == 0:
			return p.offset(mid)
		case c < 0:
			lo, kLo = mid+1, binary.BigEndian.Uint64(name[1:9])
		default:
			hi, kHi = mid, binary.BigEndian.Uint64(name[1:9])
		}
	}
	return 0, false
}

// maxGuesses is how many interpolated probes find makes before it bisects.
const maxGuesses = 4

// interpolate guesses the index in [lo, hi) of key, the names there having
// keys in [kLo, kHi]: lo + (hi-lo)·(key-kLo)/(kHi-kLo), clamped.
func interpolate(lo, hi uint32, key, kLo, kHi uint64) uint32 {
	if key <= kLo || kHi <= kLo {
		return lo
	}
	if key >= kHi {
		return hi - 1
	}
	// (key-kLo)·n < (kHi-kLo)·n, so the quotient is below n: no overflow.
	n := uint64(hi - lo)
	h, l := bits.Mul64(key-kLo, n)
	q, _ := bits.Div64(h, l, kHi-kLo)
	return lo + uint32(min(q, n-1))
}

// offset reads the pack offset of the i-th object (4-byte table, with the
// 8-byte table for offsets past 2 GiB).
func (p *packIndex) offset(i uint32) (int64, bool) {
	n := int64(p.count)
	small := int64(8+1024) + n*20 + n*4
	var b [8]byte
	if err := p.readIndex(b[:4], small+int64(i)*4); err != nil {
		return 0, false
	}
	v := binary.BigEndian.Uint32(b[:4])
	if v&0x80000000 == 0 {
		return int64(v), true
	}
	large := small + n*4 + int64(v&0x7fffffff)*8
	if err := p.readIndex(b[:], large); err != nil {
		return 0, false
	}
	off := binary.BigEndian.Uint64(b[:])
	if off > 1<<62 {
		return 0, false
	}
	return int64(off), true
}

// Pack entry types.
const (
	packOfsDelta = 6
	packRefDelta = 7
)

// readPacked reads the entry at off, applying deltas (at most 64 deep).
func (d *directReader) readPacked(p *packIndex, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > maxDeltaDepth || off < 12 {
		return 0, nil, errDirect
	}
	if c, ok := d.bases[packAt{p, off}]; ok {
		if depth == 0 {
			return c.t, bytes.Clone(c.data), nil
		}
		return c.t, c.data, nil
	}
	br := d.entryAt(p, off, 4096, depth == 0, depth)
	kind, size, err := entryHeader(br)
	if err != nil {
		return 0, nil, err
	}
	if size > maxDirectObject {
		return 0, nil, errDirect
	}
	var baseType plumbing.ObjectType
	var base []byte
	switch kind {
	case 1, 2, 3, 4:
	case packOfsDelta:
		rel, err := ofsDeltaDistance(br)
		if err != nil {
			return 0, nil, err
		}
		if baseType, base, err = d.readPacked(p, off-rel, depth+1); err != nil {
			return 0, nil, err
		}
		d.keepBase(packAt{p, off - rel}, baseType, base)
	case packRefDelta:
		var baseID plumbing.Hash
		if _, err := io.ReadFull(br, baseID[:]); err != nil {
			return 0, nil, errDirect
		}
		boff, ok := p.find(baseID)
		if !ok {
			return 0, nil, errDirect
		}
		if baseType, base, err = d.readPacked(p, boff, depth+1); err != nil {
			return 0, nil, err
		}
		d.keepBase(packAt{p, boff}, baseType, base)
	default:
		return 0, nil, errDirect
	}
	zr, err := d.inflate(br)
	if err != nil {
		return 0, nil, errDirect
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(zr, data); err != nil {
		return 0, nil, errDirect
	}
	if kind <= 4 {
		return plumbing.ObjectType(kind), data, nil
	}
	out, err := applyDelta(base, data)
	if err != nil {
		return 0, nil, err
	}
	return baseType, out, nil
}

// applyDelta applies a git delta to base.
func applyDelta(base, delta []byte) ([]byte, error) {
	i := 0
	varint := func() (uint64, bool) {
		var v uint64
		for shift := 0; i < len(delta) && shift < 64; shift += 7 {
			c := delta[i]
			i++
			v |= uint64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	// operand reads a copy operand: the bytes whose bits are set among the
	// low count bits of flags, least significant first.
	operand := func(flags byte, count int) (uint64, bool) {
		var v uint64
		for b := 0; b < count; b++ {
			if flags&(1<<b) != 0 {
				if i >= len(delta) {
					return 0, false
				}
				v |= uint64(delta[i]) << (8 * b)
				i++
			}
		}
		return v, true
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != uint64(len(base)) || dstSize > maxDirectObject {
		return nil, errDirect
	}
	out := make([]byte, 0, dstSize)
	for i < len(delta) {
		op := delta[i]
		i++
		switch {
		case op&0x80 != 0:
			off, okOff := operand(op, 4) // offset: bits 0-3
			n, okN := operand(op>>4, 3)  // size: bits 4-6
			if !okOff || !okN {
				return nil, errDirect
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) || uint64(len(out))+n > dstSize {
				return nil, errDirect
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			n := int(op)
			if i+n > len(delta) || uint64(len(out)+n) > dstSize {
				return nil, errDirect
			}
			out = append(out, delta[i:i+n]...)
			i += n
		default:
			return nil, errDirect
		}
	}
	if uint64(len(out)) != dstSize {
		return nil, fmt.Errorf("%w: delta result size", errDirect)
	}
	return out, nil
}

// objectID is git's id of an object: SHA-1 of "<type> <size>\0<content>".
func objectID(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write([]byte(t.String() + " " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	return id
}
