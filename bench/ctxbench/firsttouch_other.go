//go:build !linux

package main

import (
	"errors"
	"time"
)

// firstTouch is measured on Linux only (see firsttouch_linux.go).
func firstTouch(size int) (cpu, sys time.Duration, faults int64, err error) {
	return 0, 0, 0, errors.New("the first-touch floor is measured on Linux only")
}
