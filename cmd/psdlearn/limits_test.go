package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestGCPercent checks that the command line runs the garbage collector at
// gcPercent when $GOGC is not set (and leaves $GOGC's value alone when it
// is).
func TestGCPercent(t *testing.T) {
	got := debug.SetGCPercent(100)
	debug.SetGCPercent(got)
	if v, set := os.LookupEnv("GOGC"); set {
		t.Skipf("GOGC=%s is set: the command line keeps it", v)
	}
	if got != gcPercent {
		t.Errorf("GC percent %d, want %d", got, gcPercent)
	}
}
