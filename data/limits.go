package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/internal/input"
	"github.com/psdlearn/psdlearn/limits"
)

// DefaultMaxInputBytes is the default cap on the bytes read from one input
// after decompression.
const DefaultMaxInputBytes int64 = 1 << 30

// ErrLimit is wrapped by the errors about input beyond LoadOptions.MaxElements,
// MaxInputBytes or MaxLineBytes.
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

// DefaultMaxLineBytes is the default cap on the length of one line of a
// text input (16 MiB).
const DefaultMaxLineBytes = input.DefaultMaxLine

func (o LoadOptions) maxLineBytes() int {
	if o.MaxLineBytes > 0 {
		return o.MaxLineBytes
	}
	return DefaultMaxLineBytes
}

// textInput returns r bounded and checked as text (package internal/input)
// unless it already is.
func textInput(r io.Reader, name string, opt LoadOptions) (io.Reader, error) {
	if ir, ok := r.(*input.Reader); ok {
		return ir, nil
	}
	o := opt.inputOptions(name, false)
	o.NoGzip = true
	ir, err := input.NewReader(r, o)
	if err != nil {
		return nil, wrapInput(name, err)
	}
	return ir, nil
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
	// The body as read and as float64 values, against the memory budget.
	if err := limits.Check(fmt.Sprintf("the IDX file %s (%d values)", file, total), float64(want)+limits.Words(int(total))); err != nil {
		return nil, limitErr(errOffset(file, 0, "%v", err))
	}
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
	var ie *input.Error
	if errors.As(err, &pe) || errors.As(err, &ie) {
		return wrapInput(file, err)
	}
	return errOffset(file, off, "read: %v", err)
}

// rowLimit is the error about a file with more rows than MaxElements.
func rowLimit(file string, line, maxEl int) error {
	return limitErr(errAt(file, line, 0, "", "more than %d rows (LoadOptions.MaxElements)", maxEl))
}
