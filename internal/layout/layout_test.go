// Package layout tests the dependency structure the architecture promises:
// what a model-serving program links.
package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bindings are the packages that hold cgo code (and their pure-Go twins),
// then engine, whose interfaces they implement.
var bindings = []string{"lapack", "arpack", "lbfgsb", "lp", "engine"}

// root returns the module's root directory.
func root(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

func goCmd(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	return p
}

// TestAlgorithmsDependOnNoBinding checks with `go list -deps` that no
// algorithm and none of the shared packages reaches a binding package, even
// indirectly: they call the engine's interfaces, and a program chooses the
// implementations it links by importing engine/backends.
func TestAlgorithmsDependOnNoBinding(t *testing.T) {
	goBin := goCmd(t)
	cmd := exec.Command(goBin, "list", "-f", `{{.ImportPath}}:{{join .Deps " "}}`,
		"./algos/...", "./engine", "./data", "./constraints", "./eval", "./limits", "./errs")
	cmd.Dir = root(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 8 {
		t.Fatalf("go list listed %d packages", len(lines))
	}
	for _, line := range lines {
		pkg, deps, _ := strings.Cut(line, ":")
		for _, dep := range strings.Fields(deps) {
			for _, b := range bindings[:4] {
				if dep == "github.com/psdlearn/psdlearn/"+b {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// TestServingDependsOnNoBinding checks with `go list -deps` that loading and
// applying models — packages model, preprocess, sparse, serve and the
// example service — reaches no binding package and not the engine, so
// their numbers cannot depend on the backend and they link no native
// library.
func TestServingDependsOnNoBinding(t *testing.T) {
	goBin := goCmd(t)
	for _, pkg := range []string{"./model", "./preprocess", "./sparse", "./serve", "./examples/serve"} {
		cmd := exec.Command(goBin, "list", "-deps", pkg)
		cmd.Dir = root(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range bindings {
				if dep == "github.com/psdlearn/psdlearn/"+b || strings.HasPrefix(dep, "github.com/psdlearn/psdlearn/"+b+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// TestServingLinksNoNativeLibrary builds the example service with cgo on and
// checks with ldd that it links none of the native libraries behind the
// engine.
func TestServingLinksNoNativeLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	goBin := goCmd(t)
	ldd, err := exec.LookPath("ldd")
	if err != nil {
		t.Skip("ldd not found")
	}
	bin := filepath.Join(t.TempDir(), "serve")
	build := exec.Command(goBin, "build", "-o", bin, "./examples/serve")
	build.Dir = root(t)
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/serve: %v\n%s", err, out)
	}
	out, _ := exec.Command(ldd, bin).CombinedOutput() // "not a dynamic executable" exits 1
	native := regexp.MustCompile(`(?i)openblas|lapack|arpack|clp|coinutils|gfortran`)
	if m := native.FindAllString(string(out), -1); len(m) > 0 {
		t.Errorf("the model-serving binary links %v:\n%s", m, out)
	}
	t.Logf("ldd: %s", strings.TrimSpace(string(out)))
}

// quickStart is the README's Go quick start as a program of a separate
// module: fit, save, load, transform.
const quickStart = `package main

import (
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/model"
)

func main() {
	ctx, d := context.Background(), must(datasets.Open("iris"))
	x, y, rows := d.X, d.Y, d.X
	m, err := psdlearn.BoostMetric{Common: psdlearn.Common{Standardize: true}}.Fit(ctx, x, y)
	check(err)
	check(m.SaveFile("metric.json"))
	served, err := model.LoadFile("metric.json")
	check(err)
	z, err := served.Transform(rows)
	check(err)
	n, r := z.Dims()
	fmt.Println(n, r > 0)
}

func must[T any](v T, err error) T { check(err); return v }

func check(err error) {
	if err != nil {
		panic(err)
	}
}
`

// TestQuickStartModule builds and runs the README's quick start as a
// separate module that requires psdlearn (replaced by this checkout), the
// way a user's program would.
func TestQuickStartModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	goBin := goCmd(t)
	dir := t.TempDir()
	// The module requires psdlearn and, as a user's module would after
	// go get, psdlearn's own requirements.
	own, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := strings.Replace(string(own), "module github.com/psdlearn/psdlearn", "module quickstart", 1) +
		"\nrequire github.com/psdlearn/psdlearn v0.0.0\n\nreplace github.com/psdlearn/psdlearn => " + root(t) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(quickStart), 0o644); err != nil {
		t.Fatal(err)
	}
	// The dependencies come from the module cache the checkout's own build
	// filled, verified against the checkout's go.sum: no network.
	sum, err := os.ReadFile(filepath.Join(root(t), "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	for _, args := range [][]string{{"run", "."}} {
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if args[0] == "run" && strings.TrimSpace(string(out)) != "150 true" {
			t.Errorf("quick start printed %q, want \"150 true\"", out)
		}
	}
}
