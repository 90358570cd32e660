package engine_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// TestConformance runs the conformance suite on every registered backend
// (on the one $PSDLEARN_BACKEND names, if set).
func TestConformance(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) { enginetest.Run(t, b) })
	}
}

// TestNativeAgreesWithGo checks that the native and pure-Go backends give the
// same numbers (skipped in builds without the native backend).
func TestNativeAgreesWithGo(t *testing.T) {
	if len(enginetest.Backends(t)) < 2 {
		t.Skip("one backend selected ($PSDLEARN_BACKEND)")
	}
	native, err := engine.Get("native")
	if err != nil {
		t.Skip("native backend not compiled in")
	}
	g, err := engine.Get("go")
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Agree(t, native, g)
}

func TestRegistry(t *testing.T) {
	if _, err := engine.Get("no-such-backend"); err == nil {
		t.Error("Get of an unknown backend gave no error")
	}
	t.Setenv(engine.EnvBackend, "go")
	if got := engine.Default().Name(); got != "go" {
		t.Errorf("Default with %s=go is %q", engine.EnvBackend, got)
	}
	if got := engine.Or(nil).Name(); got != "go" {
		t.Errorf("Or(nil) with %s=go is %q", engine.EnvBackend, got)
	}
}
