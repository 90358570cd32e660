package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// ParseCSV reads a labelled data set in CSV form from r: a header row (unless
// opt.NoHeader), then one point per row with the same number of fields. The
// label column (opt.LabelCol) may hold numbers or strings; every other column
// must hold finite numbers. name labels errors and becomes the Dataset name.
//
// It rejects empty input, a header without data rows, ragged rows, missing
// values, unparsable numbers, NaN and ±Inf, each with a *ParseError naming
// the line and column, and input beyond opt.MaxElements or
// opt.MaxInputBytes with one that also wraps ErrLimit.
func ParseCSV(r io.Reader, name string, opt LoadOptions) (*Dataset, error) {
	cr := csv.NewReader(newCapReader(r, name, opt.maxInputBytes()))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	readRow := func() ([]string, int, error) {
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

	rec, line, err := readRow()
	if err == io.EOF {
		return nil, errAt(name, 0, 0, "", "empty file")
	}
	if err != nil {
		return nil, wrapRead(name, err)
	}
	ncol := len(rec)
	header := make([]string, ncol)
	firstData := []string(nil)
	if opt.NoHeader {
		for j := range header {
			header[j] = "c" + strconv.Itoa(j)
		}
		firstData = append([]string(nil), rec...)
	} else {
		for j, h := range rec {
			header[j] = strings.TrimSpace(h)
		}
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	if ncol < 2 {
		return nil, errAt(name, line, 0, "", "%d column(s): need at least one feature and a label", ncol)
	}
	lab, err := labelColumn(header, opt.LabelCol)
	if err != nil {
		return nil, errAt(name, line, 0, "", "%v", err)
	}
	dim := ncol - 1
	if opt.MaxFeatures > 0 && dim > opt.MaxFeatures {
		return nil, limitErr(errAt(name, line, 0, "", "%d features exceed the limit of %d (LoadOptions.MaxFeatures)", dim, opt.MaxFeatures))
	}
	maxEl := opt.maxElements()

	var vals []float64
	var enc labelEncoder
	n := 0
	row := func(rec []string, line int) error {
		if len(rec) != ncol {
			return errAt(name, line, min(len(rec), ncol)+1, "", "ragged row: %d fields, the header has %d", len(rec), ncol)
		}
		if (n+1)*dim > maxEl {
			return limitErr(errAt(name, line, 0, "", "more than %d values (LoadOptions.MaxElements)", maxEl))
		}
		for j, f := range rec {
			if j == lab {
				if strings.TrimSpace(f) == "" {
					return errAt(name, line, j+1, header[j], "missing label")
				}
				continue
			}
			v, err := parseValue(f)
			if err != nil {
				return errAt(name, line, j+1, header[j], "%v", err)
			}
			vals = append(vals, v)
		}
		enc.add(rec[lab])
		n++
		return nil
	}
	if firstData != nil {
		if err := row(firstData, line); err != nil {
			return nil, err
		}
	}
	for {
		rec, line, err := readRow()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, wrapRead(name, err)
		}
		if err := row(rec, line); err != nil {
			return nil, err
		}
	}
	if n == 0 {
		return nil, errAt(name, line, 0, "", "no data rows after the header")
	}
	y, classes := enc.finish()
	return &Dataset{Name: baseName(name), X: mat.NewDense(n, dim, vals), Y: y, Classes: classes}, nil
}

func wrapRead(name string, err error) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe
	}
	return fmt.Errorf("data: %s: read: %w", name, err)
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
		return 0, fmt.Errorf("missing value %q", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange && !math.IsInf(v, 0) {
			return v, nil // underflow to a subnormal or zero is fine
		}
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("value %q overflows float64", s)
		}
		return 0, fmt.Errorf("invalid number %q", s)
	}
	if math.IsNaN(v) {
		return 0, errors.New("NaN is not allowed")
	}
	if math.IsInf(v, 0) {
		return 0, fmt.Errorf("infinite value %q is not allowed", s)
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
	return 0, fmt.Errorf("no column named %q for the label (columns: %s)", spec, strings.Join(header, ", "))
}
