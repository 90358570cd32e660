package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/internal/npy"
	"github.com/psdlearn/psdlearn/model"
)

// TestAdversarial is the hostile-input generator's suite: it builds the
// psdlearn binary (cgo and pure Go), generates the cases of
// adversarial_grammar_test.go — every reader × input class and every
// command × flag × value class — and runs each under a memory ulimit and a
// timeout, checking the properties of advProperties.
//
// By default (CI) it runs a seeded sample of advSampleDefault cases; the
// environment variable PSDLEARN_ADVERSARIAL selects "full" (every case, on
// both binaries), a sample size, or "off". PSDLEARN_ADVERSARIAL_SEED
// changes the sample, PSDLEARN_ADVERSARIAL_MATCH keeps only the cases whose
// name contains it, PSDLEARN_ADVERSARIAL_VERBOSE logs every case as it
// ends, and PSDLEARN_ADVERSARIAL_BIN=CGO[,PUREGO] runs prebuilt binaries.
func TestAdversarial(t *testing.T) {
	mode := os.Getenv("PSDLEARN_ADVERSARIAL")
	if testing.Short() || mode == "off" {
		t.Skip("builds the binary and runs it a few hundred times")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found (the cases use its ulimit and process substitution)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	dir := t.TempDir()
	advAssetDir = filepath.Join(dir, "assets")
	if err := os.Mkdir(advAssetDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bins := []advBinary{{name: "cgo", path: filepath.Join(dir, "psdlearn")}, {name: "purego", path: filepath.Join(dir, "psdlearn-purego")}}
	if prebuilt := os.Getenv("PSDLEARN_ADVERSARIAL_BIN"); prebuilt != "" {
		// Binaries built elsewhere (e.g. from an older commit, to see what
		// the generator finds there): CGO,PUREGO.
		cgo, pure, _ := strings.Cut(prebuilt, ",")
		bins[0].path, bins[1].path = cgo, advOr(pure, cgo)
	}
	for _, b := range bins {
		if os.Getenv("PSDLEARN_ADVERSARIAL_BIN") != "" {
			break
		}
		build := exec.Command(goBin, "build", "-o", b.path, ".")
		build.Env = os.Environ()
		if b.name == "purego" {
			build.Env = append(build.Env, "CGO_ENABLED=0")
		}
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build (%s): %v\n%s", b.name, err, out)
		}
	}
	r := &advRunner{bash: bash, bin: bins[0].path, dir: dir, timeout: advTimeout(mode)}
	helps := map[string]string{}
	for cmd := range advBases {
		out, err := exec.Command(r.bin, "help", cmd).Output()
		if err != nil {
			t.Fatalf("psdlearn help %s: %v", cmd, err)
		}
		helps[cmd] = string(out)
	}
	r.model = filepath.Join(dir, "model.json")
	r.kmodel = filepath.Join(dir, "kmodel.json")
	for _, args := range [][]string{
		{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--quiet", "--out", r.model},
		{"cluster", "--data", "builtin:iris", "--runs", "1", "--quiet", "--out", r.kmodel},
	} {
		if out, err := exec.Command(r.bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("psdlearn %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	readers, flags := advReaderCases(), advFlagCases(helps)
	all := append(append([]advCase(nil), readers...), flags...)
	seed := uint64(1)
	if s := os.Getenv("PSDLEARN_ADVERSARIAL_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("PSDLEARN_ADVERSARIAL_SEED=%q: %v", s, err)
		}
	}
	pool := all
	if m := os.Getenv("PSDLEARN_ADVERSARIAL_MATCH"); m != "" {
		pool = nil
		for _, c := range all {
			if strings.Contains(c.name, m) {
				pool = append(pool, c)
			}
		}
	}
	run := advSample(pool, mode, seed)
	// Every case runs on one binary; in full mode the reader cases run on both.
	type job struct {
		c   advCase
		bin advBinary
	}
	var jobs []job
	for i, c := range run {
		b := bins[i%2]
		if mode == "full" {
			b = bins[0]
		}
		jobs = append(jobs, job{c, b})
		if mode == "full" && c.group == "reader" {
			jobs = append(jobs, job{c, bins[1]})
		}
	}
	t.Logf("adversarial: %d cases generated (%d reader × input class over %d readers and %d classes, %d command × flag × value class over %d value classes); running %d (seed %d, mode %q) under ulimit -v %d KiB, %s budget %s, timeout %v",
		len(all), len(readers), len(advReaders), len(advInputClasses), len(flags), len(advValueClasses), len(jobs), seed, advOr(mode, "ci"), advUlimitKiB, advBudgetEnv, advBudget, r.timeout)
	t.Logf("properties: %s", strings.Join(advPropertyNames, "; "))

	var (
		mu         sync.Mutex
		violations = map[string][]string{}
		timeouts   []string
		ran        int
		codes      = map[string]map[string]int{} // case → binary → exit status, to compare the builds
	)
	verbose := os.Getenv("PSDLEARN_ADVERSARIAL_VERBOSE") != ""
	work := make(chan job)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				res := r.run(t, j.c, j.bin.path)
				v := advCheck(j.c, res)
				mu.Lock()
				ran++
				name := j.c.name + " [" + j.bin.name + "]"
				for _, x := range v {
					violations[x.prop] = append(violations[x.prop], name+": "+x.detail+"\n      psdlearn "+advShowArgs(j.c.args))
				}
				if res.timedOut {
					timeouts = append(timeouts, fmt.Sprintf("%s (stderr %d bytes)", name, res.stderrLen))
				} else {
					if codes[j.c.name] == nil {
						codes[j.c.name] = map[string]int{}
					}
					codes[j.c.name][j.bin.name] = res.code
				}
				if verbose {
					t.Logf("%d/%d %s: exit %d%s, %d violations: %s", ran, len(jobs), name, res.code, map[bool]string{true: " (timeout)"}[res.timedOut], len(v), advCut(advErrorLine(res)))
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	t.Logf("adversarial: ran %d cases in %v; %d timed out after %v (a run still printing progress is allowed)", ran, time.Since(start).Round(time.Second), len(timeouts), r.timeout)
	for _, s := range timeouts {
		t.Logf("  timed out: %s", s)
	}
	for name, byBin := range codes {
		if c, p := byBin["cgo"], byBin["purego"]; len(byBin) == 2 && c != p {
			violations[propBackends] = append(violations[propBackends], fmt.Sprintf("%s: exit %d with cgo, %d pure Go", name, c, p))
		}
	}
	props := make([]string, 0, len(violations))
	for p := range violations {
		props = append(props, p)
	}
	sort.Strings(props)
	for _, p := range props {
		vs := violations[p]
		sort.Strings(vs)
		t.Errorf("property %q violated by %d cases:", p, len(vs))
		for i, v := range vs {
			if i == 40 && os.Getenv("PSDLEARN_ADVERSARIAL_ALL") == "" {
				t.Errorf("  … %d more (PSDLEARN_ADVERSARIAL_ALL=1 lists them)", len(vs)-i)
				break
			}
			t.Errorf("  %s", v)
		}
	}
}

// advBinary is a built psdlearn binary.
type advBinary struct{ name, path string }

func advOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// The resource limits of a case: the address-space ulimit (where the Go
// runtime's fatal "out of memory" shows) and the memory budget psdlearn is
// given; the peak RSS must stay within the budget plus advRSSSlack (the
// runtime, the binary, the native libraries' buffers).
const (
	advUlimitKiB = 4000000
	advBudgetEnv = "PSDLEARN_MAX_MEMORY=512MiB"
	advBudget    = "512MiB"
	advRSSSlack  = 384 << 20
	advBudgetB   = 512 << 20
)

// advSampleDefault is the number of cases CI runs (about a minute on 2
// cores); the sample is stratified: every reader and every input class,
// then flag cases.
const advSampleDefault = 160

func advTimeout(mode string) time.Duration {
	if mode == "full" {
		return 30 * time.Second
	}
	return 15 * time.Second
}

// advSample returns the cases to run: all of them in full mode, else a
// seeded sample of n (a number in mode, or advSampleDefault) with half
// reader and half flag cases.
func advSample(all []advCase, mode string, seed uint64) []advCase {
	if mode == "full" {
		return all
	}
	n := advSampleDefault
	if k, err := strconv.Atoi(mode); err == nil && k > 0 {
		n = k
	}
	if n >= len(all) {
		return all
	}
	rng := rand.New(rand.NewPCG(seed, 0xad7e))
	var readers, flags []advCase
	for _, c := range all {
		if c.group == "reader" {
			readers = append(readers, c)
		} else {
			flags = append(flags, c)
		}
	}
	rng.Shuffle(len(readers), func(i, j int) { readers[i], readers[j] = readers[j], readers[i] })
	rng.Shuffle(len(flags), func(i, j int) { flags[i], flags[j] = flags[j], flags[i] })
	nr := min(n/2, len(readers))
	out := append(append([]advCase(nil), readers[:nr]...), flags[:min(n-nr, len(flags))]...)
	return out
}

// advRunner runs cases.
type advRunner struct {
	bash, bin, dir string
	model, kmodel  string
	timeout        time.Duration
	seq            int
	mu             sync.Mutex
}

// advResult is what a case did.
type advResult struct {
	code           int // exit status; -1 when killed by a signal
	signal         string
	timedOut       bool
	stdout, stderr []byte // the first advCapture bytes
	stderrLen      int
	rssBytes       int64
	dir            string
	before         map[string]bool // files of the case directory before the run
	json           bool
}

const advCapture = 1 << 20

// capBuffer keeps the first advCapture bytes written and counts the rest.
type capBuffer struct {
	b bytes.Buffer
	n int
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.n += len(p)
	if room := advCapture - c.b.Len(); room > 0 {
		c.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// advQuote returns a for bash: literal text single-quoted, process
// substitutions as <(…).
func advQuote(a string) string {
	var b strings.Builder
	for {
		i := strings.Index(a, advGenOpen)
		if i < 0 {
			break
		}
		j := strings.Index(a[i:], advGenClose)
		if i > 0 {
			b.WriteString(advSingleQuote(a[:i]))
		}
		b.WriteString("<(" + a[i+len(advGenOpen):i+j] + ")")
		a = a[i+j+len(advGenClose):]
	}
	if a != "" || b.Len() == 0 {
		b.WriteString(advSingleQuote(a))
	}
	return b.String()
}

func advSingleQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// advShowArgs prints a command line for a report, long arguments cut.
func advShowArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(strings.ReplaceAll(a, advGenOpen, "<("), advGenClose, ")")
		if len(a) > 80 {
			a = a[:60] + fmt.Sprintf("…(%d bytes)", len(a))
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func (r *advRunner) run(t *testing.T, c advCase, bin string) advResult {
	r.mu.Lock()
	r.seq++
	cdir := filepath.Join(r.dir, fmt.Sprintf("case%05d", r.seq))
	r.mu.Unlock()
	if err := os.Mkdir(cdir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(cdir)
	for name, b := range c.files {
		if err := os.WriteFile(filepath.Join(cdir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expand := func(a string) string {
		a = strings.ReplaceAll(a, "{dir}", cdir)
		a = strings.ReplaceAll(a, "{model}", r.model)
		a = strings.ReplaceAll(a, "{kmodel}", r.kmodel)
		for {
			i := strings.Index(a, "{asset:")
			if i < 0 {
				return a
			}
			j := strings.IndexByte(a[i:], '}')
			a = a[:i] + advAsset(t, a[i+len("{asset:"):i+j]) + a[i+j+1:]
		}
	}
	script := fmt.Sprintf("ulimit -v %d || exit 97; exec %s", advUlimitKiB, advSingleQuote(bin))
	res := advResult{dir: cdir, before: map[string]bool{}}
	for _, a := range c.args {
		script += " " + advQuote(expand(a))
		if a == "--json" || a == "-json" || a == "--json=true" {
			res.json = true
		}
	}
	if c.stdin != "" {
		in := expand(c.stdin)
		if strings.HasPrefix(in, advGenOpen) {
			script += " < " + advQuote(in)
		} else {
			script += " < " + advSingleQuote(in)
		}
	} else {
		script += " < /dev/null"
	}
	entries, _ := os.ReadDir(cdir)
	for _, e := range entries {
		res.before[e.Name()] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bash, "-c", script)
	cmd.Dir = cdir
	cmd.Env = append(os.Environ(), advBudgetEnv, "PSDLEARN_BACKEND=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr capBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res.timedOut = ctx.Err() != nil
	// Kill what the process substitutions left (they end on SIGPIPE anyway).
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res.stdout, res.stderr, res.stderrLen = stdout.b.Bytes(), stderr.b.Bytes(), stderr.n
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			res.rssBytes = ru.Maxrss << 10
		}
		ws := ps.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			res.code, res.signal = -1, ws.Signal().String()
		default:
			res.code = ws.ExitStatus()
		}
	} else if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	if res.code == 97 {
		t.Fatalf("ulimit -v %d failed", advUlimitKiB)
	}
	return res
}

// advViolation is a property a case broke.
type advViolation struct{ prop, detail string }

// The properties every case is checked for.
const (
	propCrash    = "no runtime fatal error, panic or crash"
	propExit     = "exit status in {0,1,2} by the rule (2 for usage and flag-value errors only, 1 for the rest)"
	propRefused  = "unusable input refused (exit non-zero)"
	propOneLine  = "one-line error of at most 300 bytes (JSON errors start with \"schema\")"
	propForeign  = "every stderr line of a failed run is psdlearn's (nothing buries the error)"
	propRSS      = "peak RSS within the memory budget"
	propFinite   = "no non-finite number in an exit-0 output (stdout, progress lines, written files)"
	propReload   = "every written model reloads"
	propWarn     = "degenerate input used with a warning"
	propProgress = "a run killed at the timeout had shown progress"
	propBackends = "the cgo and pure-Go builds exit alike (full mode: every reader case on both)"
)

var advPropertyNames = []string{propCrash, propExit, propRefused, propOneLine, propForeign, propRSS, propFinite, propReload, propWarn, propProgress, propBackends}

var (
	advCrashRE     = regexp.MustCompile(`(?m)^(fatal error:|panic:|goroutine \d+ |runtime: |SIGSEGV|SIGABRT)|psdlearn: internal error`)
	advNonFiniteRE = regexp.MustCompile(`(?i)(^|[^a-z0-9_])[+-]?(nan|inf|infinity)([^a-z0-9_]|$)`)
	advResourceRE  = regexp.MustCompile(`(?i)memory|--max-input|--max-line|limit`)
)

// advErrorLine returns the error message of a failed run: the last stderr
// line, or the "error" of the JSON object on stdout under --json.
func advErrorLine(res advResult) string {
	if res.json {
		return strings.TrimSpace(string(res.stdout))
	}
	lines := strings.Split(strings.TrimRight(string(res.stderr), "\n"), "\n")
	return lines[len(lines)-1]
}

func advCut(s string) string {
	if len(s) > 240 {
		return fmt.Sprintf("%s…(%d bytes)", s[:200], len(s))
	}
	return s
}

// advCheck checks a case's result against the properties.
func advCheck(c advCase, res advResult) []advViolation {
	var v []advViolation
	add := func(p, format string, args ...any) { v = append(v, advViolation{p, fmt.Sprintf(format, args...)}) }
	all := string(res.stderr) + string(res.stdout)
	if res.signal != "" && !res.timedOut {
		add(propCrash, "killed by %s: %s", res.signal, advCut(advFirstMatch(all)))
		return v
	}
	if m := advCrashRE.FindString(all); m != "" {
		add(propCrash, "exit %d, output has %q: %s", res.code, m, advCut(advFirstMatchLine(all, m)))
		return v
	}
	if res.timedOut {
		if res.stderrLen == 0 {
			add(propProgress, "no output in %v", "the timeout")
		}
		return v
	}
	if res.code != 0 && res.code != 1 && res.code != 2 {
		add(propExit, "exit status %d", res.code)
	}
	if res.rssBytes > advBudgetB+advRSSSlack {
		add(propRSS, "peak RSS %d MiB over the budget %s + %d MiB", res.rssBytes>>20, advBudget, advRSSSlack>>20)
	}
	for _, l := range strings.Split(strings.TrimRight(string(res.stderr), "\n"), "\n") {
		if res.code != 0 && l != "" && !strings.HasPrefix(l, "psdlearn") {
			add(propForeign, "stderr line %q", advCut(l))
			break
		}
	}
	// What the user gave is echoed (a file named NaN): not a number.
	echoed := func(b []byte) []byte {
		for _, a := range c.args {
			if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
				a = v
			}
			if a != "" && advNonFiniteRE.MatchString(a) {
				b = bytes.ReplaceAll(b, []byte(a), nil)
			}
		}
		return b
	}
	if res.code == 0 {
		if c.mustFail {
			add(propRefused, "exit 0 for unusable input (stderr %q)", advCut(lastLine(res.stderr)))
		}
		if c.mustWarn && !strings.Contains(string(res.stderr), "warning") {
			add(propWarn, "exit 0 without a warning")
		}
		if m := advNonFinite(echoed(res.stdout)); m != "" {
			add(propFinite, "stdout has %s", m)
		}
		for _, l := range strings.Split(string(res.stderr), "\n") {
			if m := advNonFinite(echoed([]byte(l))); m != "" && !strings.HasPrefix(l, "psdlearn: warning") {
				add(propFinite, "stderr line has %s: %q", m, advCut(l))
				break
			}
		}
		entries, _ := os.ReadDir(res.dir)
		for _, e := range entries {
			if res.before[e.Name()] || e.IsDir() {
				continue
			}
			v = append(v, advCheckOutput(filepath.Join(res.dir, e.Name()))...)
		}
		return v
	}
	msg := advErrorLine(res)
	if res.json {
		var obj map[string]any
		if !strings.HasPrefix(msg, `{"schema":`) || json.Unmarshal([]byte(msg), &obj) != nil {
			add(propOneLine, "--json error output is not one JSON object starting with \"schema\": %q", advCut(msg))
		} else if e, _ := obj["error"].(string); len(e) > 300 {
			add(propOneLine, "JSON error of %d bytes", len(e))
		}
	} else {
		switch {
		case !strings.HasPrefix(msg, "psdlearn: "):
			add(propOneLine, "last stderr line %q is not a psdlearn error", advCut(msg))
		case len(msg) > 300:
			add(propOneLine, "error line of %d bytes: %q", len(msg), advCut(msg))
		}
	}
	switch {
	case res.code == 2 && c.noUsage && !strings.Contains(msg, " --"):
		add(propExit, "exit 2 (usage) for bad input: %q", advCut(msg))
	case res.code == 1 && c.usage == 2 && !advResourceRE.MatchString(msg),
		res.code == 1 && c.usage == 1 && strings.Contains(msg, "--"+c.flag+" ") && !advResourceRE.MatchString(msg):
		add(propExit, "exit 1 for a bad value of --%s: %q", c.flag, advCut(msg))
	}
	return v
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return lines[len(lines)-1]
}

func advFirstMatch(s string) string {
	if m := advCrashRE.FindString(s); m != "" {
		return advFirstMatchLine(s, m)
	}
	return lastLine([]byte(s))
}

func advFirstMatchLine(s, m string) string {
	i := strings.Index(s, m)
	j := strings.IndexByte(s[i:], '\n')
	if j < 0 {
		return s[i:]
	}
	return s[i : i+j]
}

// advNonFinite returns the first non-finite number token of b, or "".
func advNonFinite(b []byte) string {
	if m := advNonFiniteRE.Find(b); m != nil {
		i := bytes.Index(b, m)
		lo, hi := max(i-30, 0), min(i+len(m)+30, len(b))
		return fmt.Sprintf("%q in %q", strings.TrimSpace(string(m)), b[lo:hi])
	}
	return ""
}

// advCheckOutput checks a file a successful run wrote: no non-finite
// number, and a model file reloads.
func advCheckOutput(path string) []advViolation {
	var v []advViolation
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return nil
	case ".npy":
		m, err := npy.ReadFile(path)
		if err != nil {
			return []advViolation{{propReload, fmt.Sprintf("%s does not read back: %v", filepath.Base(path), err)}}
		}
		for _, x := range m.RawMatrix().Data {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return []advViolation{{propFinite, fmt.Sprintf("%s holds %v", filepath.Base(path), x)}}
			}
		}
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return []advViolation{{propReload, err.Error()}}
	}
	if m := advNonFinite(b); m != "" {
		v = append(v, advViolation{propFinite, fmt.Sprintf("%s has %s", filepath.Base(path), m)})
	}
	if bytes.Contains(b[:min(len(b), 200)], []byte(model.Format)) {
		if _, err := model.LoadFile(path); err != nil {
			v = append(v, advViolation{propReload, fmt.Sprintf("%s does not reload: %v", filepath.Base(path), errors.Unwrap(err))})
		}
	}
	return v
}
