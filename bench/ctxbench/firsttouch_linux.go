package main

// The first-touch floor of the session benchmark (-touch-child): what the
// machine itself charges a fresh process for the memory a derivation
// needs, with no Go heap and no scrypt: map the working set's size,
// advise it for huge pages as the session package does, write one byte
// per 4 KiB page, and report the CPU. On a virtual machine whose balloon
// reports free pages to the host, memory the host has taken back is
// faulted in again on the host's side at the first touch, which the guest
// sees as system time; its spread from process to process is the spread
// every fresh derivation carries.

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// firstTouch maps size bytes, advises them for transparent huge pages,
// touches every 4 KiB page once and returns the CPU (user and system) and
// the system CPU alone that it took, and the minor page faults.
func firstTouch(size int) (cpu, sys time.Duration, faults int64, err error) {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("map %d bytes: %w", size, err)
	}
	defer unix.Munmap(b)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only, as the session package gives it
	var r0, r1 unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &r0); err != nil {
		return 0, 0, 0, err
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if err := unix.Getrusage(unix.RUSAGE_SELF, &r1); err != nil {
		return 0, 0, 0, err
	}
	user := time.Duration(r1.Utime.Nano() - r0.Utime.Nano())
	sys = time.Duration(r1.Stime.Nano() - r0.Stime.Nano())
	return user + sys, sys, r1.Minflt - r0.Minflt, nil
}
