//go:build !linux

package session

// prepareScryptMemory does nothing outside Linux (see hugepages_linux.go).
func prepareScryptMemory(logN int) {}
