package serve

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// ErrInvalid is wrapped by the errors about invalid reference sets, options
// and requests; it matches errs.ErrInvalid.
var ErrInvalid = errs.New("serve: invalid input", errs.ErrInvalid)

// ErrLimit is wrapped by the errors about input beyond a limit (a reference
// file larger than ReadOptions allow); it matches errs.ErrResource.
var ErrLimit = errs.New("serve: input exceeds a limit", errs.ErrResource)

// Reference is a labelled reference set: the rows a k-NN prediction
// searches, as raw features (the model's preprocessing is applied to them
// once, when an Index is built).
type Reference struct {
	X      *mat.Dense // n×D raw feature rows
	Labels []string   // n class names
}

// ReadOptions bound and describe a reference file for ReadCSV. The zero
// value reads at most 1 GiB with the label in the last column.
type ReadOptions struct {
	// MaxBytes caps the bytes read (0: 1 GiB). Larger input is refused
	// with an error wrapping ErrLimit.
	MaxBytes int64
	// LabelColumn is the 1-based column of the label; a negative one
	// counts from the end (−1 is the last), and 0 means the last.
	LabelColumn int
}

// ReadCSV reads a reference set: one row per line, comma-separated, every
// column a finite number except the label column (any text). A first line
// whose feature fields are not all numbers is a header and is skipped. It
// refuses ragged rows, missing or non-finite values and input beyond
// opt.MaxBytes, naming the line.
func ReadCSV(r io.Reader, opt ReadOptions) (*Reference, error) {
	maxBytes := opt.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 1 << 30
	}
	lr := &limitReader{r: r, left: maxBytes}
	cr := csv.NewReader(lr)
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	var (
		data   []float64
		labels []string
		ncol   int
		labCol int
	)
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if lr.over {
			return nil, fmt.Errorf("%w: reference set larger than %d bytes", ErrLimit, maxBytes)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: reference set: %v", ErrInvalid, err)
		}
		if ncol == 0 {
			ncol = len(rec)
			if ncol < 2 {
				return nil, fmt.Errorf("%w: reference set line %d: %d column(s), need features and a label", ErrInvalid, line, ncol)
			}
			switch c := opt.LabelColumn; {
			case c > 0:
				labCol = c - 1
			case c < 0:
				labCol = ncol + c
			default:
				labCol = ncol - 1
			}
			if labCol < 0 || labCol >= ncol {
				return nil, fmt.Errorf("%w: reference set: label column %d of %d", ErrInvalid, opt.LabelColumn, ncol)
			}
			if isHeader(rec, labCol) {
				continue
			}
		}
		// encoding/csv already refuses a line with another number of fields.
		for j, f := range rec {
			if j == labCol {
				if strings.TrimSpace(f) == "" {
					return nil, fmt.Errorf("%w: reference set line %d: no label", ErrInvalid, line)
				}
				labels = append(labels, strings.TrimSpace(f))
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: reference set line %d column %d: %q is not a finite number", ErrInvalid, line, j+1, f)
			}
			data = append(data, v)
		}
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("%w: reference set has no rows", ErrInvalid)
	}
	return &Reference{X: mat.NewDense(len(labels), ncol-1, data), Labels: labels}, nil
}

// isHeader reports whether a first line is a header: a feature field that
// is not a number.
func isHeader(rec []string, labCol int) bool {
	for j, f := range rec {
		if j == labCol {
			continue
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err != nil {
			return true
		}
	}
	return false
}

// limitReader reads at most left bytes and then reports over on the next
// byte.
type limitReader struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.over = true
			return 0, ErrLimit
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// canonicalLabel returns the class name of a raw label: numeric labels in
// Go's shortest form ("1.0" and "+1" are "1", −0 is "0"), others trimmed.
func canonicalLabel(s string) string {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return s
	}
	if v == 0 {
		v = 0
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// classIDs returns the sorted class names of labels, canonicalised
// (numeric labels in Go's shortest form, so "1", "1.0" and "+1" are one
// class "1"; others trimmed), ordered numerically when all are numbers,
// else lexicographically, as psdlearn's data loaders order them; and each
// label's index among them.
func classIDs(labels []string) (classes []string, ids []int32) {
	canon := make([]string, len(labels))
	seen := map[string]bool{}
	for i, l := range labels {
		canon[i] = canonicalLabel(l)
		if !seen[canon[i]] {
			seen[canon[i]] = true
			classes = append(classes, canon[i])
		}
	}
	numeric := true
	vals := make(map[string]float64, len(classes))
	for _, c := range classes {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
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
	pos := make(map[string]int32, len(classes))
	for i, c := range classes {
		pos[c] = int32(i)
	}
	ids = make([]int32, len(labels))
	for i, l := range canon {
		ids[i] = pos[l]
	}
	return classes, ids
}
