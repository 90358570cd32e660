package input

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// endless is a reader of the same byte forever (an unbounded line when it
// is not a newline).
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// TestReader checks each failure mode of a bounded read: what is refused,
// on which line, whether as a limit, and that good input (CRLF, several
// gzip members, input of exactly the cap) passes unchanged.
func TestReader(t *testing.T) {
	two := append(gz(t, "a,b\n"), gz(t, "1,2\n")...)
	for _, tc := range []struct {
		name  string
		in    []byte
		r     io.Reader // instead of in
		opt   Options
		want  string // "" : read to the end, the output equal to wantOut
		line  int
		limit bool
		out   string
	}{
		{name: "text", in: []byte("a,b\r\n1,2\r\n"), out: "a,b\r\n1,2\r\n"},
		{name: "gzip members", in: two, out: "a,b\n1,2\n"},
		{name: "exactly the cap", in: []byte("12345"), opt: Options{MaxBytes: 5}, out: "12345"},
		{name: "over the cap", in: []byte("123456"), opt: Options{MaxBytes: 5}, want: "larger than 5 bytes", limit: true},
		{name: "gzip over the cap", in: gz(t, strings.Repeat("x\n", 100)), opt: Options{MaxBytes: 50}, want: "larger than 50 bytes after gzip decompression", limit: true},
		{name: "NUL", in: []byte("a,b\n1,\x002\n"), want: "a NUL byte at byte 6: this is binary data", line: 2},
		{name: "endless zeros", r: endless(0), want: "NUL byte at byte 0", line: 1},
		{name: "endless line", r: endless('1'), opt: Options{MaxLine: 1000}, want: "line 1 is longer than 1000 bytes", line: 1, limit: true},
		{name: "long second line", in: []byte("ab\n" + strings.Repeat("x", 11) + "\n"), opt: Options{MaxLine: 10, LineOption: "raise it with --max-line"}, want: "line 2 is longer than 10 bytes, the line limit (raise it with --max-line)", line: 2, limit: true},
		{name: "line of exactly the cap", in: []byte(strings.Repeat("x", 10) + "\n"), opt: Options{MaxLine: 10}, out: strings.Repeat("x", 10) + "\n"},
		{name: "no line cap", r: io.LimitReader(endless('1'), 1<<16), opt: Options{MaxLine: -1}, out: strings.Repeat("1", 1<<16)},
		{name: "binary mode", in: []byte{0, 1, 2, '\n'}, opt: Options{Binary: true}, out: "\x00\x01\x02\n"},
		{name: "UTF-16", in: []byte("\xff\xfea\x00,\x00b\x00"), want: "UTF-16 text", line: 1},
		{name: "UTF-16 without BOM", in: []byte("a\x00,\x00b\x00\n\x00"), want: "looks like UTF-16", line: 1},
		{name: "CR only", in: []byte("a,b\r1,2\r3,4\r"), want: "carriage return", line: 1},
		{name: "CR only across reads", r: iotest.OneByteReader(strings.NewReader("a\rb")), want: "carriage return", line: 1},
		{name: "CR inside a later line", in: []byte("a,b\n1\r2\n"), out: "a,b\n1\r2\n"},
		{name: "gzip trailing garbage", in: append(gz(t, "a\n"), "garbage"...), want: "followed by bytes that are not gzip"},
		{name: "gzip truncated", in: gz(t, strings.Repeat("abc\n", 1000))[:30], want: "the gzip data ends early"},
		{name: "gzip checksum", in: func() []byte { b := gz(t, "abc\n"); b[len(b)-5] ^= 1; return b }(), want: "fails its checksum"},
		{name: "gzip header damaged", in: []byte{0x1f, 0x8b, 9, 9}, want: "header is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.r
			if src == nil {
				src = bytes.NewReader(tc.in)
			}
			tc.opt.Name = "f"
			r, err := NewReader(src, tc.opt)
			var out []byte
			if err == nil {
				out, err = io.ReadAll(r)
			}
			if tc.want == "" {
				if err != nil || string(out) != tc.out {
					t.Fatalf("got %q, %v; want %q", out, err, tc.out)
				}
				return
			}
			var ie *Error
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want an *Error containing %q", err, tc.want)
			}
			if ie.Line != tc.line || ie.Limit != tc.limit {
				t.Errorf("line %d, limit %v; want %d, %v (%v)", ie.Line, ie.Limit, tc.line, tc.limit, err)
			}
			if !strings.HasPrefix(err.Error(), "f") {
				t.Errorf("error %q does not name the input", err)
			}
		})
	}
}

// TestReaderBoundsMemory reads an endless line with a small cap through a
// line reader that keeps the line (bufio.Reader.ReadString): the read stops
// at the cap, so the line held is at most the cap plus one buffer.
func TestReaderBoundsMemory(t *testing.T) {
	r, err := NewReader(endless('7'), Options{MaxLine: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(r)
	if err == nil || n > 1<<20+64<<10 {
		t.Fatalf("read %d bytes, error %v: want an error within the cap", n, err)
	}
}

func TestCheckLabel(t *testing.T) {
	for _, tc := range []struct {
		label string
		want  string // "" : a label
	}{
		{"setosa", ""}, {" 1 ", ""}, {"-1", ""}, {"Iris-virginica", ""}, {"café", ""}, {"none", ""}, {"NAN0", ""},
		{strings.Repeat("L", MaxLabelBytes), ""},
		{"", "missing label"}, {"  ", "missing label"}, {"NaN", `"NaN" marks a missing value`}, {"na", "marks a missing value"},
		{"N/A", "marks a missing value"}, {"?", "marks a missing value"}, {"NULL", "marks a missing value"},
		{"0\x00\x00", "control character U+0000 at byte 1"}, {"a\x1bb", "U+001B"}, {"a\u0085b", "U+0085"},
		{"caf\xe9", "not valid UTF-8"},
		{strings.Repeat("L", MaxLabelBytes+1), "a label of 257 bytes"},
		{strings.Repeat("L", 10<<20), `"LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL"…(10485760 bytes)`},
	} {
		err := CheckLabel(tc.label)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckLabel(%.20q): %v", tc.label, err)
		case tc.want != "" && (err == nil || !errors.Is(err, ErrLabel) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckLabel(%.20q) = %v, want ErrLabel with %q", tc.label, err, tc.want)
		case err != nil && len(err.Error()) > 200:
			t.Errorf("CheckLabel(%.20q): error of %d bytes echoes the label", tc.label, len(err.Error()))
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"abc", 5, `"abc"`},
		{"abcdef", 3, `"abc"…(6 bytes)`},
		{"ééé", 3, `"é"…(6 bytes)`}, // cut at a rune boundary
	} {
		if got := Clip(tc.s, tc.max); got != tc.want {
			t.Errorf("Clip(%q, %d) = %s, want %s", tc.s, tc.max, got, tc.want)
		}
	}
}
