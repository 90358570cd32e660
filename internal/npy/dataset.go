package npy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"codeberg.org/sbinet/npyio/npy"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// Scheme is the data spec scheme of LoadDataset: npy:X.npy[:LABELS.npy].
const Scheme = "npy"

// LoadDataset is a data.Opener for the spec npy:X.npy[:LABELS.npy] (name is
// the part after "npy:"): X a 2-D float64 array, one row per point (a 1-D
// array is one feature), and LABELS, if given, a 1-D array of n integers,
// floats or strings. Without LABELS every point has label 0 and no class
// names (as a CSV file read with --no-labels). Class names are the labels'
// decimal or string forms, ordered numerically when all are numbers, else
// lexicographically, as data.Load orders them.
//
// The limits of opt apply before anything is allocated: MaxInputBytes to
// each file, MaxElements to rows×features of X (from its header),
// MaxFeatures to its columns. NaN and ±Inf are refused, as in CSV files.
func LoadDataset(name string, opt data.LoadOptions) (*data.Dataset, error) {
	xPath, yPath, _ := strings.Cut(name, ":")
	if xPath == "" {
		return nil, fmt.Errorf("%w: npy spec %q: want npy:X.npy[:LABELS.npy]", data.ErrFormat, name)
	}
	if yPath != "" && opt.NoLabels {
		return nil, fmt.Errorf("%w: npy spec %q: a labels file for data without labels (--no-labels)", data.ErrFormat, name)
	}
	maxEl := opt.MaxElements
	if maxEl <= 0 {
		maxEl = data.DefaultMaxElements
	}
	var x *mat.Dense
	err := readFile(xPath, opt, func(r *npy.Reader) error {
		h := r.Header.Descr
		if !isFloat64(h.Type) {
			return fmt.Errorf("%w: %s: want float64 ('<f8'; numpy: x.astype(np.float64))", data.ErrFormat, (&Header{Descr: h.Type}).describeDtype())
		}
		rows, cols := 0, 1
		switch len(h.Shape) {
		case 1:
			rows = h.Shape[0]
		case 2:
			rows, cols = h.Shape[0], h.Shape[1]
		default:
			return fmt.Errorf("%w: shape %v: want a 2-D array (points × features)", data.ErrFormat, h.Shape)
		}
		if rows < 1 || cols < 1 {
			return fmt.Errorf("%w: shape %v: no data", data.ErrFormat, h.Shape)
		}
		if rows > maxEl/cols {
			return fmt.Errorf("%w: %d×%d values exceed the cap of %d (LoadOptions.MaxElements, --max-memory)", data.ErrLimit, rows, cols, maxEl)
		}
		if opt.MaxFeatures > 0 && cols > opt.MaxFeatures {
			return fmt.Errorf("%w: %d features exceed the cap of %d", data.ErrLimit, cols, opt.MaxFeatures)
		}
		var m mat.Dense
		if err := r.Read(&m); err != nil {
			return err
		}
		if mr, mc := m.Dims(); mr != rows || mc != cols {
			return fmt.Errorf("%w: read %d×%d values for shape %v", data.ErrFormat, mr, mc, h.Shape)
		}
		for i, v := range m.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: entry (%d,%d) is %v: NaN and infinite values are not allowed", data.ErrFormat, i/cols, i%cols, v)
			}
		}
		x = &m
		return nil
	})
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	d := &data.Dataset{Name: baseName(xPath), X: x, Y: make([]int, n)}
	if yPath == "" {
		return d, nil
	}
	var names []string
	err = readFile(yPath, opt, func(r *npy.Reader) error {
		h := r.Header.Descr
		if len(h.Shape) != 1 || h.Shape[0] != n {
			return fmt.Errorf("%w: shape %v: want %d labels, one per row of %s", data.ErrFormat, h.Shape, n, xPath)
		}
		var err error
		names, err = decodeLabels(r, n, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	d.Y, d.Classes = encodeLabels(names)
	return d, nil
}

// decodeLabels reads the n labels of r (a 1-D array of integers, floats,
// strings or booleans) as class names: decimal forms, strings as they are
// (checked by data.CheckLabel). Errors number the labels from first.
func decodeLabels(r *npy.Reader, n, first int) ([]string, error) {
	h := r.Header.Descr
	t := npy.TypeFrom(h.Type)
	if t == nil {
		return nil, fmt.Errorf("%w: label dtype %s: want integers, floats or strings", data.ErrFormat, h.Type)
	}
	ptr := reflect.New(reflect.SliceOf(t))
	if err := r.Read(ptr.Interface()); err != nil {
		return nil, err
	}
	v := ptr.Elem()
	if v.Len() != n {
		return nil, fmt.Errorf("%w: read %d labels, want %d", data.ErrFormat, v.Len(), n)
	}
	names := make([]string, n)
	for i := range names {
		e := v.Index(i)
		switch e.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			names[i] = strconv.FormatInt(e.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			names[i] = strconv.FormatUint(e.Uint(), 10)
		case reflect.Float32, reflect.Float64:
			f := e.Float()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%w: label %d is %v", data.ErrFormat, first+i, f)
			}
			names[i] = strconv.FormatFloat(f, 'g', -1, 64)
		case reflect.String:
			names[i] = e.String()
			if err := data.CheckLabel(names[i]); err != nil {
				return nil, fmt.Errorf("label %d: %w", first+i, err)
			}
		case reflect.Bool:
			names[i] = strconv.FormatBool(e.Bool())
		default:
			return nil, fmt.Errorf("%w: label dtype %s: want integers, floats or strings", data.ErrFormat, h.Type)
		}
	}
	return names, nil
}

// isFloat64 reports whether a NumPy dtype string is a float64 of either
// byte order.
func isFloat64(dtype string) bool {
	switch strings.Trim(dtype, "'\"") {
	case "<f8", ">f8", "=f8", "f8", "float64", "d", "<d", ">d":
		return true
	}
	return false
}

// readFile opens path, caps the bytes read at opt.MaxInputBytes, parses the
// .npy header and hands the reader to read.
func readFile(path string, opt data.LoadOptions, read func(*npy.Reader) error) (err error) {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	limit := opt.MaxInputBytes
	if limit <= 0 {
		limit = data.DefaultMaxInputBytes
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return fmt.Errorf("npy: %s: %w: %d bytes exceed the cap of %d (--max-input)", path, data.ErrLimit, st.Size(), limit)
	}
	br := bufio.NewReaderSize(io.LimitReader(f, limit), maxHeader+16)
	h, err := ReadHeader(br)
	if err != nil {
		return fmt.Errorf("npy: %s: %w: %v", path, data.ErrFormat, err)
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	if t := strings.TrimLeft(h.Descr, "<>=|"); t == "O" || strings.HasPrefix(t, "V") {
		return fmt.Errorf("npy: %s: %w: %s", path, data.ErrFormat, h.describeDtype())
	}
	if err := h.Check(path, size); err != nil {
		if errors.Is(err, limits.ErrMemory) {
			return fmt.Errorf("npy: %w: %w", data.ErrLimit, err)
		}
		return fmt.Errorf("npy: %w: %w", data.ErrFormat, err)
	}
	// npyio is not hardened against malformed input (it can panic on a
	// corrupt header or body): a panic is a format error of this file.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("npy: %s: %w: malformed file (%v)", path, data.ErrFormat, p)
		}
	}()
	r, err := npy.NewReader(br)
	if err != nil {
		return fmt.Errorf("npy: %s: %w: %v", path, data.ErrFormat, err)
	}
	if err := read(r); err != nil {
		if !errors.Is(err, data.ErrFormat) && !errors.Is(err, data.ErrLimit) {
			err = fmt.Errorf("%w: %v", data.ErrFormat, err)
		}
		return fmt.Errorf("npy: %s: %w", path, err)
	}
	return nil
}

// encodeLabels returns the label indices of names into the sorted list of
// distinct names: numerically when every name is a number, else
// lexicographically.
func encodeLabels(names []string) ([]int, []string) {
	seen := map[string]bool{}
	var classes []string
	for _, s := range names {
		if !seen[s] {
			seen[s] = true
			classes = append(classes, s)
		}
	}
	vals := make(map[string]float64, len(classes))
	numeric := true
	for _, c := range classes {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil {
			numeric = false
			break
		}
		vals[c] = v
	}
	if numeric {
		sort.Slice(classes, func(i, j int) bool { return vals[classes[i]] < vals[classes[j]] })
	} else {
		sort.Strings(classes)
	}
	pos := make(map[string]int, len(classes))
	for i, c := range classes {
		pos[c] = i
	}
	y := make([]int, len(names))
	for i, s := range names {
		y[i] = pos[s]
	}
	return y, classes
}

// baseName is the file name without directory and extensions.
func baseName(path string) string {
	b := filepath.Base(path)
	for {
		e := filepath.Ext(b)
		if e == "" || e == b {
			return b
		}
		b = strings.TrimSuffix(b, e)
	}
}
