package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUserMistakes runs every command with a user mistake and requires a
// non-zero exit, a single-line message on stderr (no Go panic trace), and,
// with --json, exactly one JSON object with an "error" field on stdout.
func TestUserMistakes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nanCSV := write("nan.csv", "a,b,label\n1,2,x\n3,NaN,y\n4,5,x\n6,7,y\n")
	infCSV := write("inf.csv", "a,b,label\n1,2,x\n3,Inf,y\n4,5,x\n6,7,y\n")
	ragged := write("ragged.csv", "a,b,label\n1,2,x\n3,y\n4,5,x\n")
	empty := write("empty.csv", "")
	oneClass := write("one.csv", "a,b,label\n1,2,x\n3,4,x\n5,6,x\n7,8,x\n9,1,x\n2,2,x\n")
	badModel := write("bad.json", `{"format":"psdlearn-model","version":1,"kind":"metric","metric":{"dim":2,"m":[1,2,2,1]}}`)
	notJSON := write("notjson.json", "not a model")
	unknownExt := write("data.xyz", "1 2 3\n")

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"unknown command", []string{"frobnicate"}},
		{"train without algo", []string{"train", "--data", "builtin:iris"}},
		{"train unknown algo", []string{"train", "--algo", "nope", "--data", "builtin:iris"}},
		{"train missing file", []string{"train", "--algo", "boostmetric", "--data", filepath.Join(dir, "missing.csv")}},
		{"train NaN", []string{"train", "--algo", "boostmetric", "--data", nanCSV}},
		{"train Inf", []string{"train", "--algo", "frobmetric", "--data", infCSV}},
		{"train ragged rows", []string{"train", "--algo", "boostmetric", "--data", ragged}},
		{"train empty file", []string{"train", "--algo", "boostmetric", "--data", empty}},
		{"train single class", []string{"train", "--algo", "frobmetric", "--data", oneClass}},
		{"train unknown format", []string{"train", "--algo", "boostmetric", "--data", unknownExt}},
		{"train bad split", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--split", "0.7,abc"}},
		{"train rows beyond data", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--split", "rows:100,40,40"}},
		{"train k zero", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--k", "0"}},
		{"train pca too large", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--pca", "9"}},
		{"train bad backend", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--backend", "cuda"}},
		{"train bad C", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "1,x"}},
		{"train bad loss", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--loss", "square"}},
		{"train unknown flag", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--frob", "1"}},
		{"train unknown builtin", []string{"train", "--algo", "boostmetric", "--data", "builtin:nope"}},
		{"eval missing model", []string{"eval", "--model", filepath.Join(dir, "none.json"), "--data", "builtin:iris"}},
		{"eval non-PSD model", []string{"eval", "--model", badModel, "--data", "builtin:iris"}},
		{"eval not a model", []string{"eval", "--model", notJSON, "--data", "builtin:iris"}},
		{"transform bad model", []string{"transform", "--model", badModel, "--data", "builtin:iris", "--out", filepath.Join(dir, "t.csv")}},
		{"transform bad model to stdout", []string{"transform", "--model", badModel, "--data", "builtin:iris"}},
		{"cluster bad loss", []string{"cluster", "--algo", "simplenpkl", "--loss", "cubic", "--data", "builtin:iris"}},
		{"cluster unknown algo", []string{"cluster", "--algo", "spectral", "--data", "builtin:iris"}},
		{"cluster single class", []string{"cluster", "--algo", "simplenpkl", "--data", oneClass}},
		{"kernel unknown algo", []string{"kernel", "--algo", "svm"}},
		{"bench unknown suite", []string{"bench", "--suite", "gpu"}},
		{"demo bad backend", []string{"demo", "--backend", "cuda"}},
	} {
		for _, asJSON := range []bool{false, true} {
			args := tc.args
			if asJSON {
				args = append(append([]string(nil), args...), "--json")
			}
			var stdout, stderr bytes.Buffer
			status := runMain(context.Background(), args, &stdout, &stderr)
			if status == 0 {
				t.Errorf("%s (json=%v): exit status 0", tc.name, asJSON)
				continue
			}
			errText := stderr.String()
			if strings.Contains(errText, "goroutine ") || strings.Contains(errText, "panic") || strings.Contains(stdout.String(), "internal error") {
				t.Errorf("%s (json=%v): panic trace or internal error:\n%s%s", tc.name, asJSON, stdout.String(), errText)
			}
			if !asJSON {
				lines := strings.Split(strings.TrimRight(errText, "\n"), "\n")
				last := lines[len(lines)-1]
				if !strings.HasPrefix(last, "psdlearn: ") {
					t.Errorf("%s: last stderr line %q is not a one-line psdlearn error", tc.name, last)
				}
				continue
			}
			var obj map[string]any
			dec := json.NewDecoder(&stdout)
			if err := dec.Decode(&obj); err != nil {
				t.Errorf("%s (json): stdout is not a JSON object: %v (%q)", tc.name, err, stdout.String())
				continue
			}
			if msg, ok := obj["error"].(string); !ok || msg == "" {
				t.Errorf("%s (json): no error field in %v", tc.name, obj)
			}
			if dec.More() {
				t.Errorf("%s (json): more than one JSON value on stdout", tc.name)
			}
		}
	}
}
