package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileCase is a hostile command line that must fail with a one-line
// error containing want, within a few seconds, without a panic.
type hostileCase struct {
	name string
	args []string
	want string
}

// runHostile runs each case in-process and checks the exit status, the
// message and the time taken.
func runHostile(t *testing.T, cases []hostileCase) {
	t.Helper()
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		start := time.Now()
		status := runMain(context.Background(), tc.args, &stdout, &stderr)
		took := time.Since(start)
		msg := strings.TrimRight(stderr.String(), "\n")
		lines := strings.Split(msg, "\n")
		last := lines[len(lines)-1]
		switch {
		case status == 0:
			t.Errorf("%s: exit status 0 (stdout %q)", tc.name, stdout.String())
		case strings.Contains(msg, "internal error") || strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine "):
			t.Errorf("%s: panic or internal error: %s", tc.name, msg)
		case !strings.HasPrefix(last, "psdlearn: "):
			t.Errorf("%s: last stderr line %q is not a one-line psdlearn error", tc.name, last)
		case !strings.Contains(last, tc.want):
			t.Errorf("%s: error %q does not mention %q", tc.name, last, tc.want)
		}
		if took > 5*time.Second {
			t.Errorf("%s: took %v, want an error within 5 s", tc.name, took)
		}
	}
}

// TestHostileLimits: negative or zero limits that were
// silently replaced by defaults (or reported as success) are usage errors.
func TestHostileLimits(t *testing.T) {
	runHostile(t, []hostileCase{
		{"frobmetric --iters -1", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--iters", "-1"}, "--iters -1"},
		{"boostmetric --passes -3", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--passes", "-3"}, "--passes -3"},
		{"lmnn --rank -1", []string{"train", "--algo", "lmnn", "--data", "builtin:iris", "--rank", "-1"}, "--rank -1"},
		{"lmnn --rank 5 (D = 4)", []string{"train", "--algo", "lmnn", "--data", "builtin:iris", "--rank", "5"}, "--rank 5: the training data has 4 features"},
		{"lmnn --rank 3 --pca 2", []string{"train", "--algo", "lmnn", "--data", "builtin:iris", "--pca", "2", "--rank", "3"}, "--rank 3: the training data has 2 dimensions after --pca"},
		{"lmnn --mu 1.5", []string{"train", "--algo", "lmnn", "--data", "builtin:iris", "--mu", "1.5"}, "--mu 1.5"},
		{"lmnn --mu -0.2", []string{"train", "--algo", "lmnn", "--data", "builtin:iris", "--mu", "-0.2"}, "--mu -0.2"},
		{"lmnn --mu NaN", []string{"train", "--algo", "lmnn", "--data", "builtin:iris", "--mu", "NaN"}, "--mu NaN"},
		{"embed --iters -5", []string{"embed", "--data", "swissroll:200", "--iters", "-5"}, "--iters -5"},
		{"embed --k 0", []string{"embed", "--data", "swissroll:200", "--k", "0"}, "--k 0"},
		{"embed --k -1", []string{"embed", "--data", "swissroll:200", "--k", "-1"}, "--k -1"},
		{"cluster --ratio 0", []string{"cluster", "--data", "builtin:iris", "--ratio", "0"}, "--ratio 0"},
		{"cluster --ratio 1.5", []string{"cluster", "--data", "builtin:iris", "--ratio", "1.5"}, "--ratio 1.5"},
		{"cluster --ratio NaN", []string{"cluster", "--data", "builtin:iris", "--ratio", "NaN"}, "--ratio NaN"},
		{"cluster --runs -5", []string{"cluster", "--data", "builtin:iris", "--runs", "-5"}, "--runs"},
		{"cluster --clusters -2", []string{"cluster", "--data", "builtin:iris", "--clusters", "-2"}, "--clusters"},
		{"eval --runs -5", []string{"eval", "--model", "m.json", "--data", "builtin:iris", "--runs", "-5"}, "--runs -5"},
		{"eval --clusters -2", []string{"eval", "--model", "m.json", "--data", "builtin:iris", "--clusters", "-2"}, "--clusters -2"},
		{"eval --k 0", []string{"eval", "--model", "m.json", "--data", "builtin:iris", "--k", "0"}, "--k 0"},
		{"bench --max-size -1", []string{"bench", "--max-size", "-1"}, "--max-size -1"},
		{"bench --runs 0", []string{"bench", "--runs", "0"}, "--runs 0"},
		{"bench --case nomatch", []string{"bench", "--case", "nomatch-zzz", "--runs", "1"}, "no case"},
		{"bench --suite sdp --case nomatch", []string{"bench", "--suite", "sdp", "--case", "nomatch-zzz"}, "no SDP problem matches"},
		{"bench --suite table2 --case", []string{"bench", "--suite", "table2", "--case", "iris"}, "no named problems"},
		{"bench --time-limit -1s", []string{"bench", "--time-limit", "-1s"}, "--time-limit -1s"},
		{"bench --time-limit 1 (no unit)", []string{"bench", "--time-limit", "1"}, "time-limit"},
		{"bench --suite phases --time-limit", []string{"bench", "--suite", "phases", "--time-limit", "1m"}, "--time-limit applies to the suites"},
		{"train --data subspace:100:8", []string{"train", "--algo", "frobmetric", "--data", "subspace:100:8"}, "8 dimensions, want 16 to 65536"},
		{"train --data subspace:10000000:4096", []string{"train", "--algo", "frobmetric", "--data", "subspace:10000000:4096"}, "at most 2^28 entries"},
		{"train --data subspace:100", []string{"train", "--algo", "frobmetric", "--data", "subspace:100"}, "want subspace:N:D"},
	})
}

// TestHostileCLP runs a huge C through the CLI: C = 1e25 aborted the
// process inside CLP.
func TestHostileCLP(t *testing.T) {
	for _, backend := range []string{"native", "go"} {
		if _, err := resolveBackend(backend); err != nil {
			continue
		}
		runHostile(t, []hostileCase{
			{"psdboost --C 1e25 " + backend, []string{"train", "--algo", "psdboost", "--data", "builtin:iris", "--C", "1e25", "--backend", backend}, "C = 1e+25"},
			{"boostmetric --loss hinge --C 1e25 " + backend, []string{"train", "--algo", "boostmetric", "--loss", "hinge", "--data", "builtin:iris", "--C", "1e25", "--backend", backend}, "1e+25"},
		})
	}
}

// writeFile writes content to name in dir and returns the path.
func writeFile(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gzipRepeat returns gzip data expanding to head followed by line repeated
// until size bytes.
func gzipRepeat(t *testing.T, head, line string, size int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	w.Write([]byte(head))
	chunk := []byte(strings.Repeat(line, 1<<16/len(line)))
	for n := 0; n < size; n += len(chunk) {
		w.Write(chunk)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestHostileResources runs the resource reproducers (memory, decompression,
// allocation, overflow) through the CLI: each is refused quickly with a one-line error
// naming the limit or the overflow.
func TestHostileResources(t *testing.T) {
	// A fixed memory limit (the default is half of this machine's memory):
	// 8 GiB fits D×D metrics up to 16,384 features.
	t.Setenv("PSDLEARN_MAX_MEMORY", "8GiB")
	dir := t.TempDir()
	var wide strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&wide, "%d 1:%f 2:%f 4194304:%f\n", i%3, float64(i)/30, float64(i%7)/7, float64(i%5)/5)
	}
	widePath := writeFile(t, dir, "wide.libsvm", []byte(wide.String()))
	wide2 := strings.ReplaceAll(wide.String(), "4194304:", "20000:")
	wide2Path := writeFile(t, dir, "wide2.libsvm", []byte(wide2))
	var huge strings.Builder
	huge.WriteString("a,b,c,d,label\n")
	for i := 0; i < 30; i++ {
		v := []float64{6e307, -6e307, 5e307}
		fmt.Fprintf(&huge, "%g,%g,%g,%g,%d\n", v[i%3], v[(i+1)%3], v[(i+2)%3], 1.0, i%3)
	}
	hugePath := writeFile(t, dir, "huge.csv", []byte(huge.String()))
	modelPath := filepath.Join(dir, "iris.json")
	var out, errOut bytes.Buffer
	if status := runMain(context.Background(), []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "1", "--split", "0.5,0.5", "--out", modelPath}, &out, &errOut); status != 0 {
		t.Fatalf("training the iris model: %s", errOut.String())
	}
	csvBomb := writeFile(t, dir, "bomb.csv.gz", gzipRepeat(t, "a,b,label\n", "0,0,1\n", 32<<20))
	svmBomb := writeFile(t, dir, "bomb.libsvm.gz", gzipRepeat(t, "", "1\n", 32<<20))
	cases := []hostileCase{
		{"kernel meg --steps 2e9", []string{"kernel", "--algo", "meg", "--steps", "2000000000"}, "--max-memory"},
		{"csv gzip bomb", []string{"train", "--algo", "frobmetric", "--data", csvBomb, "--max-input", "2MB"}, "--max-input"},
		{"libsvm gzip bomb", []string{"train", "--algo", "frobmetric", "--data", svmBomb, "--max-input", "2MB"}, "--max-input"},
		{"csv gzip bomb, memory", []string{"train", "--algo", "frobmetric", "--data", csvBomb, "--max-memory", "64MB"}, "--max-memory"},
		{"eval near-overflow data", []string{"eval", "--model", modelPath, "--data", hugePath}, "overflow"},
		{"train near-overflow data", []string{"train", "--algo", "frobmetric", "--data", hugePath, "--C", "1"}, "overflow"},
		{"bad --max-memory", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--max-memory", "-1GB"}, "max-memory"},
		{"tiny --max-memory", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "1", "--max-memory", "1KB"}, "--max-memory"},
	}
	for _, backend := range []string{"native", "go"} {
		if _, err := resolveBackend(backend); err != nil {
			continue
		}
		for _, algo := range []string{"frobmetric", "boostmetric", "psdboost"} {
			cases = append(cases,
				hostileCase{algo + " wide " + backend, []string{"train", "--algo", algo, "--data", widePath, "--backend", backend}, "--max-memory"},
				hostileCase{algo + " wide 20000 " + backend, []string{"train", "--algo", algo, "--data", wide2Path, "--backend", backend}, "--max-memory"})
		}
	}
	runHostile(t, cases)
	// The limit flags are per command line: a following command has the defaults again.
	out.Reset()
	errOut.Reset()
	if status := runMain(context.Background(), []string{"eval", "--model", modelPath, "--data", "builtin:iris"}, &out, &errOut); status != 0 {
		t.Fatalf("eval after --max-memory 1KB: %s", errOut.String())
	}
}
