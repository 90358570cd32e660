package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
)

// The grammar of TestAdversarial's cases. A case is a command line of the
// built binary together with the files it reads; the grammar builds them
// from two products:
//
//   - every reader × every input class: a reader is a way psdlearn reads a
//     file (a slot in a command line: --data csv:F, --data - on standard
//     input, --pairs F, --target F, --model F, …) and an input class one of
//     advInputClasses, each with a few variants of content;
//   - every command × every flag × every value class: the flags are read
//     from the binary's own help (so a new flag is covered without editing
//     the grammar), the values are advValueClasses.
//
// Content that no test file could hold — an endless line, an endless
// stream of zeros — comes from a shell process substitution, <(…), so the
// binary reads it from a pipe it cannot measure in advance.

// advInputClasses are the input classes of the issue (every reader × each).
var advInputClasses = []string{
	"empty", "header-only", "one-row", "ragged", "unbounded-line", "binary",
	"lying-header", "compressed-bomb", "wrong-encoding", "non-finite",
	"extreme-magnitude", "label-garbage",
}

// advValueClasses are the flag value classes (every command × every flag ×
// each); "tiny" (a subnormal number) is added for numbers.
var advValueClasses = []string{
	"missing", "empty", "zero", "negative", "huge", "overflowing", "NaN", "wrong-type", "tiny",
}

// advCase is one command line of the generator.
type advCase struct {
	name  string // group/…: "reader/csv/train/binary/zeros", "flag/train/C/NaN"
	group string // "reader" or "flag"
	class string // the input or value class
	// args are the binary's arguments. "{dir}" is replaced by the case's
	// directory, "{asset:NAME}" by a shared generated file's path, {model}
	// and {kmodel} by a metric and a kernel model, and advGenOpen SHELL
	// advGenClose by a process substitution <(SHELL).
	args  []string
	files map[string][]byte // written into the case's directory
	stdin string            // "" (empty), a path or a process substitution
	// The expectation, beyond the properties every case has.
	mustFail bool // exit 0 is wrong: the input is not usable
	mustWarn bool // exit 0 must come with a warning on stderr
	// usage 2: a failure must exit 2 (a flag value that cannot be right),
	// unless a resource limit refused the run; 1: only when the message
	// names the flag (an extreme value may make a solver fail, exit 1);
	// 0: 1 or 2.
	usage   int
	flag    string // the flag under test (flag cases)
	noUsage bool   // a failure must not exit 2 (bad input is not a usage error)
}

// advBases are the command lines the flag cases vary, one or more per
// command: the first whose flags include the flag under test is used (an
// algorithm-specific flag goes to a line of that algorithm). {model} and
// {kmodel} are a metric and a kernel model made once by the test.
var advBases = map[string][][]string{
	"train": {
		{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--out", "{dir}/m.json"},
		{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--out", "{dir}/m.json", "--loss", "exp", "--mode", "stagewise", "--passes", "1", "--nu", "0.5", "--precision", "double"},
		{"train", "--algo", "lmnn", "--data", "builtin:iris", "--out", "{dir}/m.json", "--mu", "0.5", "--rank", "2"},
		{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--triplets", "{asset:triplets.csv}", "--holdout", "0.2", "--out", "{dir}/m.json"},
	},
	"eval": {
		{"eval", "--model", "{model}", "--data", "builtin:iris"},
		{"eval", "--model", "{model}", "--data", "builtin:iris", "--pairs", "{asset:pairs.csv}", "--threshold", "1", "--precision-at", "3"},
	},
	"predict": {
		{"predict", "--model", "{model}", "--data", "builtin:iris", "--out", "{dir}/p.csv"},
		{"predict", "--model", "{model}", "--data", "builtin:iris", "--pairs", "{asset:pairs.csv}", "--threshold", "1", "--out", "{dir}/p.csv"},
	},
	"transform": {
		{"transform", "--model", "{model}", "--data", "builtin:iris", "--out", "{dir}/t.csv"},
		{"transform", "--model", "{model}", "--matrix", "M", "--out", "{dir}/M.npy"},
	},
	"cluster": {
		{"cluster", "--data", "builtin:iris", "--runs", "2", "--out", "{dir}/k.json"},
	},
	"kernel": {
		{"kernel", "--algo", "meg", "--steps", "2000", "--objects", "20", "--out", "{dir}/K.npy"},
		{"kernel", "--algo", "definiteboost", "--objects", "30", "--max-iter", "100", "--out", "{dir}/k.json"},
		{"kernel", "--algo", "meg", "--distances", "{asset:distances.csv}", "--passes", "2", "--out", "{dir}/K.npy"},
		{"kernel", "--algo", "definiteboost", "--pairs", "{asset:pairs.csv}", "--objects", "150", "--max-iter", "100"},
		{"kernel", "--algo", "meg", "--target", "{asset:target.csv}", "--labels", "{asset:labels.txt}", "--steps", "500"},
	},
	"embed": {
		{"embed", "--data", "swissroll:60", "--iters", "300", "--out", "{dir}/e.csv"},
	},
	"bench": {
		{"bench", "--suite", "kernels", "--case", "lbfgsb", "--max-size", "1000", "--runs", "1"},
	},
	"demo":    {{"demo", "--quick"}},
	"version": {{"version"}},
}

// advFlagBase names the base line (index into advBases[cmd]) of flags that
// apply to some algorithms or modes only; other flags use line 0.
var advFlagBase = map[string]int{
	"train/loss": 1, "train/mode": 1, "train/passes": 1, "train/nu": 1, "train/precision": 1,
	"train/mu": 2, "train/rank": 2, "train/holdout": 3, "train/triplets": 3, "train/no-labels": 3,
	"eval/pairs": 1, "eval/threshold": 1, "eval/val-pairs": 1, "eval/precision-at": 1,
	"predict/pairs": 1, "predict/threshold": 1, "predict/val-pairs": 1,
	"transform/matrix": 1,
	"kernel/eps":       1, "kernel/projection": 1, "kernel/tol": 1, "kernel/max-iter": 1, "kernel/eps-far": 3,
	"kernel/pairs": 3, "kernel/distances": 2, "kernel/passes": 2, "kernel/target": 4, "kernel/labels": 4,
}

// advParsedStrings are string flags whose value is parsed (a list, a
// choice, a number): a value that is wrong for them is a usage error.
var advParsedStrings = map[string]bool{
	"algo": true, "loss": true, "mode": true, "suite": true, "projection": true, "eigensolver": true,
	"method": true, "select": true, "weight": true, "graph": true, "precision": true, "working-set": true,
	"backend": true, "matrix": true, "split": true, "C": true, "c": true, "threshold": true,
}

// advFlag is a flag of a command, read from its help.
type advFlag struct {
	name, typ string // typ: int, uint, float, string, value (a byte count) or bool
}

var advHelpLine = regexp.MustCompile(`^  -(\S+)(?: (\S+))?$`)

// advCommandFlags returns the flags of a command as `psdlearn help CMD`
// prints them.
func advCommandFlags(help string) []advFlag {
	var out []advFlag
	for _, l := range strings.Split(help, "\n") {
		m := advHelpLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		typ := m[2]
		if typ == "" {
			typ = "bool"
		}
		out = append(out, advFlag{m[1], typ})
	}
	return out
}

// advValue returns the argument(s) of a flag for a value class, whether the
// class applies to the flag's type, and whether a failure must exit 2 (the
// value cannot be right for the type) or must not exit 0.
func advValue(f advFlag, class string) (args []string, ok, usage, mustFail bool) {
	if f.typ == "bool" {
		v := map[string]string{"missing": "", "empty": "=", "zero": "=0", "negative": "=-1", "huge": "=1e300",
			"overflowing": "=9223372036854775808", "NaN": "=NaN", "wrong-type": "=maybe"}[class]
		if class == "tiny" {
			return nil, false, false, false
		}
		bad := class != "missing" && class != "zero"
		return []string{"--" + f.name + v}, true, bad, bad
	}
	if class == "missing" {
		return []string{"--" + f.name}, true, true, true // the flag is last: no value
	}
	num := f.typ == "int" || f.typ == "uint" || f.typ == "float" || f.typ == "value"
	vals := map[string]string{"empty": "", "zero": "0", "negative": "-1", "huge": "1000000000",
		"overflowing": "9223372036854775807", "NaN": "NaN", "wrong-type": "abc", "tiny": "1e-320"}
	if f.typ == "float" {
		vals["huge"], vals["overflowing"] = "1e300", "1e999"
	}
	if f.typ == "string" {
		vals["huge"] = strings.Repeat("x", 100000)
	}
	if class == "tiny" && f.typ != "float" && f.typ != "string" {
		return nil, false, false, false
	}
	v := vals[class]
	switch {
	case num && (class == "empty" || class == "wrong-type"):
		usage, mustFail = true, true
	case (f.typ == "int" || f.typ == "uint" || f.typ == "value") && class == "NaN":
		usage, mustFail = true, true
	case f.typ == "uint" && class == "negative":
		usage, mustFail = true, true
	case f.typ == "float" && (class == "NaN" || class == "overflowing" || class == "tiny"):
		usage, mustFail = true, true // not a normal finite number
	case f.typ == "string" && advParsedStrings[f.name] && class != "empty" && class != "huge" && class != "overflowing":
		usage = true // a failure is about the value: exit 2
	case num && class != "huge":
		usage = true // a number out of range is a flag-value error (exit 2) unless a resource limit refuses the run
	}
	return []string{"--" + f.name + "=" + v}, true, usage, mustFail
}

// advNamedOnly reports whether a failure for the value class must exit 2
// only when its message names the flag: a huge value may be in range and
// make a solver fail (exit 1).
func advNamedOnly(f advFlag, class string) bool {
	return (class == "huge" || class == "overflowing" && f.typ == "string") && (f.typ != "string" || advParsedStrings[f.name]) && f.typ != "bool"
}

// advFlagCases builds every command × flag × value class case. helps maps
// a command to its help text.
func advFlagCases(helps map[string]string) []advCase {
	var out []advCase
	cmds := make([]string, 0, len(advBases))
	for c := range advBases {
		cmds = append(cmds, c)
	}
	sort.Strings(cmds)
	for _, cmd := range cmds {
		for _, f := range advCommandFlags(helps[cmd]) {
			base := advBases[cmd][advFlagBase[cmd+"/"+f.name]]
			for _, class := range advValueClasses {
				fa, ok, usage, mustFail := advValue(f, class)
				if !ok {
					continue
				}
				args := advWithout(base, f.name)
				if class == "missing" {
					args = append(args, fa...)
				} else {
					args = append(args, fa...)
				}
				c := advCase{name: fmt.Sprintf("flag/%s/%s/%s", cmd, f.name, class), group: "flag", class: class,
					args: args, flag: f.name, mustFail: mustFail}
				switch {
				case usage:
					c.usage = 2
				case advNamedOnly(f, class):
					c.usage = 1
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// advWithout returns base without the flag name and its value.
func advWithout(base []string, name string) []string {
	out := make([]string, 0, len(base))
	for i := 0; i < len(base); i++ {
		if base[i] == "--"+name {
			i++ // and its value
			continue
		}
		out = append(out, base[i])
	}
	return out
}

// advReader is a slot of a command line where psdlearn reads a file of one
// kind: args contain "{in}" (or stdin is set to it).
type advReader struct {
	name  string
	kind  string // the content kind: csv, libsvm, idx, npy, model, triplets, pairs, distances, pairlist, target, targetnpy, labels
	args  []string
	stdin bool   // the content is standard input ("{in}" not in args)
	ext   string // file name extension of the input
	// must warn about degenerate content (a zero model) rather than use it silently
}

// advReaders are the readers of psdlearn: every way it reads a file.
var advReaders = []advReader{
	{name: "csv/train", kind: "csv", ext: ".csv", args: []string{"train", "--algo", "frobmetric", "--data", "csv:{in}", "--out", "{dir}/m.json"}},
	{name: "csv/stdin", kind: "csv", stdin: true, args: []string{"train", "--algo", "frobmetric", "--data", "-", "--out", "{dir}/m.json"}},
	{name: "csv/transform", kind: "csv", ext: ".csv", args: []string{"transform", "--model", "{model}", "--data", "csv:{in}", "--out", "{dir}/t.csv"}},
	{name: "csv/predict-ref", kind: "csv", ext: ".csv", args: []string{"predict", "--model", "{model}", "--data", "builtin:iris", "--ref", "csv:{in}", "--out", "{dir}/p.csv"}},
	{name: "csv/cluster", kind: "csv", ext: ".csv", args: []string{"cluster", "--data", "csv:{in}", "--runs", "1", "--out", "{dir}/k.json"}},
	{name: "csv/kernel", kind: "csv", ext: ".csv", args: []string{"kernel", "--algo", "meg", "--data", "csv:{in}", "--steps", "500", "--out", "{dir}/K.npy"}},
	{name: "libsvm/train", kind: "libsvm", ext: ".libsvm", args: []string{"train", "--algo", "frobmetric", "--data", "libsvm:{in}", "--out", "{dir}/m.json"}},
	{name: "libsvm/stdin", kind: "libsvm", stdin: true, args: []string{"train", "--algo", "boostmetric", "--data", "libsvm:-"}},
	{name: "libsvm/predict", kind: "libsvm", ext: ".libsvm", args: []string{"predict", "--model", "{model}", "--data", "libsvm:{in}", "--ref", "builtin:iris", "--out", "{dir}/p.csv"}},
	{name: "libsvm/embed", kind: "libsvm", ext: ".libsvm", args: []string{"embed", "--data", "libsvm:{in}", "--iters", "100", "--out", "{dir}/e.csv"}},
	{name: "idx/train", kind: "idx", args: []string{"train", "--algo", "frobmetric", "--data", "idx:{in}:{in2}", "--out", "{dir}/m.json"}},
	{name: "npy/train", kind: "npy", ext: ".npy", args: []string{"train", "--algo", "frobmetric", "--data", "npy:{in}:{in2}", "--out", "{dir}/m.json"}},
	{name: "npy/transform", kind: "npy", ext: ".npy", args: []string{"transform", "--model", "{model}", "--data", "npy:{in}:{in2}", "--out", "{dir}/t.npy"}},
	{name: "model/eval", kind: "model", ext: ".json", args: []string{"eval", "--model", "{in}", "--data", "builtin:iris"}},
	{name: "model/predict", kind: "model", ext: ".json", args: []string{"predict", "--model", "{in}", "--data", "builtin:iris", "--ref", "{asset:iris.csv}", "--out", "{dir}/p.csv"}},
	{name: "model/transform", kind: "model", ext: ".json", args: []string{"transform", "--model", "{in}", "--data", "builtin:iris", "--out", "{dir}/t.csv"}},
	{name: "kmodel/eval", kind: "kmodel", ext: ".json", args: []string{"eval", "--model", "{in}", "--data", "builtin:iris"}},
	{name: "triplets/train", kind: "triplets", ext: ".csv", args: []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--triplets", "{in}", "--out", "{dir}/m.json"}},
	{name: "pairs/train", kind: "pairs", ext: ".csv", args: []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--pairs", "{in}", "--out", "{dir}/m.json"}},
	{name: "pairs/cluster", kind: "pairs", ext: ".csv", args: []string{"cluster", "--data", "builtin:iris", "--pairs", "{in}"}},
	{name: "pairs/kernel", kind: "pairs", ext: ".csv", args: []string{"kernel", "--algo", "definiteboost", "--pairs", "{in}", "--objects", "150", "--max-iter", "100"}},
	{name: "pairlist/predict", kind: "pairlist", ext: ".csv", args: []string{"predict", "--model", "{model}", "--data", "builtin:iris", "--pairs", "{in}", "--threshold", "1", "--out", "{dir}/p.csv"}},
	{name: "pairlist/eval", kind: "pairlist", ext: ".csv", args: []string{"eval", "--model", "{model}", "--data", "builtin:iris", "--pairs", "{in}"}},
	{name: "distances/kernel", kind: "distances", ext: ".csv", args: []string{"kernel", "--algo", "meg", "--distances", "{in}", "--out", "{dir}/K.npy"}},
	{name: "target/kernel", kind: "target", ext: ".csv", args: []string{"kernel", "--algo", "meg", "--target", "{in}", "--steps", "500", "--out", "{dir}/K.npy"}},
	{name: "targetnpy/kernel", kind: "targetnpy", ext: ".npy", args: []string{"kernel", "--algo", "meg", "--target", "{in}", "--steps", "500", "--out", "{dir}/K.npy"}},
	{name: "labels/kernel", kind: "labels", ext: ".txt", args: []string{"kernel", "--algo", "meg", "--target", "{asset:target.csv}", "--labels", "{in}", "--steps", "500"}},
}

// advContent is one variant of an input class for a kind: the bytes of the
// file (and of a second file for idx and npy), or a shell command whose
// output is read through a pipe, or a fixed path such as /dev/zero.
type advContent struct {
	variant     string
	data, data2 []byte
	gen         string // shell command: the input is <(gen)
	path        string // the input is this path ("{asset:…}" allowed)
	mustFail    bool   // the input is not usable: exit 0 is wrong
	mustWarn    bool   // usable only with a warning
}

// advFail marks contents that no reader may accept.
func advFail(vs ...advContent) []advContent {
	for i := range vs {
		vs[i].mustFail = true
	}
	return vs
}

const advIrisHead = "sl,sw,pl,pw,species\n"

// advIrisRows returns n rows of iris-like CSV data, 3 classes.
func advIrisRows(n int) string {
	var b strings.Builder
	r := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < n; i++ {
		c := i % 3
		fmt.Fprintf(&b, "%.1f,%.1f,%.1f,%.1f,%s\n", 5+float64(c)+r.Float64(), 3+r.Float64(), 1.5+2*float64(c)+r.Float64(), 0.2+float64(c)+r.Float64()/2, []string{"setosa", "versicolor", "virginica"}[c])
	}
	return b.String()
}

// advLibsvmRows returns n rows of LIBSVM data, 3 classes, 4 features.
func advLibsvmRows(n int) string {
	var b strings.Builder
	r := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < n; i++ {
		c := i % 3
		fmt.Fprintf(&b, "%d 1:%.2f 2:%.2f 3:%.2f 4:%.2f\n", c, float64(c)+r.Float64(), r.Float64(), 2*float64(c)+r.Float64(), r.Float64())
	}
	return b.String()
}

// advUTF16 encodes s as UTF-16LE with a byte-order mark.
func advUTF16(s string) []byte {
	out := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

// advRandom returns n pseudo-random bytes (seeded).
func advRandom(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0xb1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// advGenOpen and advGenClose delimit a shell command whose output an
// argument names through a process substitution.
const (
	advGenOpen  = "\x01gen:"
	advGenClose = "\x02"
)

// Shell generators of endless input.
const (
	advGenZeros      = "cat /dev/zero"
	advGenCSVLine    = "printf 'a,b,label\\n'; yes '1.5,' | tr -d '\\n'"
	advGenDigits     = "yes 1 | tr -d '\\n'"
	advGenCSVRows    = "printf 'a,b,label\\n'; yes '0.5,1.5,x'"
	advGenLIBSVMLine = "printf '1 '; yes 1 | tr -d '\\n'"
	advGenPairsLine  = "printf 'i,j,y\\n0,1,'; yes 1 | tr -d '\\n'"
)

// advContents returns the variants of an input class for a content kind.
func advContents(kind, class string) []advContent {
	switch kind {
	case "csv":
		return advCSV(class)
	case "libsvm":
		return advLIBSVM(class)
	case "idx":
		return advIDX(class)
	case "npy", "targetnpy":
		return advNPY(kind, class)
	case "model", "kmodel":
		return advModel(kind, class)
	case "triplets", "pairs", "distances", "pairlist":
		return advConstraints(kind, class)
	case "target":
		return advTarget(class)
	case "labels":
		return advLabels(class)
	}
	return nil
}

func advCSV(class string) []advContent {
	rows := advIrisRows(30)
	switch class {
	case "empty":
		return advFail(advContent{variant: "0 bytes"}, advContent{variant: "blank lines", data: []byte("\n\n\n")})
	case "header-only":
		return advFail(advContent{data: []byte(advIrisHead)})
	case "one-row":
		return []advContent{{data: []byte(advIrisHead + "5.1,3.5,1.4,0.2,setosa\n")}}
	case "ragged":
		return advFail(advContent{data: []byte(advIrisHead + rows + "1,2,3\n" + rows)}, advContent{variant: "long row", data: []byte(advIrisHead + rows + "1,2,3,4,5,6,7,x\n")})
	case "unbounded-line":
		return advFail(advContent{variant: "endless fields", gen: advGenCSVLine}, advContent{variant: "endless field", gen: advGenDigits},
			advContent{variant: "10 MB line", data: []byte(advIrisHead + strings.Repeat("1.", 5<<20) + ",setosa\n" + rows)})
	case "binary":
		return advFail(advContent{variant: "/dev/zero", path: "/dev/zero"}, advContent{variant: "zeros stream", gen: advGenZeros},
			advContent{variant: "random", data: advRandom(1<<16, 1)})
	case "lying-header":
		var h strings.Builder
		for i := 0; i < 200000; i++ {
			fmt.Fprintf(&h, "f%d,", i)
		}
		return advFail(advContent{variant: "200000 columns", data: []byte(h.String() + "label\n" + rows)})
	case "compressed-bomb":
		return advFail(advContent{variant: "1 GB of zeros", path: "{asset:zeros.gz}"}, advContent{variant: "2 GB of rows", path: "{asset:rows.csv.gz}"},
			advContent{variant: "2 GB line", path: "{asset:line.gz}"}, advContent{variant: "trailing garbage", path: "{asset:trailing.csv.gz}"})
	case "wrong-encoding":
		return advFail(advContent{variant: "UTF-16", data: advUTF16(advIrisHead + rows)},
			advContent{variant: "CR line endings", data: []byte(strings.ReplaceAll(advIrisHead+rows, "\n", "\r"))},
			advContent{variant: "Latin-1 labels", data: []byte(advIrisHead + strings.ReplaceAll(rows, "setosa", "s\xe9tosa"))})
	case "non-finite":
		return advFail(advContent{variant: "NaN", data: []byte(advIrisHead + rows + "NaN,1,1,1,setosa\n")},
			advContent{variant: "Inf", data: []byte(advIrisHead + rows + "1,Inf,1,1,setosa\n")},
			advContent{variant: "1e999", data: []byte(advIrisHead + rows + "1,1,1e999,1,setosa\n")})
	case "extreme-magnitude":
		return []advContent{{variant: "1e307", data: []byte(advIrisHead + advScale(rows, "e307"))},
			{variant: "subnormal", data: []byte(advIrisHead + advScale(rows, "e-315"))},
			{variant: "huge", data: []byte(advIrisHead + advScale(rows, "e300"))}}
	case "label-garbage":
		return advFail(advContent{variant: "NaN", data: []byte(advIrisHead + strings.Replace(rows, "setosa", "NaN", 1))},
			advContent{variant: "NA", data: []byte(advIrisHead + strings.Replace(rows, "setosa", "NA", 1))},
			advContent{variant: "?", data: []byte(advIrisHead + strings.Replace(rows, "setosa", "?", 1))},
			advContent{variant: "empty", data: []byte(advIrisHead + strings.Replace(rows, "setosa", "", 1))},
			advContent{variant: "NUL", data: []byte(advIrisHead + strings.Replace(rows, "setosa", "0\x00\x00", 1))},
			advContent{variant: "control", data: []byte(advIrisHead + strings.Replace(rows, "setosa", "a\x1bb", 1))},
			advContent{variant: "100 kB label", data: []byte(advIrisHead + strings.Replace(rows, "setosa", strings.Repeat("L", 100000), 1))},
			advContent{variant: "10 MB label", data: []byte(advIrisHead + strings.Replace(rows, "setosa", strings.Repeat("L", 10<<20), 1))})
	}
	return nil
}

// advScale appends an exponent to every feature value of CSV rows.
func advScale(rows, exp string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(rows, "\n"), "\n") {
		f := strings.Split(l, ",")
		for i := 0; i < len(f)-1; i++ {
			f[i] += exp
		}
		b.WriteString(strings.Join(f, ",") + "\n")
	}
	return b.String()
}

func advLIBSVM(class string) []advContent {
	rows := advLibsvmRows(30)
	switch class {
	case "empty":
		return advFail(advContent{variant: "0 bytes"}, advContent{variant: "comments", data: []byte("# nothing\n\n")})
	case "header-only":
		return advFail(advContent{data: []byte("label 1 2 3 4\n" + rows)})
	case "one-row":
		return []advContent{{data: []byte("1 1:0.5 2:0.25\n")}}
	case "ragged":
		return advFail(advContent{variant: "no colon", data: []byte(rows + "1 1:2 3\n")}, advContent{variant: "double colon", data: []byte(rows + "1 1:2:3\n")})
	case "unbounded-line":
		return advFail(advContent{variant: "endless token", gen: advGenLIBSVMLine},
			advContent{variant: "endless pairs", gen: "printf '1 '; seq 1 100000000 | sed 's/$/:1/' | tr '\\n' ' '"})
	case "binary":
		return advFail(advContent{variant: "/dev/zero", path: "/dev/zero"}, advContent{variant: "random", data: advRandom(1<<16, 2)})
	case "lying-header":
		return advFail(advContent{variant: "index 4194304", data: []byte(rows + "1 4194304:1\n")},
			advContent{variant: "index 2^63", data: []byte(rows + "1 9223372036854775807:1\n")})
	case "compressed-bomb":
		return advFail(advContent{variant: "1 GB of zeros", path: "{asset:zeros.gz}"}, advContent{variant: "2 GB line", path: "{asset:line.gz}"})
	case "wrong-encoding":
		return advFail(advContent{variant: "UTF-16", data: advUTF16(rows)}, advContent{variant: "CR line endings", data: []byte(strings.ReplaceAll(rows, "\n", "\r"))})
	case "non-finite":
		return advFail(advContent{variant: "nan", data: []byte(rows + "1 1:nan\n")}, advContent{variant: "inf", data: []byte(rows + "1 2:-inf\n")})
	case "extreme-magnitude":
		return []advContent{{variant: "1e308", data: []byte(rows + "1 1:1e308 2:-1e308\n")}, {variant: "subnormal", data: []byte(strings.ReplaceAll(rows, " 2:", " 2:1e-320"+"0"))}}
	case "label-garbage":
		return advFail(advContent{variant: "NaN", data: []byte(rows + "NaN 1:1\n")}, advContent{variant: "?", data: []byte(rows + "? 1:1\n")},
			advContent{variant: "NUL", data: []byte(rows + "0\x00\x00 1:1\n")}, advContent{variant: "100 kB label", data: []byte(rows + strings.Repeat("L", 100000) + " 1:1\n")})
	}
	return nil
}

// advIDXFile returns an IDX file of unsigned bytes with the given dimensions
// and body.
func advIDXFile(typ byte, dims []uint32, body []byte) []byte {
	b := []byte{0, 0, typ, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, body...)
}

func advIDX(class string) []advContent {
	imgs := advIDXFile(8, []uint32{30, 2, 2}, advRandom(120, 3))
	labs := make([]byte, 30)
	for i := range labs {
		labs[i] = byte(i % 3)
	}
	lab := advIDXFile(8, []uint32{30}, labs)
	switch class {
	case "empty":
		return advFail(advContent{data: nil, data2: lab})
	case "header-only":
		return advFail(advContent{data: advIDXFile(8, []uint32{30, 2, 2}, nil), data2: lab})
	case "one-row":
		return []advContent{{data: advIDXFile(8, []uint32{1, 2, 2}, []byte{1, 2, 3, 4}), data2: advIDXFile(8, []uint32{1}, []byte{0})}}
	case "ragged":
		return advFail(advContent{data: imgs, data2: advIDXFile(8, []uint32{29}, labs[:29])})
	case "unbounded-line":
		return advFail(advContent{variant: "endless body", gen: "printf '\\0\\0\\10\\3\\0\\0\\0\\36\\0\\0\\0\\2\\0\\0\\0\\2'; cat /dev/zero", data2: lab})
	case "binary":
		return advFail(advContent{variant: "random", data: advRandom(4096, 4), data2: lab}, advContent{variant: "/dev/zero", path: "/dev/zero", data2: lab})
	case "lying-header":
		return advFail(advContent{variant: "1e6×1e6", data: advIDXFile(8, []uint32{1000000, 1000000}, advRandom(64, 5)), data2: lab},
			advContent{variant: "4e9 labels", data: imgs, data2: advIDXFile(8, []uint32{4000000000}, labs)})
	case "compressed-bomb":
		return advFail(advContent{path: "{asset:zeros.gz}", data2: lab})
	case "wrong-encoding":
		little := []byte{0, 0, 8, 3, 30, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0}
		return advFail(advContent{variant: "little-endian", data: append(little, advRandom(120, 6)...), data2: lab})
	case "non-finite":
		body := make([]byte, 0, 120*8)
		for i := 0; i < 120; i++ {
			body = binary.BigEndian.AppendUint64(body, 0x7ff8000000000001)
		}
		return advFail(advContent{variant: "NaN doubles", data: advIDXFile(0x0e, []uint32{30, 2, 2}, body), data2: lab})
	case "extreme-magnitude":
		body := make([]byte, 0, 120*8)
		for i := 0; i < 120; i++ {
			body = binary.BigEndian.AppendUint64(body, 0x7fefffffffffffff-uint64(i))
		}
		return []advContent{{variant: "MaxFloat64", data: advIDXFile(0x0e, []uint32{30, 2, 2}, body), data2: lab}}
	case "label-garbage":
		return advFail(advContent{variant: "float NaN labels", data: imgs, data2: advIDXFile(0x0e, []uint32{30}, bytes.Repeat([]byte{0x7f, 0xf8, 0, 0, 0, 0, 0, 1}, 30))})
	}
	return nil
}

// advNPYFile returns a .npy file with the given header dictionary and body.
func advNPYFile(dict string, body []byte) []byte {
	h := dict
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	return append(append(b, h...), body...)
}

func advF64s(vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b, _ = binary.Append(b, binary.LittleEndian, v)
	}
	return b
}

func advNPY(kind, class string) []advContent {
	n := 30
	if kind == "targetnpy" {
		n = 6
	}
	vals := make([]float64, 0, n*n)
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := r.Float64()
			if i == j {
				v += float64(n)
			}
			vals = append(vals, v)
		}
	}
	if kind == "targetnpy" { // symmetric
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				vals[i*n+j] = vals[j*n+i]
			}
		}
	} else {
		vals = vals[:n*4]
	}
	cols := 4
	if kind == "targetnpy" {
		cols = n
	}
	x := advNPYFile(fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", n, cols), advF64s(vals...))
	labs := make([]byte, 0, 8*30)
	for i := 0; i < 30; i++ {
		labs = binary.LittleEndian.AppendUint64(labs, uint64(i%3))
	}
	y := advNPYFile("{'descr': '<i8', 'fortran_order': False, 'shape': (30,), }", labs)
	switch class {
	case "empty":
		return advFail(advContent{data2: y})
	case "header-only":
		return advFail(advContent{data: advNPYFile(fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", n, cols), nil), data2: y})
	case "one-row":
		return []advContent{{data: advNPYFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", advF64s(1)), data2: advNPYFile("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8))}}
	case "ragged":
		if kind == "targetnpy" {
			return advFail(advContent{variant: "not square", data: advNPYFile(fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", n, n-1), advF64s(vals[:n*(n-1)]...))},
				advContent{variant: "3-D", data: advNPYFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2), }", advF64s(1, 2, 3, 4, 5, 6, 7, 8))})
		}
		return advFail(advContent{data: x, data2: advNPYFile("{'descr': '<i8', 'fortran_order': False, 'shape': (29,), }", labs[:29*8])},
			advContent{variant: "3-D", data: advNPYFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2), }", advF64s(1, 2, 3, 4, 5, 6, 7, 8)), data2: y})
	case "unbounded-line":
		hd := advNPYFile("{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000), }", nil)
		return advFail(advContent{variant: "endless body", gen: fmt.Sprintf("printf '%s'; cat /dev/zero", advOctal(hd)), data2: y},
			advContent{variant: "endless header", gen: "printf '\\223NUMPY\\1\\0\\377\\377'; yes ' ' | tr -d '\\n'", data2: y})
	case "binary":
		return advFail(advContent{variant: "random", data: advRandom(4096, 10), data2: y}, advContent{variant: "/dev/zero", path: "/dev/zero", data2: y})
	case "lying-header":
		return advFail(advContent{variant: "1e6×1e6", data: advNPYFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", advF64s(vals...)), data2: y},
			advContent{variant: "2^62", data: advNPYFile("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 2), }", advF64s(vals...)), data2: y})
	case "compressed-bomb":
		return advFail(advContent{path: "{asset:zeros.gz}", data2: y})
	case "wrong-encoding":
		return advFail(advContent{variant: "object dtype", data: advNPYFile(fmt.Sprintf("{'descr': '|O', 'fortran_order': False, 'shape': (%d, %d), }", n, cols), advRandom(8*n*cols, 11)), data2: y},
			advContent{variant: "unicode dtype", data: advNPYFile("{'descr': '<U3', 'fortran_order': False, 'shape': (2, 2), }", bytes.Repeat([]byte("a\x00\x00\x00"), 12)), data2: y},
			advContent{variant: "float16", data: advNPYFile("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }", make([]byte, 8)), data2: y})
	case "non-finite":
		nan := advF64s(vals...)
		binary.LittleEndian.PutUint64(nan[5*8:], 0x7ff8000000000001)
		return advFail(advContent{data: advNPYFile(fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", n, cols), nan), data2: y})
	case "extreme-magnitude":
		v := make([]float64, len(vals))
		for i := range v {
			v[i] = vals[i] * 1e307
		}
		return []advContent{{data: advNPYFile(fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", n, cols), advF64s(v...)), data2: y}}
	case "label-garbage":
		if kind == "targetnpy" {
			return nil
		}
		nanLabels := bytes.Repeat([]byte{1, 0, 0, 0, 0, 0, 0xf8, 0x7f}, 30)
		return advFail(advContent{variant: "NaN labels", data: x, data2: advNPYFile("{'descr': '<f8', 'fortran_order': False, 'shape': (30,), }", nanLabels)},
			advContent{variant: "NUL labels", data: x, data2: advNPYFile("{'descr': '<U2', 'fortran_order': False, 'shape': (30,), }", make([]byte, 30*8))},
			advContent{variant: "object labels", data: x, data2: advNPYFile("{'descr': '|O', 'fortran_order': False, 'shape': (30,), }", advRandom(240, 12))})
	}
	return nil
}

// advOctal writes b as printf octal escapes.
func advOctal(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		fmt.Fprintf(&s, "\\%03o", c)
	}
	return s.String()
}

// advModelJSON returns a metric or kernel model file with the given parts.
func advModelJSON(kind, classes, body string) []byte {
	return []byte(fmt.Sprintf(`{"format": "psdlearn-model", "version": 2, "kind": %q, %s "classes": %s}`, kind, body, classes))
}

const advMetricBody = `"metric": {"dim": 4, "m": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]},`

func advModel(kind, class string) []advContent {
	cls := `["0","1","2"]`
	k := "metric"
	body := advMetricBody
	if kind == "kmodel" {
		k = "kernel"
		var v strings.Builder
		for i := 0; i < 150; i++ {
			if i > 0 {
				v.WriteString(",")
			}
			fmt.Fprintf(&v, "[%g]", 1/12.25)
		}
		body = `"kernel": {"n": 150, "rank": 1, "lambda": [1], "v": [` + v.String() + `]},`
	}
	good := advModelJSON(k, cls, body)
	switch class {
	case "empty":
		return advFail(advContent{variant: "0 bytes"}, advContent{variant: "{}", data: []byte("{}")})
	case "header-only":
		return advFail(advContent{data: []byte(`{"format": "psdlearn-model", "version": 2, "kind": "` + k + `"}`)})
	case "one-row":
		if kind == "kmodel" {
			return advFail(advContent{data: advModelJSON(k, cls, `"kernel": {"n": 1, "rank": 1, "lambda": [1], "v": [[1]]},`)})
		}
		return advFail(advContent{data: advModelJSON(k, cls, `"metric": {"dim": 1, "m": [[1]]},`)})
	case "ragged":
		return advFail(advContent{data: advModelJSON(k, cls, `"metric": {"dim": 4, "m": [[1,0,0,0],[0,1,0],[0,0,1,0],[0,0,0,1]]},`)})
	case "unbounded-line":
		return advFail(advContent{variant: "endless class name", gen: `printf '{"format":"psdlearn-model","version":2,"kind":"metric","classes":["'; yes a | tr -d '\n'`},
			advContent{variant: "endless array", gen: `printf '{"format":"psdlearn-model","version":2,"kind":"metric","info":{"x":['; yes '[],' | tr -d '\n'`})
	case "binary":
		return advFail(advContent{variant: "/dev/zero", path: "/dev/zero"}, advContent{variant: "random", data: advRandom(4096, 13)})
	case "lying-header":
		return advFail(advContent{variant: "dim 1e6", data: advModelJSON(k, cls, `"metric": {"dim": 1000000, "m": [[1]]},`)},
			advContent{variant: "kernel n 1e9", data: advModelJSON("kernel", cls, `"kernel": {"n": 1000000000, "rank": 1, "lambda": [1], "v": [[1]]},`)},
			advContent{variant: "factor of another matrix", data: bytes.Replace(advModelJSON(k, cls, `"metric": {"dim": 2, "m": [[4,0],[0,1]], "l": [[2,0],[0,2]]},`), []byte(`"version": 2`), []byte(`"version": 3`), 1)},
			advContent{variant: "factor rows 1e6", data: bytes.Replace(advModelJSON(k, cls, `"metric": {"dim": 1000000, "m": [[1]], "l": [[1]]},`), []byte(`"version": 2`), []byte(`"version": 3`), 1)})
	case "compressed-bomb":
		return advFail(advContent{path: "{asset:zeros.gz}"})
	case "wrong-encoding":
		return advFail(advContent{variant: "UTF-16", data: advUTF16(string(good))})
	case "non-finite":
		return advFail(advContent{variant: "1e999", data: advModelJSON(k, cls, `"metric": {"dim": 2, "m": [[1e999,0],[0,1]]},`)},
			advContent{variant: "NaN", data: advModelJSON(k, cls, `"metric": {"dim": 2, "m": [[NaN,0],[0,1]]},`)})
	case "extreme-magnitude":
		if kind == "kmodel" {
			return []advContent{{variant: "zero kernel", mustWarn: true, data: []byte(strings.ReplaceAll(string(good), "[0.08163265306122448]", "[0]"))}}
		}
		return []advContent{{variant: "zero metric", mustWarn: true, data: advModelJSON(k, cls, `"metric": {"dim": 4, "m": [[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0]]},`)},
			{variant: "1e308", data: advModelJSON(k, cls, `"metric": {"dim": 4, "m": [[1e308,0,0,0],[0,1e308,0,0],[0,0,1e308,0],[0,0,0,1e308]]},`)},
			{variant: "subnormal", mustWarn: true, data: advModelJSON(k, cls, `"metric": {"dim": 4, "m": [[1e-320,0,0,0],[0,1e-320,0,0],[0,0,1e-320,0],[0,0,0,1e-320]]},`)}}
	case "label-garbage":
		return advFail(advContent{variant: "NaN", data: advModelJSON(k, `["0","NaN","2"]`, body)},
			advContent{variant: "NUL", data: advModelJSON(k, `["0","1\u0000","2"]`, body)},
			advContent{variant: "empty", data: advModelJSON(k, `["0","","2"]`, body)},
			advContent{variant: "10 MB", data: advModelJSON(k, `["0","`+strings.Repeat("L", 10<<20)+`","2"]`, body)})
	}
	return nil
}

func advConstraints(kind, class string) []advContent {
	head := map[string]string{"triplets": "i,j,k\n", "pairs": "i,j,y\n", "distances": "i,j,d\n", "pairlist": "i,j,y\n"}[kind]
	var rows strings.Builder
	for t := 0; t < 40; t++ {
		i, j := t%50, 50+t%50
		switch kind {
		case "triplets":
			fmt.Fprintf(&rows, "%d,%d,%d\n", i, i+1, j)
		case "distances":
			fmt.Fprintf(&rows, "%d,%d,%g\n", t%10, 10+t%7, 0.5+float64(t%5)/10)
		default:
			fmt.Fprintf(&rows, "%d,%d,1\n%d,%d,-1\n", i, i+1, i, j)
		}
	}
	good := head + rows.String()
	switch class {
	case "empty":
		return advFail(advContent{variant: "0 bytes"})
	case "header-only":
		return advFail(advContent{data: []byte(head)})
	case "one-row":
		one := map[string]string{"triplets": "0,1,60\n", "pairs": "0,1,1\n", "distances": "0,1,0.5\n", "pairlist": "0,1,1\n"}[kind]
		return []advContent{{data: []byte(head + one)}}
	case "ragged":
		return advFail(advContent{data: []byte(good + "1,2\n")}, advContent{variant: "4 fields", data: []byte(good + "1,2,3,4\n")})
	case "unbounded-line":
		return advFail(advContent{variant: "endless field", gen: advGenPairsLine}, advContent{variant: "endless digits", gen: advGenDigits})
	case "binary":
		return advFail(advContent{variant: "/dev/zero", path: "/dev/zero"}, advContent{variant: "random", data: advRandom(4096, 14)})
	case "lying-header":
		return advFail(advContent{variant: "wide header", data: []byte(strings.Repeat("i,", 100000) + "j\n" + rows.String())},
			advContent{variant: "wrong header", data: []byte("a,b,c\n" + rows.String())})
	case "compressed-bomb":
		return advFail(advContent{path: "{asset:zeros.gz}"}, advContent{variant: "gzip", path: "{asset:rows.csv.gz}"})
	case "wrong-encoding":
		return advFail(advContent{variant: "UTF-16", data: advUTF16(good)}, advContent{variant: "CR", data: []byte(strings.ReplaceAll(good, "\n", "\r"))})
	case "non-finite":
		return advFail(advContent{data: []byte(head + "0,1,NaN\n" + rows.String())}, advContent{variant: "Inf", data: []byte(head + "0,1,Inf\n" + rows.String())})
	case "extreme-magnitude":
		return advFail(advContent{variant: "index 2^63", data: []byte(head + "9223372036854775807,1,1\n" + rows.String())},
			advContent{variant: "index 1e20", data: []byte(head + "100000000000000000000,1,1\n" + rows.String())})
	case "label-garbage":
		return advFail(advContent{variant: "NaN", data: []byte(head + "0,1,nan\n" + rows.String())}, advContent{variant: "?", data: []byte(head + "0,1,?\n" + rows.String())},
			advContent{variant: "NUL", data: []byte(head + "0,1,\x00\n" + rows.String())})
	}
	return nil
}

func advTarget(class string) []advContent {
	sym := func(n int, scale string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if j > 0 {
					b.WriteString(",")
				}
				v := "0.1"
				if i == j {
					v = "1"
				}
				b.WriteString(v + scale)
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	good := sym(6, "")
	switch class {
	case "empty":
		return advFail(advContent{})
	case "header-only":
		return advFail(advContent{data: []byte("a,b,c,d,e,f\n")})
	case "one-row":
		return advFail(advContent{data: []byte("1\n")})
	case "ragged":
		return advFail(advContent{data: []byte(good + "1,2\n")})
	case "unbounded-line":
		return advFail(advContent{variant: "endless fields", gen: "yes '1,' | tr -d '\\n'"}, advContent{variant: "endless digits", gen: advGenDigits})
	case "binary":
		return advFail(advContent{variant: "/dev/zero", path: "/dev/zero"}, advContent{variant: "random", data: advRandom(4096, 15)})
	case "lying-header":
		return advFail(advContent{variant: "wide first row", data: []byte(strings.Repeat("1,", 200000) + "1\n")})
	case "compressed-bomb":
		return advFail(advContent{path: "{asset:zeros.gz}"})
	case "wrong-encoding":
		return advFail(advContent{variant: "UTF-16", data: advUTF16(good)}, advContent{variant: "CR", data: []byte(strings.ReplaceAll(good, "\n", "\r"))})
	case "non-finite":
		return advFail(advContent{data: []byte(strings.Replace(good, "0.1", "NaN", 1))})
	case "extreme-magnitude":
		return []advContent{{variant: "1e300", data: []byte(sym(6, "e300"))}, {variant: "subnormal", data: []byte(sym(6, "e-320"))}}
	case "label-garbage":
		return nil // a target has no labels (the labels reader has)
	}
	return nil
}

func advLabels(class string) []advContent {
	good := "a\nb\na\nb\na\nb\n"
	switch class {
	case "empty":
		return advFail(advContent{})
	case "header-only":
		return advFail(advContent{data: []byte("label\n")})
	case "one-row":
		return advFail(advContent{data: []byte("a\n")})
	case "ragged":
		return advFail(advContent{data: []byte(good + "c\n")})
	case "unbounded-line":
		return advFail(advContent{gen: advGenDigits})
	case "binary":
		return advFail(advContent{variant: "/dev/zero", path: "/dev/zero"})
	case "lying-header":
		return nil
	case "compressed-bomb":
		return advFail(advContent{path: "{asset:zeros.gz}"})
	case "wrong-encoding":
		return advFail(advContent{variant: "UTF-16", data: advUTF16(good)}, advContent{variant: "Latin-1", data: []byte("caf\xe9\nb\nb\na\nb\na\n")})
	case "non-finite", "extreme-magnitude":
		return nil
	case "label-garbage":
		return advFail(advContent{variant: "NaN", data: []byte("NaN\nb\na\nb\na\nb\n")}, advContent{variant: "NUL", data: []byte("a\x00\nb\na\nb\na\nb\n")},
			advContent{variant: "100 kB", data: []byte(strings.Repeat("L", 100000) + "\nb\na\nb\na\nb\n")})
	}
	return nil
}

// advReaderCases builds every reader × input class case.
func advReaderCases() []advCase {
	var out []advCase
	for _, r := range advReaders {
		for _, class := range advInputClasses {
			for i, c := range advContents(r.kind, class) {
				name := fmt.Sprintf("reader/%s/%s", r.name, class)
				if c.variant != "" {
					name += "/" + c.variant
				} else if i > 0 {
					name += fmt.Sprint("/", i)
				}
				ac := advCase{name: name, group: "reader", class: class, files: map[string][]byte{},
					mustFail: c.mustFail, mustWarn: c.mustWarn, noUsage: true}
				in := ""
				switch {
				case c.gen != "":
					in = advGenOpen + c.gen + advGenClose
				case c.path != "":
					in = c.path
				default:
					in = "{dir}/in" + r.ext
					ac.files["in"+r.ext] = c.data
				}
				in2 := "{dir}/in2" + r.ext
				if c.data2 != nil {
					ac.files["in2"+r.ext] = c.data2
				} else if r.kind == "idx" || r.kind == "npy" {
					in2 = in
				}
				for _, a := range r.args {
					a = strings.ReplaceAll(a, "{in2}", in2)
					ac.args = append(ac.args, strings.ReplaceAll(a, "{in}", in))
				}
				if r.stdin {
					ac.stdin = in
				}
				out = append(out, ac)
			}
		}
	}
	return out
}

// Shared generated files ("{asset:NAME}"), made once per test binary.
var (
	advAssetOnce sync.Map // name → *sync.Once
	advAssetDir  string
)

// advAsset returns the path of a shared generated file.
func advAsset(t *testing.T, name string) string {
	t.Helper()
	o, _ := advAssetOnce.LoadOrStore(name, new(sync.Once))
	p := filepath.Join(advAssetDir, name)
	o.(*sync.Once).Do(func() {
		var b []byte
		switch name {
		case "zeros.gz": // 1 GB of zeros: 1,000 members of 1 MB
			b = advGzipMembers(make([]byte, 1<<20), 1000)
		case "rows.csv.gz": // 2 GiB of rows
			b = append(advGzip([]byte("a,b,label\n")), advGzipMembers(bytes.Repeat([]byte("0.5,1.5,x\n"), 1<<20/10), 2048)...)
		case "line.gz": // one line of 2 GiB
			b = append(advGzip([]byte("a,b,label\n")), advGzipMembers(bytes.Repeat([]byte("1."), 1<<19), 2048)...)
		case "trailing.csv.gz":
			b = append(advGzip([]byte(advIrisHead+advIrisRows(30))), "trailing garbage\n"...)
		case "triplets.csv":
			b = []byte("i,j,k\n0,1,60\n1,2,70\n2,3,80\n3,4,90\n60,61,5\n70,71,6\n100,101,7\n110,111,8\n51,52,120\n53,54,130\n")
		case "pairs.csv":
			var s strings.Builder
			s.WriteString("i,j,y\n")
			for i := 0; i < 40; i++ {
				fmt.Fprintf(&s, "%d,%d,1\n%d,%d,-1\n", i, i+1, i, 60+i)
			}
			b = []byte(s.String())
		case "distances.csv":
			b = []byte("i,j,d\n0,1,0.5\n1,2,0.7\n2,3,0.2\n3,4,0.9\n0,4,1.1\n1,3,0.4\n")
		case "target.csv":
			b = []byte("1,0.5,0.1,0.1,0,0\n0.5,1,0.1,0.1,0,0\n0.1,0.1,1,0.5,0,0\n0.1,0.1,0.5,1,0,0\n0,0,0,0,1,0.5\n0,0,0,0,0.5,1\n")
		case "iris.csv":
			b = []byte(advIrisHead + advIrisRows(60))
		case "labels.txt":
			b = []byte("a\na\nb\nb\nc\nc\n")
		default:
			t.Fatalf("unknown asset %s", name)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	return p
}

// advGzip compresses b into one gzip member.
func advGzip(b []byte) []byte {
	var out bytes.Buffer
	w, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// advGzipMembers returns the gzip member of chunk repeated n times: a file
// that decompresses to n·len(chunk) bytes at the cost of compressing one.
func advGzipMembers(chunk []byte, n int) []byte {
	return bytes.Repeat(advGzip(chunk), n)
}
