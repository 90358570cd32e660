package model

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/limits"
)

// modelWith returns a metric model file whose classes are the given JSON.
func modelWith(classes string) string {
	return `{"format": "psdlearn-model", "version": 2, "kind": "metric", "metric": {"dim": 2, "m": [[1,0],[0,1]]}, "classes": ` + classes + `}`
}

// TestLoadRefusesNonLabels checks that a model file's class names are
// labels: missing-value markers, control characters and names longer than
// the label limit are refused, the error short whatever the name's length.
func TestLoadRefusesNonLabels(t *testing.T) {
	if _, err := Load(strings.NewReader(modelWith(`["a","b"]`))); err != nil {
		t.Fatalf("good model: %v", err)
	}
	for _, cls := range []string{`["0","NaN"]`, `["0",""]`, `["0","1\u0000"]`, `["0","` + strings.Repeat("L", 10<<20) + `"]`} {
		_, err := Load(strings.NewReader(modelWith(cls)))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "class 1") || len(err.Error()) > 200 {
			t.Errorf("classes %.30s: %.300v", cls, err)
		}
	}
}

// TestLoadBounded checks that a model file is read within bounds: binary
// data is named as such, and a file whose JSON values would not fit the
// memory budget is refused before they are decoded.
func TestLoadBounded(t *testing.T) {
	if _, err := Load(bytes.NewReader(make([]byte, 1<<20))); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "binary data") {
		t.Errorf("zeros: %v", err)
	}
	defer limits.SetMaxMemory(limits.SetMaxMemory(64 << 20))
	// 2 MiB of empty arrays: about 1.4 million values, some 90 MiB decoded.
	f := `{"format": "psdlearn-model", "version": 2, "kind": "metric", "info": {"x": [` + strings.Repeat("[],", 700000) + `[]]}}`
	if _, err := Load(strings.NewReader(f)); !errors.Is(err, limits.ErrMemory) {
		t.Errorf("a file of empty arrays: %v, want limits.ErrMemory", err)
	}
	// More than a quarter of the budget is not read.
	big := strings.NewReader(`{"format": "psdlearn-model", "info": {"x": "` + strings.Repeat("a", 17<<20) + `"}}`)
	if _, err := Load(big); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a 17 MiB file under a 64 MiB budget: %v", err)
	}
}
