package datasets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoModRequiresGoMNIST checks that psdlearn's go.mod requires the
// version of the MNIST module that MNISTDir resolves, so that a build
// leaves exactly those files in the module cache.
func TestGoModRequiresGoMNIST(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), GoMNISTModule+" "+GoMNISTVersion) {
		t.Errorf("go.mod does not require %s %s", GoMNISTModule, GoMNISTVersion)
	}
}

// TestMNISTDirEnv checks the override and its error on a directory without
// the files.
func TestMNISTDirEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(MNISTDirEnv, dir)
	_, err := MNISTDir(context.Background())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), MNISTFiles[0]) {
		t.Errorf("empty directory: %v", err)
	}
	for _, f := range MNISTFiles {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := MNISTDir(context.Background()); err != nil || got != dir {
		t.Errorf("MNISTDir = %q, %v; want %q", got, err, dir)
	}
	// Empty files are found but are not IDX files: a clear error, no panic.
	if _, err := MNIST(context.Background()); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("empty IDX files: %v", err)
	}
}

// TestMNISTUnresolvable: without the go command and without the override,
// MNIST is unavailable with an error saying what to do.
func TestMNISTUnresolvable(t *testing.T) {
	t.Setenv(MNISTDirEnv, "")
	t.Setenv("PATH", t.TempDir())
	_, err := Open("mnist")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), MNISTDirEnv) {
		t.Errorf("Open(mnist) without go: %v", err)
	}
}

// TestMNIST reads the 70,000 digits when the module can be resolved (the
// module cache or the proxy); it is skipped otherwise and in -short mode.
func TestMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 55 MB of IDX files")
	}
	d, err := MNIST(context.Background())
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 70000 || d.Dim() != 784 || len(d.Classes) != 10 {
		t.Fatalf("mnist: %d×%d, %d classes", d.Len(), d.Dim(), len(d.Classes))
	}
	counts := d.ClassCounts()
	// The class sizes of the training and test files together.
	want := []int{6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958}
	for c, n := range want {
		if counts[c] != n || d.Classes[c] != string(rune('0'+c)) {
			t.Errorf("class %s: %d rows, want %d", d.Classes[c], counts[c], n)
		}
	}
	// The first test image is a 7, row 60,000.
	if d.Classes[d.Y[60000]] != "7" || d.Classes[d.Y[0]] != "5" {
		t.Errorf("rows 0 and 60000 are %s and %s, want 5 and 7", d.Classes[d.Y[0]], d.Classes[d.Y[60000]])
	}
}
