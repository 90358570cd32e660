package npy

import (
	"bufio"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/limits"
)

// Header is the parsed header of a .npy file: the dtype string, the order
// and the shape.
type Header struct {
	Descr   string // e.g. "<f8", "|O"
	Fortran bool
	Shape   []int
	Len     int // bytes of the magic, version, length and header text
}

// maxHeader caps the header length of a .npy file (NumPy writes a few
// hundred bytes; numpy.load refuses more than 10,000 unless told otherwise).
const maxHeader = 1 << 16

var (
	descrRE   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	fortranRE = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	shapeRE   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// ReadHeader parses, without consuming it, the header of the .npy data br
// starts with: a version 1 to 3 header of at most 64 KiB ending with a
// newline, whose dictionary has a string 'descr', a 'fortran_order' and a
// 'shape' of non-negative integers. br's buffer must hold maxHeader+16
// bytes.
func ReadHeader(br *bufio.Reader) (*Header, error) {
	b, err := br.Peek(10)
	if err != nil {
		return nil, fmt.Errorf("not a .npy file (%d bytes, shorter than the magic string and header length)", len(b))
	}
	if string(b[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("not a .npy file (no magic string \\x93NUMPY)")
	}
	var n, start int
	switch b[6] {
	case 1:
		n, start = int(b[8])|int(b[9])<<8, 10
	case 2, 3:
		if b, err = br.Peek(12); err != nil {
			return nil, fmt.Errorf("truncated .npy header")
		}
		n, start = int(b[8])|int(b[9])<<8|int(b[10])<<16|int(b[11])<<24, 12
	default:
		return nil, fmt.Errorf("unsupported .npy version %d.%d", b[6], b[7])
	}
	if n < 1 || n > maxHeader {
		return nil, fmt.Errorf("a header of %d bytes (at most %d)", n, maxHeader)
	}
	hb, err := br.Peek(start + n)
	if err != nil {
		return nil, fmt.Errorf("truncated header: the file ends within the %d header bytes it announces", n)
	}
	hdr := string(hb[start:])
	if !strings.HasSuffix(hdr, "\n") {
		return nil, fmt.Errorf("the header does not end with a newline (a damaged file?)")
	}
	h := &Header{Len: start + n}
	m := descrRE.FindStringSubmatch(hdr)
	if m == nil {
		if strings.Contains(hdr, "'descr': [") {
			return nil, fmt.Errorf("a structured dtype (fields): want a plain float64 array")
		}
		return nil, fmt.Errorf("the header has no 'descr'")
	}
	h.Descr = m[1]
	if m := fortranRE.FindStringSubmatch(hdr); m != nil {
		h.Fortran = m[1] == "True"
	} else {
		return nil, fmt.Errorf("the header has no 'fortran_order'")
	}
	m = shapeRE.FindStringSubmatch(hdr)
	if m == nil {
		return nil, fmt.Errorf("the header has no 'shape'")
	}
	for _, f := range strings.Split(m[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(f, "L"), 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("shape (%s): %q is not a dimension", clip(m[1]), clip(f))
		}
		if v > math.MaxInt32*int64(1)<<20 {
			return nil, fmt.Errorf("shape (%s): dimension %d is beyond any array", clip(m[1]), v)
		}
		h.Shape = append(h.Shape, int(v))
	}
	if strings.HasPrefix(strings.TrimLeft(h.Descr, "<>=|"), "U") || strings.HasPrefix(strings.TrimLeft(h.Descr, "<>=|"), "S") {
		t := strings.TrimLeft(h.Descr, "<>=|")
		if k, err := strconv.Atoi(t[1:]); err != nil || k < 1 || k > 1024 {
			return nil, fmt.Errorf("string dtype %s: elements of 1 to 1024 characters only", h.Descr)
		}
	}
	return h, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Elements returns the number of values the shape claims, in floating
// point (it cannot overflow).
func (h *Header) Elements() float64 {
	n := 1.0
	for _, d := range h.Shape {
		n *= float64(d)
	}
	return n
}

// ItemSize returns the bytes of one element of the dtype (0: unknown).
func (h *Header) ItemSize() int {
	t := strings.TrimLeft(h.Descr, "<>=|")
	if len(t) < 2 {
		switch t {
		case "d":
			return 8
		case "f":
			return 4
		case "b", "B", "?":
			return 1
		}
		return 0
	}
	k, err := strconv.Atoi(t[1:])
	if err != nil {
		return 0
	}
	switch t[0] {
	case 'U':
		return 4 * k
	default:
		return k
	}
}

// describeDtype names the dtype in the user's terms.
func (h *Header) describeDtype() string {
	t := strings.TrimLeft(h.Descr, "<>=|")
	switch {
	case t == "O":
		return fmt.Sprintf("dtype object (%q): the array holds Python objects, which only Python can read (np.save pickles them); save a numeric array", h.Descr)
	case strings.HasPrefix(t, "U") || strings.HasPrefix(t, "S"):
		return fmt.Sprintf("dtype %q: an array of strings", h.Descr)
	case strings.HasPrefix(t, "f"):
		return fmt.Sprintf("dtype %q: %d-bit floats", h.Descr, 8*h.ItemSize())
	case strings.HasPrefix(t, "i"), strings.HasPrefix(t, "u"):
		return fmt.Sprintf("dtype %q: integers", h.Descr)
	case strings.HasPrefix(t, "c"):
		return fmt.Sprintf("dtype %q: complex numbers", h.Descr)
	}
	return fmt.Sprintf("dtype %q", h.Descr)
}

// Check refuses a header whose values, as float64, do not fit the memory
// budget (limits.Check; the error wraps limits.ErrMemory) and, when size ≥
// 0 is the file's size, one that claims more bytes than the file holds. what names the file in the errors.
func (h *Header) Check(what string, size int64) error {
	if what == "" {
		what = "the array"
	}
	item := h.ItemSize()
	if item == 0 {
		item = 8
	}
	if err := limits.Check(fmt.Sprintf("%s (shape %v as float64)", what, h.Shape), limits.Words(1)*h.Elements()); err != nil {
		return err
	}
	if bytes := h.Elements() * float64(item); size >= 0 && bytes > float64(size-int64(h.Len)) {
		return fmt.Errorf("%s: the header claims shape %v (%s) but the file holds %s after the header: the header is wrong or the file is truncated",
			what, h.Shape, limits.FormatBytes(bytes), limits.FormatBytes(float64(max(size-int64(h.Len), 0))))
	}
	return nil
}
