package main

import "testing"

// TestFirstTouchFaultsEveryPage: the first-touch floor really touches the
// memory it maps: at least one fault per 2 MiB (a huge page each) and at
// most one per 4 KiB; its system CPU is part of its CPU.
func TestFirstTouchFaultsEveryPage(t *testing.T) {
	const size = 16 << 20
	cpu, sys, faults, err := firstTouch(size)
	if err != nil {
		t.Fatal(err)
	}
	if faults < size/(2<<20) || faults > size/4096+64 {
		t.Errorf("%d page faults touching %d bytes, want between %d and %d", faults, size, size/(2<<20), size/4096+64)
	}
	if sys > cpu {
		t.Errorf("system CPU %v exceeds CPU %v", sys, cpu)
	}
}
