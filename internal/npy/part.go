package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"codeberg.org/sbinet/npyio/npy"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// ReadPart reads block part of parts of the rows of the data set
// npy:X.npy[:LABELS.npy] (LoadDataset) whose files, of sizes xsize and
// ysize, are behind x and y (y nil: no labels): the headers, then only the
// rows lo = part·n/parts … hi−1 = (part+1)·n/parts − 1 of X (one read in C
// order, one per column in Fortran order) and of the labels, at their byte
// offsets. It returns those rows (X nil when the block is empty), their
// labels indexing the block's own Classes (nil without labels), and n.
// The checks are LoadDataset's, with MaxInputBytes, MaxElements and the
// memory budget applied to the block.
func ReadPart(x io.ReaderAt, xsize int64, y io.ReaderAt, ysize int64, xname, yname string, part, parts int, opt data.LoadOptions) (d *data.Dataset, n int, err error) {
	if parts < 1 || part < 0 || part >= parts {
		return nil, 0, fmt.Errorf("%w: part %d of %d", data.ErrFormat, part, parts)
	}
	h, err := headerAt(x, xsize, xname)
	if err != nil {
		return nil, 0, err
	}
	if !isFloat64(h.Descr) {
		return nil, 0, fmt.Errorf("npy: %s: %w: %s: want float64 ('<f8'; numpy: x.astype(np.float64))", xname, data.ErrFormat, h.describeDtype())
	}
	cols := 1
	switch len(h.Shape) {
	case 1:
		n = h.Shape[0]
	case 2:
		n, cols = h.Shape[0], h.Shape[1]
	default:
		return nil, 0, fmt.Errorf("npy: %s: %w: shape %v: want a 2-D array (points × features)", xname, data.ErrFormat, h.Shape)
	}
	if n < 1 || cols < 1 {
		return nil, 0, fmt.Errorf("npy: %s: %w: shape %v: no data", xname, data.ErrFormat, h.Shape)
	}
	if opt.MaxFeatures > 0 && cols > opt.MaxFeatures {
		return nil, 0, fmt.Errorf("npy: %s: %w: %d features exceed the cap of %d", xname, data.ErrLimit, cols, opt.MaxFeatures)
	}
	lo, hi := part*n/parts, (part+1)*n/parts
	rows := hi - lo
	if err := blockLimits(xname, rows, cols, 8, opt); err != nil {
		return nil, 0, err
	}
	d = &data.Dataset{Name: baseName(xname), Y: make([]int, rows)}
	if y != nil {
		d.Classes = []string{}
	}
	if rows == 0 {
		return d, n, nil
	}
	vals := make([]float64, rows*cols)
	order := binary.ByteOrder(binary.LittleEndian)
	if strings.HasPrefix(h.Descr, ">") {
		order = binary.BigEndian
	}
	if h.Fortran {
		col := make([]byte, 8*rows)
		for j := 0; j < cols; j++ {
			if err := readAt(x, col, int64(h.Len)+8*(int64(j)*int64(n)+int64(lo)), xname); err != nil {
				return nil, 0, err
			}
			for i := 0; i < rows; i++ {
				vals[i*cols+j] = math.Float64frombits(order.Uint64(col[8*i:]))
			}
		}
	} else {
		b := make([]byte, 8*rows*cols)
		if err := readAt(x, b, int64(h.Len)+8*int64(lo)*int64(cols), xname); err != nil {
			return nil, 0, err
		}
		for i := range vals {
			vals[i] = math.Float64frombits(order.Uint64(b[8*i:]))
		}
	}
	for i, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, fmt.Errorf("npy: %s: %w: entry (%d,%d) is %v: NaN and infinite values are not allowed", xname, data.ErrFormat, lo+i/cols, i%cols, v)
		}
	}
	d.X = mat.NewDense(rows, cols, vals)
	if y == nil {
		return d, n, nil
	}
	names, err := labelBlock(y, ysize, yname, xname, n, lo, rows)
	if err != nil {
		return nil, 0, err
	}
	d.Y, d.Classes = encodeLabels(names)
	return d, n, nil
}

// labelBlock reads the labels lo … lo+rows−1 of the 1-D label file of n
// labels behind y, decoded as LoadDataset decodes them.
func labelBlock(y io.ReaderAt, ysize int64, yname, xname string, n, lo, rows int) ([]string, error) {
	h, err := headerAt(y, ysize, yname)
	if err != nil {
		return nil, err
	}
	if len(h.Shape) != 1 || h.Shape[0] != n {
		return nil, fmt.Errorf("npy: %s: %w: shape %v: want %d labels, one per row of %s", yname, data.ErrFormat, h.Shape, n, xname)
	}
	item := h.ItemSize()
	if item == 0 || npy.TypeFrom(h.Descr) == nil {
		return nil, fmt.Errorf("npy: %s: %w: label dtype %s: want integers, floats or strings", yname, data.ErrFormat, h.Descr)
	}
	b := make([]byte, item*rows)
	if err := readAt(y, b, int64(h.Len)+int64(item)*int64(lo), yname); err != nil {
		return nil, err
	}
	// The block as a .npy array of its own, decoded by npyio.
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", h.Descr, rows)
	pad := (64 - (10+len(dict)+1)%64) % 64 // the data starts at a multiple of 64
	hl := len(dict) + pad + 1
	var buf bytes.Buffer
	buf.WriteString("\x93NUMPY\x01\x00")
	buf.Write([]byte{byte(hl), byte(hl >> 8)})
	buf.WriteString(dict + strings.Repeat(" ", pad) + "\n")
	buf.Write(b)
	r, err := npy.NewReader(&buf)
	if err != nil {
		return nil, fmt.Errorf("npy: %s: %w: %v", yname, data.ErrFormat, err)
	}
	names, err := decodeLabels(r, rows, lo)
	if err != nil {
		if !errors.Is(err, data.ErrFormat) && !errors.Is(err, data.ErrLimit) {
			err = fmt.Errorf("%w: %v", data.ErrFormat, err)
		}
		return nil, fmt.Errorf("npy: %s: %w", yname, err)
	}
	return names, nil
}

// blockLimits applies the bounds of opt and the memory budget to a block
// of rows × cols values of item bytes.
func blockLimits(name string, rows, cols, item int, opt data.LoadOptions) error {
	maxEl := opt.MaxElements
	if maxEl <= 0 {
		maxEl = data.DefaultMaxElements
	}
	if rows > 0 && cols > maxEl/rows {
		return fmt.Errorf("npy: %s: %w: this part's %d×%d values exceed the cap of %d (LoadOptions.MaxElements, --max-memory)", name, data.ErrLimit, rows, cols, maxEl)
	}
	limit := opt.MaxInputBytes
	if limit <= 0 {
		limit = data.DefaultMaxInputBytes
	}
	if b := int64(rows) * int64(cols) * int64(item); b > limit {
		return fmt.Errorf("npy: %s: %w: this part's %d bytes exceed the cap of %d (--max-input)", name, data.ErrLimit, b, limit)
	}
	if err := limits.Check(fmt.Sprintf("%s, this part's %d×%d values as float64", name, rows, cols), limits.Words(rows, cols)); err != nil {
		return fmt.Errorf("npy: %w: %w", data.ErrLimit, err)
	}
	return nil
}

// headerAt reads and checks the header of the .npy file of size bytes
// behind r (the bytes of the header only) as readFile checks it, the array
// against the file's size.
func headerAt(r io.ReaderAt, size int64, name string) (*Header, error) {
	pre := make([]byte, min(size, 12))
	if err := readAt(r, pre, 0, name); err != nil {
		return nil, err
	}
	hlen := int64(len(pre))
	if len(pre) >= 10 {
		switch pre[6] {
		case 1:
			hlen = 10 + int64(binary.LittleEndian.Uint16(pre[8:]))
		default:
			if len(pre) >= 12 {
				hlen = 12 + int64(binary.LittleEndian.Uint32(pre[8:]))
			}
		}
	}
	hlen = min(hlen, size, maxHeader+12)
	h, err := ReadHeader(bufio.NewReaderSize(io.NewSectionReader(r, 0, hlen), maxHeader+16))
	if err != nil {
		return nil, fmt.Errorf("npy: %s: %w: %v", name, data.ErrFormat, err)
	}
	if t := strings.TrimLeft(h.Descr, "<>=|"); t == "O" || strings.HasPrefix(t, "V") {
		return nil, fmt.Errorf("npy: %s: %w: %s", name, data.ErrFormat, h.describeDtype())
	}
	item := h.ItemSize()
	if item == 0 {
		item = 8
	}
	if b := h.Elements() * float64(item); b > float64(size-int64(h.Len)) {
		return nil, fmt.Errorf("npy: %w: %s: the header claims shape %v (%s) but the file holds %s after the header: the header is wrong or the file is truncated",
			data.ErrFormat, name, h.Shape, limits.FormatBytes(b), limits.FormatBytes(float64(max(size-int64(h.Len), 0))))
	}
	return h, nil
}

// readAt reads len(b) bytes of r at off.
func readAt(r io.ReaderAt, b []byte, off int64, name string) error {
	k, err := r.ReadAt(b, off)
	if k == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		return fmt.Errorf("npy: %s: %w: the file ends early, at byte %d", name, data.ErrFormat, off+int64(k))
	}
	return fmt.Errorf("npy: %s: %w", name, err)
}
