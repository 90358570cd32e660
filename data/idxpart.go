package data

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// ReadIDXPart reads block part of parts of the rows of an uncompressed IDX
// image file and its label file (as ParseIDX reads them, of sizes isize and
// lsize behind images and labels): the headers, then only the rows lo =
// part·n/parts … hi−1 = (part+1)·n/parts − 1 of each file, at their byte
// offsets. It returns those rows (X nil when the block is empty), their
// labels indexing the block's own Classes (UnifyClasses renumbers the
// parts alike), lo and n. The headers are checked as ParseIDX checks them,
// against the file sizes; LoadOptions.MaxElements applies to the block,
// MaxFeatures to the images' features. Errors about a value name its byte
// offset in the file.
func ReadIDXPart(images, labels io.ReaderAt, isize, lsize int64, iname, lname string, part, parts int, opt LoadOptions) (d *Dataset, lo, n int, err error) {
	if parts < 1 || part < 0 || part >= parts {
		return nil, 0, 0, fmt.Errorf("%w: part %d of %d", ErrFormat, part, parts)
	}
	it, idims, ihdr, err := idxPartHeader(images, isize, iname)
	if err != nil {
		return nil, 0, 0, err
	}
	lt, ldims, lhdr, err := idxPartHeader(labels, lsize, lname)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(ldims) != 1 {
		return nil, 0, 0, errOffset(lname, 3, "label file has %d dimensions %v, want 1", len(ldims), ldims)
	}
	if lt == idxFloat32 || lt == idxFloat64 {
		return nil, 0, 0, errOffset(lname, 2, "label file has floating-point type 0x%02x, want an integer type", lt)
	}
	n = idims[0]
	if n != ldims[0] {
		return nil, 0, 0, errOffset(lname, 4, "count mismatch: %d images in %s, %d labels", n, iname, ldims[0])
	}
	if n == 0 {
		return nil, 0, 0, errOffset(iname, 4, "empty IDX file: 0 images")
	}
	dim := 1
	for _, v := range idims[1:] {
		dim *= v
	}
	if dim == 0 {
		return nil, 0, 0, errOffset(iname, 8, "IDX images with 0 features (dimensions %v)", idims)
	}
	if opt.MaxFeatures > 0 && dim > opt.MaxFeatures {
		return nil, 0, 0, limitErr(errOffset(iname, 8, "IDX images of %d features (dimensions %v) exceed the limit of %d features (LoadOptions.MaxFeatures)", dim, idims, opt.MaxFeatures))
	}
	lo, hi := part*n/parts, (part+1)*n/parts
	rows := hi - lo
	if maxEl := opt.maxElements(); rows > 0 && dim > maxEl/rows {
		return nil, 0, 0, limitErr(errOffset(iname, 4, "this part's %d images of %d features exceed the limit of %d values (LoadOptions.MaxElements)", rows, dim, maxEl))
	}
	d = &Dataset{Classes: []string{}, Y: []int{}}
	if rows == 0 {
		return d, lo, n, nil
	}
	esz, lsz := idxSize(it), idxSize(lt)
	ioff := ihdr + int64(lo)*int64(dim)*int64(esz)
	ib := make([]byte, rows*dim*esz)
	if err := readAtFull(images, ib, ioff, iname); err != nil {
		return nil, 0, 0, err
	}
	vals := make([]float64, rows*dim)
	for i := range vals {
		v := idxValue(it, ib, i)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, 0, errOffset(iname, ioff+int64(esz*i), "image %d, feature %d: non-finite value %v", lo+i/dim, i%dim, v)
		}
		vals[i] = v
	}
	lb := make([]byte, rows*lsz)
	if err := readAtFull(labels, lb, lhdr+int64(lo)*int64(lsz), lname); err != nil {
		return nil, 0, 0, err
	}
	var enc labelEncoder
	for i := 0; i < rows; i++ {
		enc.add(strconv.FormatInt(int64(idxValue(lt, lb, i)), 10))
	}
	d.X = mat.NewDense(rows, dim, vals)
	d.Y, d.Classes = enc.finish()
	return d, lo, n, nil
}

// idxPartHeader reads and checks the header of the IDX file of size bytes
// behind r: its type, dimensions and length in bytes; the data must be
// exactly what the dimensions describe.
func idxPartHeader(r io.ReaderAt, size int64, file string) (byte, []int, int64, error) {
	var magic [4]byte
	if size < 4 {
		return 0, nil, 0, errOffset(file, 0, "not an IDX file: %d bytes, shorter than the magic number", size)
	}
	if err := readAtFull(r, magic[:], 0, file); err != nil {
		return 0, nil, 0, err
	}
	b := magic[:]
	if b[0] != 0 || b[1] != 0 {
		return 0, nil, 0, errOffset(file, 0, "not an IDX file: magic number %02x%02x%02x%02x does not start with 0000", b[0], b[1], b[2], b[3])
	}
	t, nd := b[2], int(b[3])
	esz := idxSize(t)
	if esz == 0 {
		return 0, nil, 0, errOffset(file, 2, "unknown IDX element type 0x%02x", t)
	}
	if nd == 0 {
		return 0, nil, 0, errOffset(file, 3, "IDX file with 0 dimensions")
	}
	hdr := int64(4 + 4*nd)
	if size < hdr {
		return 0, nil, 0, errOffset(file, size, "truncated IDX header: %d dimensions need %d bytes, file has %d", nd, hdr, size)
	}
	db := make([]byte, 4*nd)
	if err := readAtFull(r, db, 4, file); err != nil {
		return 0, nil, 0, err
	}
	dims := make([]int, nd)
	need := float64(esz) // bytes the dimensions describe, exact below 2^53
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(db[4*i:]))
		need *= float64(dims[i])
	}
	if have := size - hdr; need != float64(have) {
		kind := "truncated"
		if need < float64(have) {
			kind = "trailing bytes in"
		}
		return 0, nil, 0, errOffset(file, hdr+int64(min(float64(have), need)), "%s IDX data: dimensions %v of %d-byte elements need %.0f bytes, file has %d", kind, dims, esz, need, have)
	}
	return t, dims, hdr, nil
}

// readAtFull reads len(b) bytes of r at off.
func readAtFull(r io.ReaderAt, b []byte, off int64, file string) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		return errOffset(file, off+int64(n), "the file ends early")
	}
	return fmt.Errorf("data: %s: read: %w", file, err)
}
