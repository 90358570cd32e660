package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Tests of the command-line tool as a whole: CSV headers,
// standard input and output, unlabelled data, help, version, exit codes,
// flags that do not apply to the chosen algorithm.

// runIO runs one command line in-process with stdin as standard input.
func runIO(args []string, stdin string) (status int, stdout, stderr string) {
	var out, errb bytes.Buffer
	st := runMainIO(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return st, out.String(), errb.String()
}

// blobsCSV returns n rows of 3 features around one of 3 class centres,
// label last; with header, a header row first.
func blobsCSV(n int, header bool) string {
	var b strings.Builder
	if header {
		b.WriteString("a,b,c,label\n")
	}
	for i := 0; i < n; i++ {
		c := i % 3
		fmt.Fprintf(&b, "%g,%g,%g,%d\n", float64(2*c)+0.1*float64(i%7), float64(c)-0.05*float64(i%5), 0.3*float64(i%4), c)
	}
	return b.String()
}

// unlabelled drops the last column of a CSV text.
func unlabelled(csv string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(csv, "\n"), "\n") {
		b.WriteString(line[:strings.LastIndexByte(line, ',')])
		b.WriteByte('\n')
	}
	return b.String()
}

// points is the number of points train used: n_train + n_val + n_test.
func points(t *testing.T, m map[string]any) int {
	t.Helper()
	return int(field(t, m, "n_train") + field(t, m, "n_val") + field(t, m, "n_test"))
}

// decodeJSON decodes exactly one JSON object.
func decodeJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout %q is not a JSON object: %v", out, err)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on stdout: %q", out)
	}
	return m
}

// TestCSVHeaderFlags: a headerless CSV keeps its first row (it lost it
// once), a header is detected, --header/--no-header force it,
// giving both is a usage error, and an undecidable file asks for one.
func TestCSVHeaderFlags(t *testing.T) {
	dir := t.TempDir()
	noHeader := writeFile(t, dir, "nohdr.csv", []byte(blobsCSV(60, false)))
	withHeader := writeFile(t, dir, "hdr.csv", []byte(blobsCSV(60, true)))
	ambiguous := writeFile(t, dir, "amb.csv", []byte("1,2,label\n3,4,x\n5,6,y\n7,8,z\n"))
	base := []string{"train", "--algo", "frobmetric", "--C", "1", "--quiet", "--json"}
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		points int    // rows used, when status is 0
		want   string // substring of the error, when status is not 0
	}{
		{name: "headerless detected", args: []string{"--data", noHeader}, points: 60},
		{name: "header detected", args: []string{"--data", withHeader}, points: 60},
		{name: "--no-header on a headerless file", args: []string{"--data", noHeader, "--no-header"}, points: 60},
		{name: "--header on a headerless file drops a row", args: []string{"--data", noHeader, "--header"}, points: 59},
		{name: "--header on a header", args: []string{"--data", withHeader, "--header"}, points: 60},
		{name: "--no-header on a header reads it as data", args: []string{"--data", withHeader, "--no-header"}, status: 1, want: `invalid number "a"`},
		{name: "both", args: []string{"--data", noHeader, "--header", "--no-header"}, status: 2, want: "--header or --no-header, not both"},
		{name: "ambiguous", args: []string{"--data", ambiguous}, status: 1, want: "pass --header or --no-header"},
		{name: "label column by index, headerless", args: []string{"--data", noHeader, "--label-col", "3"}, points: 60},
		{name: "label column by negative index", args: []string{"--data", noHeader, "--label-col", "-1"}, points: 60},
		{name: "label column by name needs a header", args: []string{"--data", withHeader, "--label-col", "label"}, points: 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, out, errs := runIO(append(append([]string(nil), base...), tc.args...), "")
			if st != tc.status {
				t.Fatalf("status %d, want %d\nstdout %s\nstderr %s", st, tc.status, out, errs)
			}
			m := decodeJSON(t, out)
			if tc.status != 0 {
				if msg, _ := m["error"].(string); !strings.Contains(msg, tc.want) {
					t.Errorf("error %q does not contain %q", msg, tc.want)
				}
				return
			}
			if got := points(t, m); got != tc.points {
				t.Errorf("%d points used, want %d", got, tc.points)
			}
		})
	}
}

// TestStdinStdout: "-" reads data from standard input (gzip too), transform
// writes CSV to standard output with and without labels, and the misuses
// are usage errors.
func TestStdinStdout(t *testing.T) {
	dir := t.TempDir()
	csv := blobsCSV(60, false)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(csv))
	zw.Close()
	model := filepath.Join(dir, "m.json")
	st, out, errs := runIO([]string{"train", "--algo", "frobmetric", "--C", "1", "--data", "-", "--out", model, "--json"}, csv)
	if st != 0 {
		t.Fatalf("train --data -: status %d: %s %s", st, out, errs)
	}
	if m := decodeJSON(t, out); points(t, m) != 60 || m["data"] != "-" {
		t.Errorf("train --data -: %v", m)
	}
	if st, out, errs := runIO([]string{"train", "--algo", "frobmetric", "--C", "1", "--data", "-", "--json"}, gz.String()); st != 0 || points(t, decodeJSON(t, out)) != 60 {
		t.Errorf("gzip on stdin: status %d: %s %s", st, out, errs)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		status int
		first  string // the last column of the first line of stdout ("z": a coordinate)
		rows   int    // lines of stdout after the header
		want   string // substring of stderr when status is not 0
	}{
		{name: "transform to stdout by default", args: []string{"--data", "-"}, stdin: csv, first: "label", rows: 60},
		{name: "transform --out -", args: []string{"--data", "-", "--out", "-"}, stdin: csv, first: "label", rows: 60},
		{name: "transform --no-labels", args: []string{"--data", "-", "--no-labels"}, stdin: unlabelled(csv), first: "z", rows: 60},
		{name: "transform --no-labels with a header", args: []string{"--data", "-", "--no-labels"}, stdin: "a,b,c\n" + unlabelled(csv), first: "z", rows: 60},
		{name: "unlabelled without --no-labels", args: []string{"--data", "-"}, stdin: unlabelled(csv), status: 1, want: "pass --no-labels"},
		{name: "--no-labels with --label-col", args: []string{"--data", "-", "--no-labels", "--label-col", "0"}, stdin: csv, status: 2, want: "--label-col or --no-labels"},
		{name: "--json with the CSV on stdout", args: []string{"--data", "-", "--json"}, stdin: csv, status: 2, want: "give --out a file name"},
		{name: "empty stdin", args: []string{"--data", "-"}, stdin: "", status: 1, want: "<stdin>: empty file"},
		{name: "garbage stdin", args: []string{"--data", "-"}, stdin: "\x00\x01\x02,\xff\n\"unterminated", status: 1, want: "<stdin>"},
		{name: "libsvm:- on stdin", args: []string{"--data", "libsvm:-"}, stdin: "0 1:1 2:2 3:3\n1 1:2 3:1\n", first: "label", rows: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, out, errs := runIO(append([]string{"transform", "--model", model}, tc.args...), tc.stdin)
			if st != tc.status {
				t.Fatalf("status %d, want %d\nstdout %s\nstderr %s", st, tc.status, out, errs)
			}
			if tc.status != 0 {
				if !strings.Contains(out+errs, tc.want) {
					t.Errorf("output %q %q does not contain %q", out, errs, tc.want)
				}
				return
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			cols := strings.Split(lines[0], ",")
			if cols[0] != "z1" || !strings.HasPrefix(cols[len(cols)-1], tc.first) || len(lines)-1 != tc.rows {
				t.Errorf("stdout starts %q with %d rows, want z1 … %s and %d rows", lines[0], len(lines)-1, tc.first, tc.rows)
			}
			if errs != "" {
				t.Errorf("stderr %q, want nothing", errs)
			}
		})
	}
	// Standard input can be read once.
	st, _, errs = runIO([]string{"train", "--algo", "frobmetric", "--data", "-", "--test", "-"}, csv)
	if st != 2 || !strings.Contains(errs, "standard input can be read only once") {
		t.Errorf("--data - --test -: status %d, stderr %q", st, errs)
	}
	// embed --out - cannot share stdout with --json.
	if st, _, errs := runIO([]string{"embed", "--data", "swissroll:50", "--out", "-", "--json"}, ""); st != 2 {
		t.Errorf("embed --out - --json: status %d, stderr %q", st, errs)
	}
}

// TestHelp: -h, --help, help and help CMD print usage on stdout and exit 0;
// help for an unknown command is a usage error.
func TestHelp(t *testing.T) {
	cases := []struct {
		args   []string
		status int
		want   string // prefix of stdout when status is 0, substring of stderr else
	}{
		{[]string{}, 0, "psdlearn learns"},
		{[]string{"help"}, 0, "psdlearn learns"},
		{[]string{"-h"}, 0, "psdlearn learns"},
		{[]string{"--help"}, 0, "psdlearn learns"},
		{[]string{"help", "nope"}, 2, `unknown command "nope"`},
		{[]string{"help", "train", "eval"}, 2, "want one command name"},
		{[]string{"train", "--algo", "frobmetric", "-h"}, 0, "Usage: psdlearn train [flags]"},
		{[]string{"train", "--help", "--json"}, 0, "Usage: psdlearn train [flags]"},
	}
	for _, name := range commandNames() {
		cases = append(cases,
			struct {
				args   []string
				status int
				want   string
			}{[]string{name, "--help"}, 0, "Usage: psdlearn " + name + " [flags]"},
			struct {
				args   []string
				status int
				want   string
			}{[]string{name, "-h"}, 0, "Usage: psdlearn " + name + " [flags]"},
			struct {
				args   []string
				status int
				want   string
			}{[]string{"help", name}, 0, "Usage: psdlearn " + name + " [flags]"})
	}
	for _, tc := range cases {
		st, out, errs := runIO(tc.args, "")
		switch {
		case st != tc.status:
			t.Errorf("%q: status %d, want %d (stderr %q)", tc.args, st, tc.status, errs)
		case tc.status == 0 && (!strings.HasPrefix(out, tc.want) || errs != ""):
			t.Errorf("%q: stdout %.80q, stderr %q; want stdout starting %q and no stderr", tc.args, out, errs, tc.want)
		case tc.status == 0 && len(tc.args) > 0 && tc.args[0] != "help" && tc.args[0] != "version" && strings.HasPrefix(tc.want, "Usage") && !strings.Contains(out, "-quiet"):
			t.Errorf("%q: the usage lists no --quiet: %s", tc.args, out)
		case tc.status != 0 && !strings.Contains(errs, tc.want):
			t.Errorf("%q: stderr %q does not contain %q", tc.args, errs, tc.want)
		}
	}
	// The help marks flags that apply to some algorithms only.
	_, out, _ := runIO([]string{"help", "train"}, "")
	if !strings.Contains(out, "[only frobmetric]") || !strings.Contains(out, "- (CSV on standard input)") ||
		!regexp.MustCompile(`-mu float\s+LMNN push weight[^\n]*\[only lmnn\]`).MatchString(out) ||
		!regexp.MustCompile(`-rank int\s+LMNN low-rank[^\n]*\[only lmnn\]`).MatchString(out) {
		t.Errorf("train help: %s", out)
	}
}

// TestVersion: the version command prints the Go version and the backends.
func TestVersion(t *testing.T) {
	st, out, errs := runIO([]string{"version"}, "")
	if st != 0 || !strings.HasPrefix(out, "psdlearn ") || !strings.Contains(out, "go1.") || !strings.Contains(out, "backends: ") || errs != "" {
		t.Errorf("version: status %d, stdout %q, stderr %q", st, out, errs)
	}
	st, out, _ = runIO([]string{"version", "--json"}, "")
	m := decodeJSON(t, out)
	bs, _ := m["backends"].([]any)
	if st != 0 || m["module"] != "github.com/psdlearn/psdlearn" || !strings.HasPrefix(fmt.Sprint(m["go"]), "go") || len(bs) == 0 || m["version"] == "" {
		t.Errorf("version --json: status %d, %v", st, m)
	}
	old := version
	version = "v9.9.9"
	defer func() { version = old }()
	if _, out, _ := runIO([]string{"version"}, ""); !strings.HasPrefix(out, "psdlearn v9.9.9") {
		t.Errorf("version set at link time: %q", out)
	}
	if st, _, _ := runIO([]string{"version", "extra"}, ""); st != 2 {
		t.Errorf("version extra: status %d, want 2", st)
	}
}

// TestFlagNotApplicable: a flag that does not apply to the chosen
// algorithm is a usage error (exit 2) naming the flag and where it
// applies, also under --json; flags that apply, or are given their
// default, pass the check.
func TestFlagNotApplicable(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--loss", "exp"}, "--loss does not apply to --algo frobmetric (it applies to boostmetric, psdboost)"},
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--mode", "corrective"}, "--mode does not apply"},
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--passes", "2"}, "--passes does not apply"},
		{[]string{"train", "--algo", "psdboost", "--data", "builtin:iris", "--nu", "1e-5"}, "--nu does not apply to --algo psdboost"},
		{[]string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--working-set", "on"}, "--working-set does not apply to --algo boostmetric (it applies to frobmetric)"},
		{[]string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--C", "1"}, "--C does not apply to --algo boostmetric"},
		{[]string{"train", "--algo", "itml", "--data", "builtin:iris", "--mu", "0.3"}, "--mu does not apply to --algo itml (it applies to lmnn)"},
		{[]string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--mu", "1.5"}, "--mu does not apply to --algo boostmetric (it applies to lmnn)"},
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--rank", "2"}, "--rank does not apply to --algo frobmetric (it applies to lmnn)"},
		{[]string{"train", "--algo", "lmnn", "--data", "builtin:iris", "--nu", "1e-5"}, "--nu does not apply to --algo lmnn"},
		{[]string{"train", "--algo", "boostmetric", "--loss", "hinge", "--data", "builtin:iris", "--mode", "corrective"}, "--mode does not apply to --algo boostmetric --loss hinge"},
		{[]string{"train", "--algo", "identity-test", "--data", "builtin:iris", "--loss", "exp"}, "--loss does not apply to --algo identity-test"},
		{[]string{"kernel", "--algo", "meg", "--max-iter", "5"}, "--max-iter does not apply to --algo meg (it applies to definiteboost)"},
		{[]string{"kernel", "--algo", "meg", "--projection", "exact"}, "--projection does not apply"},
		{[]string{"kernel", "--algo", "definiteboost", "--steps", "5"}, "--steps does not apply to --algo definiteboost (it applies to meg)"},
		{[]string{"kernel", "--algo", "definiteboost", "--eta", "0.1"}, "--eta does not apply"},
		{[]string{"cluster", "--data", "builtin:iris", "--iters", "3"}, "--iters does not apply to simplenpkl --loss linear (it applies to --loss sqhinge)"},
		{[]string{"cluster", "--data", "builtin:iris", "--alpha0", "0.5"}, "--alpha0 does not apply"},
		{[]string{"cluster", "--data", "builtin:iris", "--fraction", "0.3"}, "--fraction does not apply"},
		{[]string{"cluster", "--data", "builtin:iris", "--holdout", "0.3"}, "--holdout does not apply"},
		{[]string{"embed", "--data", "swissroll:50", "--inequalities", "--relax-iters", "5"}, "--relax-iters does not apply to mvu --inequalities"},
	} {
		for _, asJSON := range []bool{false, true} {
			args := tc.args
			if asJSON {
				args = append(append([]string(nil), args...), "--json")
			}
			st, out, errs := runIO(args, "")
			msg := errs
			if asJSON {
				msg, _ = decodeJSON(t, out)["error"].(string)
			}
			if st != 2 || !strings.Contains(msg, tc.want) {
				t.Errorf("%q: status %d, error %q; want 2 and %q", args, st, msg, tc.want)
			}
		}
	}
	// Flags that apply, and a flag given its default value, pass the check.
	for _, args := range [][]string{
		{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "1", "--working-set", "off", "--loss", "", "--quiet"},
		{"train", "--algo", "identity-test", "--data", "builtin:iris", "--C", "", "--nu", "0", "--quiet"},
		{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--loss", "logistic", "--mode", "stagewise", "--iters", "5", "--quiet"},
		{"train", "--algo", "lmnn", "--data", "builtin:iris", "--mu", "0.3", "--rank", "2", "--iters", "5", "--quiet"},
		{"train", "--algo", "itml", "--data", "builtin:iris", "--mu", "0", "--rank", "0", "--iters", "5", "--quiet"},
	} {
		if st, _, errs := runIO(args, ""); st != 0 {
			t.Errorf("%q: status %d: %s", args, st, errs)
		}
	}
}

// TestExitCodes: usage errors exit 2, failed runs 1, success 0; a usage
// error is one line on stderr, or one JSON object under --json.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	nan := writeFile(t, dir, "nan.csv", []byte("a,b,label\n1,2,x\n3,NaN,y\n"))
	for _, tc := range []struct {
		args   []string
		status int
	}{
		{[]string{"frobnicate"}, 2},
		{[]string{"train", "--bogus"}, 2},
		{[]string{"train", "--k", "many"}, 2},
		{[]string{"train", "--data", "builtin:iris"}, 2},
		{[]string{"train", "--algo", "nope", "--data", "builtin:iris"}, 2},
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "stray"}, 2},
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--backend", "cuda"}, 2},
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "1,x"}, 2},
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--iters", "0"}, 2},
		{[]string{"kernel", "--algo", "svm"}, 2},
		{[]string{"embed"}, 2},
		{[]string{"cluster", "--data", "builtin:iris", "--loss", "cubic"}, 2},
		{[]string{"transform", "--data", "builtin:iris"}, 2},
		{[]string{"bench", "--suite", "gpu"}, 2},
		{[]string{"train", "--algo", "frobmetric", "--data", filepath.Join(dir, "missing.csv")}, 1},
		{[]string{"train", "--algo", "frobmetric", "--data", nan}, 1},
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:nope"}, 1},
		{[]string{"train", "--algo", "identity-test", "--data", "builtin:iris", "--quiet"}, 0},
	} {
		for _, asJSON := range []bool{false, true} {
			args := tc.args
			if asJSON {
				args = append(append([]string(nil), args...), "--json")
			}
			st, out, errs := runIO(args, "")
			if st != tc.status {
				t.Errorf("%q: status %d, want %d (stderr %q)", args, st, tc.status, errs)
				continue
			}
			if st == 0 {
				continue
			}
			if asJSON {
				if m := decodeJSON(t, out); m["error"] == nil {
					t.Errorf("%q: no error field in %v", args, m)
				}
			} else if lines := strings.Split(strings.TrimRight(errs, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "psdlearn: ") || out != "" {
				t.Errorf("%q: stderr %q, stdout %q; want one psdlearn: line and no stdout", args, errs, out)
			}
		}
	}
}

// TestQuiet: --quiet silences progress but not warnings.
func TestQuiet(t *testing.T) {
	oldDelay, oldInterval := progressDelay, progressInterval
	progressDelay, progressInterval = -1, 0
	defer func() { progressDelay, progressInterval = oldDelay, oldInterval }()
	args := []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "1", "--iters", "3"}
	_, _, loud := runIO(args, "")
	if !strings.Contains(loud, "psdlearn [") || !strings.Contains(loud, "warning") {
		t.Fatalf("without --quiet: stderr %q, want progress and a warning", loud)
	}
	_, _, quiet := runIO(append(args, "--quiet"), "")
	if strings.Contains(quiet, "psdlearn [") || !strings.Contains(quiet, "psdlearn: warning:") {
		t.Errorf("--quiet: stderr %q, want the warning only", quiet)
	}
}

// TestHostileStdin: hostile bytes on standard input never panic: every
// command that reads data fails with a one-line error.
func TestHostileStdin(t *testing.T) {
	var gzJunk bytes.Buffer
	zw := gzip.NewWriter(&gzJunk)
	zw.Write([]byte("1,2,3\n"))
	zw.Close()
	truncated := gzJunk.Bytes()[:gzJunk.Len()/2]
	inputs := map[string]string{
		"empty":          "",
		"newlines":       "\n\n\n",
		"nul bytes":      strings.Repeat("\x00", 100),
		"bad utf-8":      "\xff\xfe,\xfd\n\xff,\xfe\n",
		"lone quote":     "\"",
		"one column":     "1\n2\n3\n",
		"ragged":         "1,2,3\n4,5\n",
		"huge number":    "1e999,2,x\n3,4,y\n",
		"truncated gzip": string(truncated),
		"gzip magic":     "\x1f\x8b",
		"header only":    "a,b,label\n",
		"libsvm junk":    "1 0:1 x:y\n",
	}
	commands := [][]string{
		{"train", "--algo", "frobmetric", "--data", "-"},
		{"cluster", "--data", "-"},
		{"kernel", "--algo", "meg", "--data", "-"},
		{"embed", "--data", "-"},
		{"train", "--algo", "frobmetric", "--data", "libsvm:-"},
	}
	for name, in := range inputs {
		for _, args := range commands {
			st, out, errs := runIO(append(args, "--quiet"), in)
			lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
			if st == 0 || strings.Contains(errs, "internal error") || strings.Contains(errs, "panic") || len(lines) != 1 || !strings.HasPrefix(lines[0], "psdlearn: ") {
				t.Errorf("%s | %q: status %d, stdout %q, stderr %q", name, args, st, out, errs)
			}
		}
	}
}

// TestHelpExamples: every command's --help shows examples, and every flag
// an example uses exists (the example's arguments followed by --help parse
// and print the help, exit 0; an unknown flag would be a usage error first).
func TestHelpExamples(t *testing.T) {
	for _, name := range commandNames() {
		ex := examples[name]
		if len(ex) == 0 {
			t.Errorf("%s: no examples for --help", name)
		}
		for _, e := range ex {
			args := strings.Fields(e)
			if args[0] != "psdlearn" || args[1] != name {
				t.Errorf("%s: example %q is not of this command", name, e)
				continue
			}
			st, out, errs := runIO(append(args[1:], "--help"), "")
			if st != 0 || !strings.Contains(out, "Examples:") {
				t.Errorf("%q --help: status %d, %s%s", e, st, out, errs)
			}
		}
	}
}
