package data

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/psdlearn/psdlearn/errs"
)

// DefaultMaxInputBytes is the default cap on the bytes read from one input
// after decompression.
const DefaultMaxInputBytes int64 = 1 << 30

// ErrLimit is wrapped by the errors about input beyond LoadOptions.MaxElements
// or LoadOptions.MaxInputBytes.
var ErrLimit = errs.New("data: input exceeds a resource limit", errs.ErrResource)

func (o LoadOptions) maxInputBytes() int64 {
	if o.MaxInputBytes > 0 {
		return o.MaxInputBytes
	}
	return DefaultMaxInputBytes
}

// limitErr returns a ParseError that also wraps ErrLimit.
func limitErr(e *ParseError) *ParseError {
	e.limit = true
	return e
}

// capReader returns the bytes of r until max have been read and fails with
// a ParseError wrapping ErrLimit on the first byte beyond.
type capReader struct {
	r    io.Reader
	name string
	left int64
	max  int64
}

func newCapReader(r io.Reader, name string, max int64) *capReader {
	return &capReader{r: r, name: name, left: max, max: max}
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// Probe one byte: input of exactly max bytes is fine.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, limitErr(errOffset(c.name, c.max, "input is larger than %d bytes after decompression (LoadOptions.MaxInputBytes)", c.max))
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// readIDX reads one IDX file from r: the magic number and the dimensions
// first, then — only if they describe at most maxEl values — exactly the
// body they declare, and one byte more to detect trailing data. Content
// problems the header check reports (bad magic, unknown type, truncation)
// are left to idxHeader, which sees the bytes read so far; read errors,
// limits and trailing bytes are returned here. The buffer never exceeds
// the declared size, whatever r would deliver.
func readIDX(r io.Reader, file string, maxEl int) ([]byte, error) {
	buf := make([]byte, 4)
	if n, err := io.ReadFull(r, buf); err != nil {
		return buf[:n], shortRead(file, err, int64(n))
	}
	nd := int(buf[3])
	if buf[0] != 0 || buf[1] != 0 || idxSize(buf[2]) == 0 || nd == 0 {
		return buf, nil // idxHeader reports it
	}
	buf = append(buf, make([]byte, 4*nd)...)
	if n, err := io.ReadFull(r, buf[4:]); err != nil {
		return buf[:4+n], shortRead(file, err, int64(4+n))
	}
	total := uint64(1)
	for i := 0; i < nd; i++ {
		total *= uint64(binary.BigEndian.Uint32(buf[4+4*i:]))
		if total > uint64(maxEl) {
			return buf, nil // idxHeader reports the limit
		}
	}
	head := len(buf)
	want := int(total) * idxSize(buf[2])
	buf = append(buf, make([]byte, want)...)
	if n, err := io.ReadFull(r, buf[head:]); err != nil {
		return buf[:head+n], shortRead(file, err, int64(head+n))
	}
	var one [1]byte
	if n, err := r.Read(one[:]); n > 0 {
		dims := make([]int, nd)
		for i := range dims {
			dims[i] = int(binary.BigEndian.Uint32(buf[4+4*i:]))
		}
		return nil, errOffset(file, int64(len(buf)), "trailing bytes in IDX data: dimensions %v of %d-byte elements need %d bytes, the file has more", dims, idxSize(buf[2]), want)
	} else if err != nil && err != io.EOF {
		return nil, shortRead(file, err, int64(len(buf)))
	}
	return buf, nil
}

// shortRead turns the error of a read that stopped early into nil for a
// plain end of file (the caller's checks report the truncation) and into a
// read error otherwise.
func shortRead(file string, err error, off int64) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe
	}
	return errOffset(file, off, "read: %v", err)
}

// rowLimit is the error about a file with more rows than MaxElements.
func rowLimit(file string, line, maxEl int) error {
	return limitErr(errAt(file, line, 0, "", "more than %d rows (LoadOptions.MaxElements)", maxEl))
}
