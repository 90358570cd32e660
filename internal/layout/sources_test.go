package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// walkFiles calls visit with the path from the module root (slash-
// separated) and the file system path of every file whose name keep
// accepts, skipping hidden directories, testdata, third_party and the
// directories skipDir names. It fails the test if it visits no file.
func walkFiles(t *testing.T, keep func(name string) bool, skipDir func(rel string) bool, visit func(rel, path string) error) {
	t.Helper()
	base := root(t)
	files := 0
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "third_party" || skipDir(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !keep(d.Name()) {
			return nil
		}
		files++
		return visit(rel, path)
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no file to check under the module root")
	}
}

// walkSources parses every non-test Go file of the module (skipping hidden
// directories, testdata, third_party and the directories skipDir names by
// their slash-separated path from the root) and calls visit with its path
// from the root. It fails the test if it finds no file.
func walkSources(t *testing.T, mode parser.Mode, skipDir func(rel string) bool, visit func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	goSource := func(name string) bool {
		return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")
	}
	walkFiles(t, goSource, skipDir, func(rel, path string) error {
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		visit(rel, fset, f)
		return nil
	})
}
