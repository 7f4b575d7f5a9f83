//go:build linux

package session

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the transparent huge page size on amd64 and arm64 Linux.
const hugePage = 2 << 20

var pageSize = os.Getpagesize()

var (
	scryptPrepMu    sync.Mutex
	scryptPrepBytes int // the largest scrypt working set prepared so far
)

// prepareScryptMemory asks Linux to back the working set of a scrypt
// derivation at work factor logN (128·r·N bytes, 256 MiB at 18) with
// transparent huge pages, where they are enabled only on request
// (transparent_hugepage=madvise, the common default).
//
// scrypt reads that memory at random, so with 4 KiB pages most reads miss
// the TLB, and a fresh process also takes 65,536 page faults to fill it.
// The working set is allocated inside golang.org/x/crypto/scrypt, out of
// reach; instead this allocates a slightly larger block, marks it
// MADV_HUGEPAGE without touching it, and frees it, so that the
// runtime's first-fit page allocator hands the same addresses to scrypt's
// allocation. Measured on the 2-core VM: a fresh process's derivation at
// 18 took 2.0–2.5 s CPU and 66k faults before, 1.2–1.7 s and ~500 faults
// after. It changes no byte of any output. The block is made and advised
// once per process (again only for a larger work factor); before every
// later derivation the heap is collected, so that the previous
// derivation's working set, dead but not yet freed (the collector's goal
// is far above a small command's heap), is what the next one reuses:
// resident, in the advised block. Without that, a process's second
// derivation got fresh 4 KiB pages (65k faults) and cost 2.4–3.1 s of CPU
// at 18 against 0.6–0.7 s for the first and the third (a push runs three,
// a pull two). If the addresses are not reused, or the kernel has no huge
// pages, nothing is lost but the advice.
//
// The advised block is freed and at once returned to the kernel
// (debug.FreeOSMemory), not only collected: it was never touched, so
// returning it costs only the madvise calls, and it leaves the runtime's
// background scavenger nothing to do. After a plain collection the
// scavenger began returning the block 64 KiB at a time, and the pages it
// was working on count as allocated meanwhile; when scrypt's allocation
// came while it worked more than the block's spare 8 MiB below its end,
// the allocation no longer fitted and went past the block, onto 4 KiB
// pages (2 of 100 fresh processes; `session list` then took 0.8–1.4 s of
// CPU instead of ~0.62 s). A later derivation keeps the plain collection:
// returning a resident working set would make the next derivation fault
// it in again (~60 ms of CPU each, measured on push).
func prepareScryptMemory(logN int) {
	if logN < 14 || logN > MaxWorkFactor {
		return // small derivations gain nothing
	}
	size := 1024 << logN // 128 · r(8) · N
	scryptPrepMu.Lock()
	defer scryptPrepMu.Unlock()
	if size <= scryptPrepBytes {
		runtime.GC() // frees the previous derivation's working set for this one
		return
	}
	scryptPrepBytes = size
	buf := make([]byte, size+4*hugePage)
	// A large allocation starts on a page; madvise wants page bounds.
	if start := uintptr(unsafe.Pointer(unsafe.SliceData(buf))); start%uintptr(pageSize) == 0 {
		_ = unix.Madvise(buf[:len(buf)/pageSize*pageSize], unix.MADV_HUGEPAGE) // advice only
	}
	runtime.KeepAlive(buf)
	buf = nil
	debug.FreeOSMemory() // frees the block and returns it now; see above
}
