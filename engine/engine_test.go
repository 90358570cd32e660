package engine_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// TestConformance runs the conformance suite on every registered backend.
func TestConformance(t *testing.T) {
	for _, name := range engine.Names() {
		b, err := engine.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { enginetest.Run(t, b) })
	}
}

// TestNativeAgreesWithGo checks that the native and pure-Go backends give the
// same numbers (skipped in builds without the native backend).
func TestNativeAgreesWithGo(t *testing.T) {
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
