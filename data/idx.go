package data

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/psdlearn/psdlearn/internal/input"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// IDX element types (the third byte of the magic number).
const (
	idxUint8   = 0x08
	idxInt8    = 0x09
	idxInt16   = 0x0B
	idxInt32   = 0x0C
	idxFloat32 = 0x0D
	idxFloat64 = 0x0E
)

func idxSize(t byte) int {
	switch t {
	case idxUint8, idxInt8:
		return 1
	case idxInt16:
		return 2
	case idxInt32, idxFloat32:
		return 4
	case idxFloat64:
		return 8
	}
	return 0
}

// ParseIDX reads an MNIST-style data set from an IDX image file and an IDX
// label file, each plain or gzip-compressed (detected from the content). The
// image file may have any element type and n×d₁×…×d_k shape (each image is
// flattened to d₁⋯d_k features, values as stored, e.g. 0–255 pixels); the
// label file must be one-dimensional with an integer type and the same n.
// name labels errors and becomes the Dataset name.
//
// It rejects bad magic numbers, unknown types, truncated or over-long files,
// count mismatches, empty data and non-finite values, with a *ParseError
// naming the file and byte offset.
func ParseIDX(images, labels io.Reader, name string, opt LoadOptions) (*Dataset, error) {
	read := func(r io.Reader, which string) ([]byte, error) {
		file := name + " (" + which + ")"
		zr, err := input.NewReader(r, opt.inputOptions(file, true))
		if err != nil {
			return nil, wrapInput(file, err)
		}
		return readIDX(zr, file, opt.maxElements())
	}
	ib, err := read(images, "images")
	if err != nil {
		return nil, err
	}
	lb, err := read(labels, "labels")
	if err != nil {
		return nil, err
	}
	d, err := parseIDX([]idxPair{{ib, lb, name + " (images)", name + " (labels)"}}, opt)
	if err != nil {
		return nil, err
	}
	d.Name = baseName(name)
	return d, nil
}

// idxHeader parses the magic number and dimensions of an IDX file and checks
// the data length. It returns the type, the dimensions and the data.
func idxHeader(b []byte, file string, maxEl int) (byte, []int, []byte, error) {
	if len(b) < 4 {
		return 0, nil, nil, errOffset(file, 0, "not an IDX file: %d bytes, shorter than the magic number", len(b))
	}
	if b[0] != 0 || b[1] != 0 {
		return 0, nil, nil, errOffset(file, 0, "not an IDX file: magic number %02x%02x%02x%02x does not start with 0000", b[0], b[1], b[2], b[3])
	}
	t, nd := b[2], int(b[3])
	size := idxSize(t)
	if size == 0 {
		return 0, nil, nil, errOffset(file, 2, "unknown IDX element type 0x%02x", t)
	}
	if nd == 0 {
		return 0, nil, nil, errOffset(file, 3, "IDX file with 0 dimensions")
	}
	if len(b) < 4+4*nd {
		return 0, nil, nil, errOffset(file, int64(len(b)), "truncated IDX header: %d dimensions need %d bytes, file has %d", nd, 4+4*nd, len(b))
	}
	dims := make([]int, nd)
	total := uint64(1)
	for i := range dims {
		v := binary.BigEndian.Uint32(b[4+4*i:])
		dims[i] = int(v)
		total *= uint64(v)
		if total > uint64(maxEl) {
			return 0, nil, nil, limitErr(errOffset(file, int64(4+4*i), "IDX dimensions %v exceed the limit of %d values (LoadOptions.MaxElements)", dims[:i+1], maxEl))
		}
	}
	data := b[4+4*nd:]
	if want := total * uint64(size); uint64(len(data)) != want {
		kind := "truncated"
		if uint64(len(data)) > want {
			kind = "trailing bytes in"
		}
		return 0, nil, nil, errOffset(file, int64(4+4*nd)+int64(min(uint64(len(data)), want)), "%s IDX data: dimensions %v of %d-byte elements need %d bytes, file has %d", kind, dims, size, want, len(data))
	}
	return t, dims, data, nil
}

func idxValue(t byte, data []byte, i int) float64 {
	switch t {
	case idxUint8:
		return float64(data[i])
	case idxInt8:
		return float64(int8(data[i]))
	case idxInt16:
		return float64(int16(binary.BigEndian.Uint16(data[2*i:])))
	case idxInt32:
		return float64(int32(binary.BigEndian.Uint32(data[4*i:])))
	case idxFloat32:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(data[4*i:])))
	default:
		return math.Float64frombits(binary.BigEndian.Uint64(data[8*i:]))
	}
}

// idxPair is one image file and its label file, as read, with the names
// their errors give.
type idxPair struct {
	images, labels []byte
	iname, lname   string
}

// idxPart is a checked idxPair: element types, image count and the data
// after the headers.
type idxPart struct {
	it, lt       byte
	n, head      int // images, header bytes of the image file
	idata, ldata []byte
	iname        string
}

// checkIDXPair parses and checks the headers of one pair and returns its
// image dimensions (after the count).
func checkIDXPair(p idxPair, opt LoadOptions) (idxPart, []int, error) {
	maxEl := opt.maxElements()
	it, idims, idata, err := idxHeader(p.images, p.iname, maxEl)
	if err != nil {
		return idxPart{}, nil, err
	}
	lt, ldims, ldata, err := idxHeader(p.labels, p.lname, maxEl)
	if err != nil {
		return idxPart{}, nil, err
	}
	if len(ldims) != 1 {
		return idxPart{}, nil, errOffset(p.lname, 3, "label file has %d dimensions %v, want 1", len(ldims), ldims)
	}
	if lt == idxFloat32 || lt == idxFloat64 {
		return idxPart{}, nil, errOffset(p.lname, 2, "label file has floating-point type 0x%02x, want an integer type", lt)
	}
	n := idims[0]
	if n != ldims[0] {
		return idxPart{}, nil, errOffset(p.lname, 4, "count mismatch: %d images in %s, %d labels", n, p.iname, ldims[0])
	}
	if n == 0 {
		return idxPart{}, nil, errOffset(p.iname, 4, "empty IDX file: 0 images")
	}
	dim := 1
	for _, v := range idims[1:] {
		dim *= v
	}
	if dim == 0 {
		return idxPart{}, nil, errOffset(p.iname, 8, "IDX images with 0 features (dimensions %v)", idims)
	}
	if opt.MaxFeatures > 0 && dim > opt.MaxFeatures {
		return idxPart{}, nil, limitErr(errOffset(p.iname, 8, "IDX images of %d features (dimensions %v) exceed the limit of %d features (LoadOptions.MaxFeatures)", dim, idims, opt.MaxFeatures))
	}
	return idxPart{it: it, lt: lt, n: n, head: 4 + 4*len(idims), idata: idata, ldata: ldata, iname: p.iname}, idims[1:], nil
}

// parseIDX converts the pairs, checked, into one Dataset holding their rows
// in turn, with one class list. Every pair's images must have the same
// shape. The values are converted once, into the Dataset's own array.
func parseIDX(pairs []idxPair, opt LoadOptions) (*Dataset, error) {
	parts := make([]idxPart, len(pairs))
	var shape []int
	n := 0
	for i, p := range pairs {
		part, dims, err := checkIDXPair(p, opt)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			shape = dims
		} else if !slices.Equal(dims, shape) {
			return nil, errOffset(p.iname, 8, "images of shape %v, against %v in %s", dims, shape, pairs[0].iname)
		}
		parts[i] = part
		n += part.n
	}
	dim := 1
	for _, v := range shape {
		dim *= v
	}
	if len(pairs) > 1 && uint64(n)*uint64(dim) > uint64(opt.maxElements()) {
		return nil, limitErr(errOffset(pairs[len(pairs)-1].iname, 4, "%d IDX images of %d features in all exceed the limit of %d values (LoadOptions.MaxElements)", n, dim, opt.maxElements()))
	}
	if len(pairs) > 1 {
		// readIDX checked each file's values alone.
		if err := limits.Check(fmt.Sprintf("%d IDX images of %d features", n, dim), limits.Words(n, dim)); err != nil {
			return nil, limitErr(errOffset(pairs[len(pairs)-1].iname, 0, "%v", err))
		}
	}
	vals := make([]float64, n*dim)
	var enc labelEncoder
	row := 0
	for _, p := range parts {
		if err := convertIDX(vals[row*dim:(row+p.n)*dim], p, dim); err != nil {
			return nil, err
		}
		for i := 0; i < p.n; i++ {
			enc.add(strconv.FormatInt(int64(idxValue(p.lt, p.ldata, i)), 10))
		}
		row += p.n
	}
	y, classes := enc.finish()
	if len(classes) == 0 {
		return nil, fmt.Errorf("%w: %s: no labels", ErrFormat, pairs[0].lname)
	}
	return &Dataset{X: mat.NewDense(n, dim, vals), Y: y, Classes: classes}, nil
}

// convertIDX writes the images of p into dst, p.n rows of dim values.
func convertIDX(dst []float64, p idxPart, dim int) error {
	if p.it == idxUint8 {
		// The common case (MNIST-style pixels): a direct conversion, every
		// value finite, on all cores (the first writes to a fresh array of
		// hundreds of MB are page faults, most of the load time).
		sparse.ParallelRows(p.n, p.n*dim, func(lo, hi int) {
			for i, b := range p.idata[lo*dim : hi*dim] {
				dst[lo*dim+i] = float64(b)
			}
		})
		return nil
	}
	for i := range dst {
		v := idxValue(p.it, p.idata, i)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errOffset(p.iname, int64(p.head+idxSize(p.it)*i), "image %d, feature %d: non-finite value %v", i/dim, i%dim, v)
		}
		dst[i] = v
	}
	return nil
}
