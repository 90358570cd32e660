package layout

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestDependenciesPointDown: the algorithms (algos/...) import nothing of
// the experiment protocol, the evaluation, the model files, the front door
// or the distributed mode — only the layers below them (engine, sparse,
// constraints, data and their helpers); the front door (the root package)
// imports neither the distributed mode nor the command line; and the
// command line reaches the library through the root package.
func TestDependenciesPointDown(t *testing.T) {
	const mod = "github.com/psdlearn/psdlearn"
	above := []string{"train", "eval", "model", "bench", "distributed", "cmd"}
	isAbove := func(imp string) bool {
		if imp == mod {
			return true
		}
		for _, a := range above {
			if p := mod + "/" + a; imp == p || strings.HasPrefix(imp, p+"/") {
				return true
			}
		}
		return false
	}
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", mod+"/algos/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err) // no go command: nothing to check here
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		n++
		for _, imp := range p.Imports {
			if isAbove(imp) {
				t.Errorf("%s imports %s, a layer above the algorithms", p.ImportPath, imp)
			}
		}
	}
	if n < 5 {
		t.Fatalf("go list found %d algorithm packages", n)
	}
	// The front door sits below the execution modes and the command line
	// that use it: the root package imports none of them.
	root, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", mod).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range strings.Fields(string(root)) {
		for _, a := range []string{"distributed", "cmd", "bench"} {
			if p := mod + "/" + a; imp == p || strings.HasPrefix(imp, p+"/") {
				t.Errorf("the root package imports %s, a layer above it", imp)
			}
		}
	}
	deps, err := exec.Command("go", "list", "-deps", mod+"/cmd/psdlearn").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains("\n"+string(deps), "\n"+mod+"\n") {
		t.Error("cmd/psdlearn does not reach the library through the root package")
	}
}
