package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Docker cannot run where the tests run, so these tests read the Dockerfile
// for the promises it makes (docs/cli.md, "Docker"): the build stage's Go
// toolchain is the one go.mod asks for, the image runs as an unprivileged
// user, and a .dockerignore keeps the build context small.

// dockerInstr is one Dockerfile instruction: its keyword (upper case) and
// arguments, continuation lines joined.
type dockerInstr struct {
	cmd, args string
	line      int
}

// parseDockerfile splits a Dockerfile into instructions, skipping comments
// and blank lines and joining lines continued with a backslash.
func parseDockerfile(src string) []dockerInstr {
	var out []dockerInstr
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(raw)
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(line, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(line)
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		cmd, args, _ := strings.Cut(text, " ")
		out = append(out, dockerInstr{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: start})
	}
	return out
}

// goDirective returns the major.minor of go.mod's go directive.
func goDirective(gomod string) (string, error) {
	m := regexp.MustCompile(`(?m)^go\s+(\d+)\.(\d+)(\.\d+)?\s*$`).FindStringSubmatch(gomod)
	if m == nil {
		return "", fmt.Errorf("go.mod has no go directive")
	}
	return m[1] + "." + m[2], nil
}

// golangTag matches the image of a FROM instruction that is the Go
// toolchain, golang:X.Y[.Z][-variant].
var golangTag = regexp.MustCompile(`^(?:docker\.io/)?(?:library/)?golang:(\d+)\.(\d+)(?:\.\d+)?(?:-[\w.-]+)?$`)

// checkGoImage checks that the Dockerfile builds with a golang image whose
// major.minor is want, and that every golang image it names agrees.
func checkGoImage(instrs []dockerInstr, want string) error {
	found := 0
	for _, in := range instrs {
		if in.cmd != "FROM" {
			continue
		}
		var image string
		for _, f := range strings.Fields(in.args) {
			if !strings.HasPrefix(f, "--") {
				image = f
				break
			}
		}
		if !strings.Contains(image, "golang") {
			continue
		}
		m := golangTag.FindStringSubmatch(image)
		if m == nil {
			return fmt.Errorf("line %d: FROM %s: want golang:X.Y[-variant] with a literal version", in.line, image)
		}
		if got := m[1] + "." + m[2]; got != want {
			return fmt.Errorf("line %d: FROM %s is Go %s, go.mod says go %s", in.line, image, got, want)
		}
		found++
	}
	if found == 0 {
		return fmt.Errorf("no FROM golang:X.Y build stage")
	}
	return nil
}

// checkNonRoot checks that the final stage (after the last FROM) sets a
// USER that is not root (by name or uid 0).
func checkNonRoot(instrs []dockerInstr) error {
	user, userLine, lastFrom := "", 0, -1
	for i, in := range instrs {
		switch in.cmd {
		case "FROM":
			lastFrom, user, userLine = i, "", 0
		case "USER":
			user, userLine = in.args, in.line
		}
	}
	if lastFrom < 0 {
		return fmt.Errorf("no FROM instruction")
	}
	if user == "" {
		return fmt.Errorf("the final stage sets no USER: the container would run as root")
	}
	name, _, _ := strings.Cut(user, ":")
	if name == "root" || name == "0" || strings.HasPrefix(name, "$") {
		return fmt.Errorf("line %d: USER %s: want a fixed unprivileged user", userLine, user)
	}
	return nil
}

func TestDockerfile(t *testing.T) {
	dir := root(t)
	src, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := goDirective(string(gomod))
	if err != nil {
		t.Fatal(err)
	}
	instrs := parseDockerfile(string(src))
	if err := checkGoImage(instrs, want); err != nil {
		t.Errorf("Dockerfile: %v", err)
	}
	if err := checkNonRoot(instrs); err != nil {
		t.Errorf("Dockerfile: %v", err)
	}
}

// TestDockerignore checks that .dockerignore exists and keeps the
// repository's history out of the build context.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), ".dockerignore"))
	if err != nil {
		t.Fatalf(".dockerignore: %v", err)
	}
	var git bool
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		git = git || l == ".git" || l == "/.git" || l == ".git/"
	}
	if !git {
		t.Error(".dockerignore does not exclude .git")
	}
}

// TestDockerChecks shows that the checks catch what they are for.
func TestDockerChecks(t *testing.T) {
	for _, tc := range []struct {
		name, src    string
		goOK, userOK bool
	}{
		{"good", "FROM golang:1.26-bookworm AS build\nRUN go build \\\n  ./...\nFROM debian:bookworm-slim\nUSER 10001:10001\n", true, true},
		{"patch version", "FROM --platform=$BUILDPLATFORM golang:1.26.3 AS build\nFROM scratch\nUSER app\n", true, true},
		{"old go", "FROM golang:1.25-bookworm AS build\nFROM debian\nUSER app\n", false, true},
		{"no golang stage", "FROM debian\nUSER app\n", false, true},
		{"variable tag", "ARG GO=1.26\nFROM golang:${GO}\nUSER app\n", false, true},
		{"root user", "FROM golang:1.26\nFROM debian\nUSER root\n", true, false},
		{"uid 0", "FROM golang:1.26\nFROM debian\nUSER 0:0\n", true, false},
		{"user only in build stage", "FROM golang:1.26\nUSER app\nFROM debian\n", true, false},
		{"commented user", "FROM golang:1.26\n# USER app\n", true, false},
	} {
		in := parseDockerfile(tc.src)
		if err := checkGoImage(in, "1.26"); (err == nil) != tc.goOK {
			t.Errorf("%s: Go image check: %v, want ok=%v", tc.name, err, tc.goOK)
		}
		if err := checkNonRoot(in); (err == nil) != tc.userOK {
			t.Errorf("%s: USER check: %v, want ok=%v", tc.name, err, tc.userOK)
		}
	}
	for _, tc := range []struct{ gomod, want string }{{"module m\n\ngo 1.26.0\n", "1.26"}, {"module m\ngo 1.22\n", "1.22"}} {
		if got, err := goDirective(tc.gomod); err != nil || got != tc.want {
			t.Errorf("goDirective(%q) = %q, %v; want %q", tc.gomod, got, err, tc.want)
		}
	}
	if _, err := goDirective("module m\n"); err == nil {
		t.Error("goDirective without a go line: no error")
	}
}
