package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/internal/input"
	"gonum.org/v1/gonum/mat"
)

// ParseCSV reads a data set in CSV form from r: an optional header row, then
// one point per row with the same number of fields. The label column
// (opt.LabelCol; none with opt.NoLabels) may hold numbers or strings; every
// other column must hold finite numbers. name labels errors and becomes the
// Dataset name.
//
// With opt.Header HeaderAuto (the zero value) the first row is a header
// when one of its feature fields is neither a number nor a missing-value
// marker ("", "?", "NA", "NaN", "null"), or when opt.LabelCol is a column
// name rather than an index; it is data when all its fields are numbers.
// When only its label is not a number the rest of the file decides: the
// row is data when its label occurs again, a header when every other label
// is a number, and otherwise the error wraps ErrAmbiguousHeader (set
// opt.Header). HeaderPresent and HeaderAbsent (or opt.NoHeader) say which.
//
// It rejects empty input, a header without data rows, ragged rows, missing
// values, unparsable numbers, NaN and ±Inf, each with a *ParseError naming
// the line and column, and input beyond opt.MaxElements or
// opt.MaxInputBytes with one that also wraps ErrLimit.
func ParseCSV(r io.Reader, name string, opt LoadOptions) (*Dataset, error) {
	r, err := textInput(r, name, opt)
	if err != nil {
		return nil, err
	}
	cr := newCSVReader(r)
	rec, line, err := readCSVRow(cr, name)
	if err == io.EOF {
		return nil, errAt(name, 0, 0, "", "empty file")
	}
	if err != nil {
		return nil, wrapRead(name, err)
	}
	l, err := newCSVLayout(rec, line, name, opt)
	if err != nil {
		return nil, err
	}
	rows := &csvRows{l: l, maxEl: opt.maxElements()}
	if l.mode != HeaderPresent {
		if err := rows.add(l.first, line); err != nil {
			return nil, err
		}
	}
	for {
		rec, ln, err := readCSVRow(cr, name)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, wrapRead(name, err)
		}
		line = ln
		if err := rows.add(rec, ln); err != nil {
			return nil, err
		}
	}
	if l.ambiguous && rows.n > 1 {
		switch recurs, othersNumeric := rows.enc.firstRecurs(); {
		case recurs:
			// data: the first row's class occurs again
		case othersNumeric:
			// a header naming the label column above numeric labels
			rows.dropFirst()
		default:
			return nil, l.headerError()
		}
	}
	if rows.n == 0 {
		return nil, errAt(name, line, 0, "", "no data rows after the header")
	}
	return rows.dataset(), nil
}

// newCSVReader returns the CSV reader of ParseCSV over r.
func newCSVReader(r io.Reader) *csv.Reader {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	return cr
}

// readCSVRow reads the next record of cr and the line it starts on.
func readCSVRow(cr *csv.Reader, name string) ([]string, int, error) {
	rec, err := cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, 0, errAt(name, pe.Line, pe.Column, "", "malformed CSV: %v", pe.Err)
		}
		return nil, 0, err
	}
	line, _ := cr.FieldPos(0)
	return rec, line, nil
}

// csvLayout is what the first record of a CSV file says about every row:
// the columns, the label column, and whether the record is a header.
type csvLayout struct {
	name      string
	ncol      int
	lab, dim  int // the label column (−1: none) and the number of features
	header    []string
	mode      HeaderMode
	ambiguous bool     // HeaderAuto could not tell: the rest of the file decides
	first     []string // the first record, without a byte-order mark
	line      int      // the line of the first record
}

// newCSVLayout reads the layout from the first record rec, on line line.
func newCSVLayout(rec []string, line int, name string, opt LoadOptions) (*csvLayout, error) {
	l := &csvLayout{name: name, ncol: len(rec), line: line, first: append([]string(nil), rec...)}
	l.first[0] = strings.TrimPrefix(l.first[0], "\ufeff")
	if opt.NoLabels {
		if strings.TrimSpace(opt.LabelCol) != "" {
			return nil, errAt(name, line, 0, "", "a label column (%q) for data without labels", opt.LabelCol)
		}
	} else if l.ncol < 2 {
		return nil, errAt(name, line, 0, "", "%d column(s): need at least one feature and a label", l.ncol)
	}
	l.mode = opt.headerMode()
	if l.mode == HeaderAuto {
		l.mode, l.ambiguous = detectHeader(l.first, opt)
	}
	l.header = make([]string, l.ncol)
	if l.mode == HeaderPresent {
		for j, h := range l.first {
			l.header[j] = strings.TrimSpace(h)
		}
	} else {
		for j := range l.header {
			l.header[j] = "c" + strconv.Itoa(j)
		}
	}
	l.lab, l.dim = -1, l.ncol
	if !opt.NoLabels {
		var err error
		if l.lab, err = labelColumn(l.header, opt.LabelCol); err != nil {
			return nil, errAt(name, line, 0, "", "%v", err)
		}
		l.dim = l.ncol - 1
	}
	if opt.MaxFeatures > 0 && l.dim > opt.MaxFeatures {
		return nil, limitErr(errAt(name, line, 0, "", "%d features exceed the limit of %d (LoadOptions.MaxFeatures)", l.dim, opt.MaxFeatures))
	}
	return l, nil
}

// headerError is the error of a first row that may be a header or data
// (see ParseCSV).
func (l *csvLayout) headerError() error {
	e := errAt(l.name, l.line, l.lab+1, "", "cannot tell whether the first row is a header: its features are numbers, its label %s is not and occurs in no other row (set LoadOptions.Header)", input.Clip(strings.TrimSpace(l.first[l.lab]), 40))
	e.header = true
	return e
}

// csvRows collects the data rows of a CSV file of layout l.
type csvRows struct {
	l     *csvLayout
	maxEl int
	vals  chunkedValues
	enc   labelEncoder
	n     int
}

// add parses one record on line line as a data row.
func (c *csvRows) add(rec []string, line int) error {
	l := c.l
	if len(rec) != l.ncol {
		return errAt(l.name, line, min(len(rec), l.ncol)+1, "", "ragged row: %d fields, the header has %d", len(rec), l.ncol)
	}
	if (c.n+1)*l.dim > c.maxEl {
		return limitErr(errAt(l.name, line, 0, "", "more than %d values (LoadOptions.MaxElements)", c.maxEl))
	}
	for j, f := range rec {
		if j == l.lab {
			if err := input.CheckLabel(f); err != nil {
				return labelErr(errAt(l.name, line, j+1, l.header[j], "%v", labelMsg(err)))
			}
			continue
		}
		v, err := parseValue(f)
		if err != nil {
			return errAt(l.name, line, j+1, l.header[j], "%v", err)
		}
		c.vals.add(v)
	}
	if l.lab >= 0 {
		c.enc.add(rec[l.lab])
	}
	c.n++
	return nil
}

// dropFirst forgets the first row (a header parsed as data).
func (c *csvRows) dropFirst() {
	c.vals.skip = c.l.dim
	c.enc.dropFirst()
	c.n--
}

// dataset returns the rows collected (X nil when there are none; Classes
// non-nil when the file has labels).
func (c *csvRows) dataset() *Dataset {
	d := &Dataset{Name: baseName(c.l.name)}
	if c.n > 0 {
		d.X = mat.NewDense(c.n, c.l.dim, c.vals.join(c.n*c.l.dim))
	}
	if c.l.lab >= 0 {
		d.Y, d.Classes = c.enc.finish()
	} else {
		d.Y = make([]int, c.n)
	}
	return d
}

// detectHeader decides HeaderAuto from the first row (see ParseCSV):
// present, absent, or absent for now but ambiguous (only the label is not a
// number; the rest of the file decides).
func detectHeader(first []string, opt LoadOptions) (mode HeaderMode, ambiguous bool) {
	lab := -1
	if !opt.NoLabels {
		spec := strings.TrimSpace(opt.LabelCol)
		if spec == "" {
			lab = len(first) - 1
		} else if i, err := strconv.Atoi(spec); err == nil {
			if i < 0 {
				i += len(first)
			}
			lab = i
		} else {
			return HeaderPresent, false // a column name needs a header
		}
	}
	for j, f := range first {
		if j != lab && !numberLike(f) {
			return HeaderPresent, false
		}
	}
	if lab < 0 || lab >= len(first) || numberLike(first[lab]) {
		return HeaderAbsent, false
	}
	return HeaderAbsent, true
}

// numberLike reports whether a field reads as a value of a data row: a
// number (finite or not, in range or not) or a missing-value marker.
func numberLike(f string) bool {
	s := strings.TrimSpace(f)
	switch strings.ToLower(s) {
	case "", "?", "na", "nan", "null":
		return true
	}
	_, err := strconv.ParseFloat(s, 64)
	var ne *strconv.NumError
	return err == nil || errors.As(err, &ne) && ne.Err == strconv.ErrRange
}

func wrapRead(name string, err error) error {
	var pe *ParseError
	var ie *input.Error
	if errors.As(err, &pe) || errors.As(err, &ie) {
		return wrapInput(name, err)
	}
	return fmt.Errorf("data: %s: read: %w", name, err)
}

// labelMsg is the message of a CheckLabel error without its sentinel's
// prefix.
func labelMsg(err error) string {
	return strings.TrimPrefix(err.Error(), input.ErrLabel.Error()+": ")
}

// parseValue parses one feature value: a finite number.
func parseValue(f string) (float64, error) {
	s := strings.TrimSpace(f)
	switch strings.ToLower(s) {
	case "", "?", "na", "nan", "null":
		if s == "" {
			return 0, errors.New("missing value")
		}
		if strings.EqualFold(s, "nan") {
			return 0, errors.New("NaN is not allowed")
		}
		return 0, fmt.Errorf("missing value %s", input.Clip(s, 40))
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange && !math.IsInf(v, 0) {
			return v, nil // underflow to a subnormal or zero is fine
		}
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("value %s overflows float64", input.Clip(s, 40))
		}
		return 0, fmt.Errorf("invalid number %s", input.Clip(s, 40))
	}
	if math.IsNaN(v) {
		return 0, errors.New("NaN is not allowed")
	}
	if math.IsInf(v, 0) {
		return 0, fmt.Errorf("infinite value %s is not allowed", input.Clip(s, 40))
	}
	return v, nil
}

// labelColumn resolves LoadOptions.LabelCol against a header.
func labelColumn(header []string, spec string) (int, error) {
	ncol := len(header)
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return ncol - 1, nil
	}
	for j, h := range header {
		if h == spec {
			return j, nil
		}
	}
	if i, err := strconv.Atoi(spec); err == nil {
		if i < 0 {
			i += ncol
		}
		if i < 0 || i >= ncol {
			return 0, fmt.Errorf("label column %s outside the %d columns", spec, ncol)
		}
		return i, nil
	}
	return 0, fmt.Errorf("no column named %s for the label (columns: %s)", input.Clip(spec, 40), listColumns(header))
}

// listColumns lists column names for an error: the first eight, then the
// count.
func listColumns(header []string) string {
	if len(header) <= 8 {
		return strings.Join(header, ", ")
	}
	var b strings.Builder
	for _, h := range header[:8] {
		b.WriteString(input.Clip(h, 20) + ", ")
	}
	fmt.Fprintf(&b, "… %d in all", len(header))
	return b.String()
}

// chunkedValues collects parsed values in chunks that are never moved, and
// joins them once: appending to one slice re-copied the data at every
// doubling (a third of the time to load letters' 340,000 values).
type chunkedValues struct {
	full [][]float64
	cur  []float64
	skip int // leading values to drop (a header row parsed as data)
}

func (c *chunkedValues) add(v float64) {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]float64, 0, min(max(2*cap(c.cur), 1024), 1<<20))
	}
	c.cur = append(c.cur, v)
}

// join returns the values collected after the skipped ones in one slice
// (n is its expected length).
func (c *chunkedValues) join(n int) []float64 {
	out := make([]float64, 0, n)
	skip := c.skip
	for _, ch := range append(c.full, c.cur) {
		drop := min(skip, len(ch))
		skip -= drop
		out = append(out, ch[drop:]...)
	}
	return out
}
