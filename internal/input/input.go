// Package input reads one input of psdlearn — a data file, a constraint
// file, a model file, standard input — within bounds fixed before the
// first byte is buffered, and names what is wrong with it in the user's
// terms.
//
// A Reader decompresses gzip data (detected from its magic bytes), caps the
// bytes read after decompression, and, for text, caps the length of a line
// and refuses what is not text: a NUL byte (a binary file, /dev/zero), a
// UTF-16 byte-order mark, and line endings that are carriage returns alone
// (classic Mac OS files, which every line reader would take for one endless
// line). A gzip stream that ends early, fails its checksum or is followed by
// bytes that are not gzip is reported as such rather than as an unexpected
// end of file. Every failure is an *Error naming the input, the line and
// the byte offset.
//
// CheckLabel validates a class label: missing-value markers, control
// characters, invalid UTF-8 and labels longer than MaxLabelBytes are
// refused.
package input

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// DefaultMaxLine is the default cap on the length of one line of text
// input, 16 MiB: a row of a million numbers of 16 characters. Readers
// buffer a line before parsing it, so the cap bounds their memory whatever
// the input; the psdlearn command sets it with --max-line.
const DefaultMaxLine = 16 << 20

// ProgressStep is the number of bytes between two Options.Progress calls.
const ProgressStep = 16 << 20

// DefaultMaxBytes is the default cap on the bytes of one input after
// decompression (1 GiB).
const DefaultMaxBytes int64 = 1 << 30

// Options bound one input.
type Options struct {
	// Name names the input in errors (a file name, "<stdin>"; empty: the
	// errors name the line only, for a caller that names the input).
	Name string
	// MaxBytes caps the bytes read after decompression (0: DefaultMaxBytes).
	MaxBytes int64
	// MaxLine caps the bytes of one line of text, the newline excluded
	// (0: DefaultMaxLine; negative: no cap, for formats such as JSON whose
	// lines are not records).
	MaxLine int
	// Binary reads the input as binary: no line cap and no text checks.
	Binary bool
	// NoGzip reads the bytes as they are, without gzip detection.
	NoGzip bool
	// Continued says that the text continues one whose start was read
	// already (a part of a file that starts at a line start): the checks
	// of a file's start (a UTF-16 byte-order mark, carriage returns alone
	// as line endings) are not made.
	Continued bool
	// Start is the byte offset of the text's first byte in the whole
	// input (a part of a file): the offsets in errors count from the
	// input's start, as they would if the whole input were read.
	Start int64
	// Progress, if set, is called with the bytes read so far (after
	// decompression) every ProgressStep bytes, so that a long read shows
	// it is alive.
	Progress func(n int64)
	// LineOption and BytesOption are said in parentheses after the caps in
	// errors, e.g. "raise it with --max-line" or "LoadOptions.MaxLineBytes";
	// empty: nothing.
	LineOption, BytesOption string
}

// Error is a problem of an input found while reading it.
type Error struct {
	Name   string
	Line   int   // 1-based line of text input (0: not known or binary)
	Offset int64 // byte offset after decompression (−1: not known)
	Msg    string
	// Limit reports a resource cap (the line or byte cap) rather than
	// malformed content.
	Limit bool
}

// Error implements the error interface.
// It reads "NAME:LINE: MSG" ("NAME: byte OFFSET: MSG" without a line), or
// without a Name "line LINE: MSG".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Name != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.Name, e.Line)
	case e.Name != "" && e.Offset >= 0:
		fmt.Fprintf(&b, "%s: byte %d: ", e.Name, e.Offset)
	case e.Name != "":
		b.WriteString(e.Name + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Reader is a bounded input; see the package documentation.
type Reader struct {
	opt    Options
	src    *bufio.Reader // the raw bytes
	zr     *gzip.Reader  // nil: not gzip
	raw    int64         // compressed bytes consumed, for errors about the gzip stream
	r      io.Reader     // src or zr
	left   int64
	off    int64 // bytes delivered
	line   int   // current line (1-based)
	col    int   // bytes of the current line so far
	sawNL  bool  // a newline was seen
	pendCR bool  // the last byte delivered was '\r'
	err    error // sticky
	// head holds the input's first bytes (up to utf16HeadBytes), for the
	// UTF-16 hint; empty for a part that does not start the input.
	head []byte
}

// NewReader returns a Reader over r. It reads the first bytes to detect gzip
// data and, for text, a UTF-16 byte-order mark.
func NewReader(r io.Reader, opt Options) (*Reader, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.MaxLine == 0 {
		opt.MaxLine = DefaultMaxLine
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		// A small buffer: a gzip stream is read no further than the
		// decompressed bytes asked for (Open gives files a larger one).
		br = bufio.NewReader(r)
	}
	in := &Reader{opt: opt, src: br, r: br, left: opt.MaxBytes, line: 1, sawNL: opt.Continued}
	head, _ := br.Peek(2)
	if !opt.NoGzip && isGzip(head) {
		zr, err := gzip.NewReader(&countReader{br, &in.raw})
		if err != nil {
			return nil, in.fail(0, "the file starts like gzip data but its header is damaged (%v): check it with gunzip -t", err)
		}
		zr.Multistream(false)
		in.zr, in.r = zr, zr
	}
	return in, nil
}

// Open opens the file at path for a bounded read; the caller closes it.
func Open(path string, opt Options) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(bufio.NewReaderSize(f, 1<<16), opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{r, f}, nil
}

func isGzip(b []byte) bool { return len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b }

// countReader counts the bytes read from a bufio.Reader and keeps its
// ByteReader (gzip reads the stream byte by byte through it).
type countReader struct {
	r *bufio.Reader
	n *int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		*c.n++
	}
	return b, err
}

// fail records and returns an Error at the current position.
func (in *Reader) fail(line int, format string, args ...any) error {
	in.err = &Error{Name: in.opt.Name, Line: line, Offset: in.opt.Start + in.off, Msg: fmt.Sprintf(format, args...)}
	return in.err
}

func (in *Reader) limit(line int, format string, args ...any) error {
	in.fail(line, format, args...)
	in.err.(*Error).Limit = true
	return in.err
}

func (in *Reader) raise(option string) string {
	if option == "" {
		return ""
	}
	return " (" + option + ")"
}

// Read implements io.Reader.
func (in *Reader) Read(p []byte) (int, error) {
	if in.err != nil {
		return 0, in.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if in.left <= 0 {
		// One byte more tells an input of exactly the cap from a longer one.
		var one [1]byte
		n, err := in.read(one[:])
		if n > 0 {
			return 0, in.limit(0, "the input is larger than %d bytes%s%s", in.opt.MaxBytes, afterGzip(in.zr != nil), in.raise(in.opt.BytesOption))
		}
		return 0, err
	}
	if int64(len(p)) > in.left {
		p = p[:in.left]
	}
	n, err := in.read(p)
	if n > 0 {
		if cerr := in.check(p[:n]); cerr != nil {
			return 0, cerr
		}
		in.left -= int64(n)
		in.off += int64(n)
		if in.opt.Progress != nil && in.off/ProgressStep != (in.off-int64(n))/ProgressStep {
			in.opt.Progress(in.off)
		}
	}
	if err != nil && err != io.EOF {
		in.err = err
	}
	return n, err
}

func afterGzip(gz bool) string {
	if gz {
		return " after gzip decompression"
	}
	return ""
}

// read reads decompressed bytes, moving to the next gzip member at the
// end of one and explaining gzip failures.
func (in *Reader) read(p []byte) (int, error) {
	if in.zr == nil {
		return in.r.Read(p)
	}
	for {
		n, err := in.zr.Read(p)
		switch {
		case err == io.EOF:
			// The end of a member: another member, the end of the file or
			// something that is not gzip.
			head, perr := in.src.Peek(2)
			if len(head) == 0 && perr != nil {
				return n, io.EOF
			}
			if !isGzip(head) {
				rest, _ := in.src.Peek(64)
				return n, in.fail(0, "%d compressed bytes of gzip data are followed by bytes that are not gzip (%s): the file is damaged or has something appended; gunzip -t says so too", in.raw, quoteBytes(rest))
			}
			if rerr := in.zr.Reset(&countReader{in.src, &in.raw}); rerr != nil {
				return n, in.fail(0, "a second gzip member at compressed byte %d has a damaged header (%v)", in.raw, rerr)
			}
			in.zr.Multistream(false)
			if n > 0 {
				return n, nil
			}
			continue
		case errors.Is(err, io.ErrUnexpectedEOF):
			return n, in.fail(0, "the gzip data ends early, after %d compressed bytes: the file is truncated (an interrupted download or copy?)", in.raw)
		case errors.Is(err, gzip.ErrChecksum):
			return n, in.fail(0, "the gzip data fails its checksum: the file is damaged")
		case err != nil && !errors.Is(err, io.EOF):
			var perr *os.PathError
			if errors.As(err, &perr) {
				return n, err
			}
			return n, in.fail(0, "bad gzip data at compressed byte %d (%v)", in.raw, err)
		}
		return n, err
	}
}

// quoteBytes shows the first bytes of b for an error, cut at 16.
func quoteBytes(b []byte) string {
	if len(b) > 16 {
		return fmt.Sprintf("%q…", b[:16])
	}
	return fmt.Sprintf("%q", b)
}

// check runs the text checks on the bytes about to be delivered and
// advances the line count. It works with bytes.IndexByte (vectorised):
// a NUL byte anywhere, a carriage return before the first newline (the
// only place where one tells a CR-only file), and the newlines for the
// line lengths.
func (in *Reader) check(b []byte) error {
	if in.opt.Binary {
		return nil
	}
	if in.off == 0 && !in.opt.Continued && len(b) >= 2 && (b[0] == 0xff && b[1] == 0xfe || b[0] == 0xfe && b[1] == 0xff) {
		return in.fail(1, "the file is UTF-16 text (it starts with a UTF-16 byte-order mark): save it as UTF-8")
	}
	if in.opt.Start == 0 && int64(len(in.head)) == in.off && len(in.head) < utf16HeadBytes {
		in.head = append(in.head, b[:min(len(b), utf16HeadBytes-len(in.head))]...)
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		line := in.line + bytes.Count(b[:i], []byte{'\n'})
		in.off += int64(i)
		abs := in.opt.Start + in.off
		return in.fail(line, "a NUL byte at byte %d: this is binary data, not text%s", abs, utf16Hint(in.head, abs))
	}
	if !in.sawNL {
		if in.pendCR && b[0] != '\n' {
			return in.crOnly()
		}
		pre := b
		if k := bytes.IndexByte(b, '\n'); k >= 0 {
			pre = b[:k]
		}
		in.pendCR = false
		if k := bytes.IndexByte(pre, '\r'); k >= 0 {
			if k+1 < len(pre) {
				return in.crOnly() // a carriage return followed by more of the line
			}
			in.pendCR = len(pre) == len(b) // the chunk ends with it: the next byte decides
		}
	}
	maxLine := in.opt.MaxLine
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			in.col += len(b) - i
			if maxLine > 0 && in.col > maxLine {
				return in.limit(in.line, "line %d is longer than %d bytes, the line limit%s", in.line, maxLine, in.raise(in.opt.LineOption))
			}
			return nil
		}
		if in.col += j; maxLine > 0 && in.col > maxLine {
			return in.limit(in.line, "line %d is longer than %d bytes, the line limit%s", in.line, maxLine, in.raise(in.opt.LineOption))
		}
		in.line++
		in.col = 0
		in.sawNL = true
		i += j + 1
	}
}

// crOnly is the error about carriage returns used as line endings.
func (in *Reader) crOnly() error {
	return in.fail(1, "the lines end in a carriage return (\\r) alone, as in classic Mac OS files, which reads as one endless line: convert the line endings to \\n (e.g. tr '\\r' '\\n' < in > out)")
}

// utf16HeadBytes is the number of an input's first bytes that utf16Hint
// looks at.
const utf16HeadBytes = 12

// utf16Hint adds a hint when a NUL at byte abs of an input whose first
// bytes are head looks like UTF-16 without a byte-order mark: ASCII text in
// UTF-16 has its first NUL at byte 0 or 1, and NULs alternate with letters
// from there. Only the first bytes of the input's first line are looked
// at, so the hint does not depend on where a read or a part of the file
// begins or ends.
func utf16Hint(head []byte, abs int64) string {
	if abs > 1 {
		return ""
	}
	w := head
	if k := bytes.IndexByte(w, '\n'); k >= 0 {
		w = w[:k]
	}
	if len(w) >= 4 && bytes.Count(w, []byte{0}) >= len(w)/2-1 && bytes.Count(w, []byte{0}) <= len(w)/2+1 {
		return " (it looks like UTF-16: save it as UTF-8)"
	}
	return ""
}

// MaxLabelBytes is the longest class label accepted, in bytes (256). A
// longer "label" is almost always a misread column or file.
const MaxLabelBytes = 256

// ErrLabel is wrapped by CheckLabel's errors.
var ErrLabel = errors.New("not a class label")

// missingMarkers are the spellings of a missing value (compared without
// case), which are not class labels.
var missingMarkers = []string{"", "?", "na", "n/a", "nan", "null"}

// CheckLabel returns an error wrapping ErrLabel when s (trimmed of
// surrounding white space) is not a usable class label: a missing-value
// marker ("", "?", "NA", "N/A", "NaN", "null"), text holding a control
// character or invalid UTF-8, or longer than MaxLabelBytes. The message
// shows at most the first 40 bytes of s.
func CheckLabel(s string) error {
	t := strings.TrimSpace(s)
	if len(t) > 4 && len(t) <= MaxLabelBytes && plainASCII(t) {
		return nil // the common case, in one pass: longer than every marker
	}
	for _, m := range missingMarkers {
		if strings.EqualFold(t, m) {
			if t == "" {
				return fmt.Errorf("%w: missing label (the field is empty)", ErrLabel)
			}
			return fmt.Errorf("%w: %q marks a missing value", ErrLabel, t)
		}
	}
	if len(t) > MaxLabelBytes {
		return fmt.Errorf("%w: a label of %d bytes (%s) is longer than the limit of %d", ErrLabel, len(t), Clip(t, 40), MaxLabelBytes)
	}
	if !utf8.ValidString(t) {
		return fmt.Errorf("%w: %s is not valid UTF-8 (is the file in another encoding, e.g. Latin-1? save it as UTF-8)", ErrLabel, Clip(t, 40))
	}
	for i, r := range t {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return fmt.Errorf("%w: %s holds the control character U+%04X at byte %d", ErrLabel, Clip(t, 40), r, i)
		}
	}
	return nil
}

// plainASCII reports whether s is printable ASCII (no control character,
// nothing beyond U+007E).
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// Clip returns s quoted, cut after max bytes (at a rune boundary) with the
// total length marked, for echoing input in an error message.
func Clip(s string, max int) string {
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…(%d bytes)", s[:cut], len(s))
}
