package datasets

import (
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
)

func TestOpenAll(t *testing.T) {
	// The shapes from PROVENANCE.md.
	want := map[string][3]int{
		"iris": {150, 4, 3}, "wine": {178, 13, 3}, "glass": {214, 9, 6}, "sonar": {208, 60, 2},
		"ionosphere": {351, 33, 2}, "vehicle": {846, 18, 4}, "vowel": {990, 10, 11},
		"diabetes": {768, 8, 2}, "letters": {20000, 16, 26}, "balance": {625, 4, 3},
	}
	names := Names()
	if len(names) != len(want) {
		t.Errorf("Names() = %v", names)
	}
	for _, n := range names {
		d, err := Open(n)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[n]
		if !ok {
			t.Errorf("unexpected data set %q", n)
			continue
		}
		if d.Len() != w[0] || d.Dim() != w[1] || len(d.Classes) != w[2] {
			t.Errorf("%s: %d×%d with %d classes, want %v", n, d.Len(), d.Dim(), len(d.Classes), w)
		}
		if err := d.Validate(); err != nil {
			t.Error(err)
		}
		if !strings.Contains(Provenance, "| "+n+".csv |") && !strings.Contains(Provenance, "| "+n+" |") {
			t.Errorf("%s has no provenance row", n)
		}
	}
}

func TestBuiltinScheme(t *testing.T) {
	d, err := data.Load("builtin:iris", data.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "iris" || d.Len() != 150 {
		t.Errorf("builtin:iris = %q with %d rows", d.Name, d.Len())
	}
	if _, err := data.Load("builtin:nope", data.LoadOptions{}); err == nil || !strings.Contains(err.Error(), "available: balance, diabetes") {
		t.Errorf("unknown set: %v", err)
	}
	if _, err := Open("../datasets/iris"); err == nil {
		t.Error("path traversal accepted")
	}
}
