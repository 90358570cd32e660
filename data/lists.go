package data

import (
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/internal/input"
)

// csvRecords reads r as CSV (fields trimmed, a leading byte-order mark
// dropped; bounded and checked as text by package internal/input: input
// beyond opt.MaxInputBytes, a line beyond opt.MaxLineBytes and bytes that
// are not text refused) and calls record with every record and its 1-based
// line; encoding/csv skips blank lines. Errors locate the line in name.
func csvRecords(r io.Reader, name string, opt LoadOptions, record func(line int, fields []string) error) error {
	r, err := textInput(r, name, opt)
	if err != nil {
		return err
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	for first := true; ; first = false {
		fields, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return errAt(name, pe.Line, pe.Column, "", "malformed CSV: %v", pe.Err)
			}
			return wrapRead(name, err)
		}
		line, _ := cr.FieldPos(0)
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if first {
			fields[0] = strings.TrimPrefix(fields[0], "\ufeff") // a spreadsheet's byte-order mark
		}
		if err := record(line, fields); err != nil {
			return err
		}
	}
}

// ParseLabels reads one class label per line (one line per object; CSV,
// so a label with a comma is quoted), as the labels of a data set: the
// classes are the distinct labels, ordered as Load orders classes
// (numerically when every label is a number, else lexicographically; "1"
// and "1.0" are one class), and y holds their indices. Blank lines are
// allowed at the end only: a blank line between labels would shift every
// later label to the wrong object. It refuses, with a *ParseError naming
// the line, a line with more than one field, an empty label, a label
// CheckLabel refuses (the error wraps ErrLabel), a blank line before the
// last label, no label at all and input beyond opt.MaxInputBytes (or
// opt.MaxElements labels, or a line beyond opt.MaxLineBytes).
func ParseLabels(r io.Reader, name string, opt LoadOptions) (y []int, classes []string, err error) {
	var enc labelEncoder
	last, maxEl := 0, opt.maxElements()
	err = csvRecords(r, name, opt, func(line int, fields []string) error {
		switch {
		case line > last+1:
			return errAt(name, last+1, 0, "", "empty label (one label per line, one line per object)")
		case len(fields) != 1:
			return errAt(name, line, 0, "", "%d fields: want one label per line", len(fields))
		case fields[0] == "":
			return errAt(name, line, 0, "", "empty label (one label per line, one line per object)")
		case len(enc.ids) >= maxEl:
			return limitErr(errAt(name, line, 0, "", "more than %d labels (LoadOptions.MaxElements)", maxEl))
		}
		if err := input.CheckLabel(fields[0]); err != nil {
			return labelErr(errAt(name, line, 0, "", "%v", labelMsg(err)))
		}
		enc.add(fields[0])
		last = line
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(enc.ids) == 0 {
		return nil, nil, errAt(name, 0, 0, "", "no labels")
	}
	y, classes = enc.finish()
	return y, classes, nil
}

// IndexPairs are pairs of 0-based indices (rows of a data set, or the
// points of a kernel) and, when the file has a y column, their labels: +1
// similar, −1 dissimilar.
type IndexPairs struct {
	IJ [][2]int
	Y  []int // nil without a y column
}

// MaxIndexPairs caps the pairs ParseIndexPairs reads from one input (about
// 40 bytes each in memory).
const MaxIndexPairs = 10_000_000

// ParseIndexPairs reads a CSV of pairs i,j[,y] of 0-based indices below n
// (what names the n objects in errors, say "rows of the data"), with an
// optional header naming the columns i, j and y. needY requires the y
// column. Errors are *ParseErrors naming the line: "pairs.csv:3: j = 150
// outside [0, 150) …". Input beyond opt.MaxInputBytes and more than
// MaxIndexPairs pairs are refused.
func ParseIndexPairs(r io.Reader, name string, n int, what string, needY bool, opt LoadOptions) (*IndexPairs, error) {
	out := &IndexPairs{}
	cols, rec := 0, 0 // cols: 2 or 3, fixed by the header or the first row
	err := csvRecords(r, name, opt, func(line int, fields []string) error {
		rec++
		if rec == 1 {
			if _, err := strconv.Atoi(strings.TrimPrefix(fields[0], "+")); err != nil {
				var err error
				cols, err = pairsHeader(name, line, fields, needY)
				return err
			}
		}
		if cols == 0 {
			cols = len(fields)
			switch {
			case cols != 2 && cols != 3:
				return errAt(name, line, 0, "", "%d fields: want i,j or i,j,y", len(fields))
			case needY && cols == 2:
				return errAt(name, line, 0, "", "2 fields: want i,j,y (y = +1 similar, -1 dissimilar)")
			}
		}
		if len(fields) != cols {
			return errAt(name, line, 0, "", "%d fields, want %d like the first row (i,j%s)", len(fields), cols, map[bool]string{true: ",y"}[cols == 3])
		}
		if len(out.IJ) >= MaxIndexPairs {
			return limitErr(errAt(name, line, 0, "", "more than %d pairs", MaxIndexPairs))
		}
		var p [2]int
		for c, col := range []string{"i", "j"} {
			v, err := strconv.Atoi(strings.TrimPrefix(fields[c], "+"))
			if err != nil {
				return errAt(name, line, 0, "", "%s = %s is not an integer", col, input.Clip(fields[c], 40))
			}
			if v < 0 || v >= n {
				return errAt(name, line, 0, "", "%s = %d outside [0, %d): there are %d %s", col, v, n, n, what)
			}
			p[c] = v
		}
		out.IJ = append(out.IJ, p)
		if cols == 3 {
			switch fields[2] {
			case "1", "+1":
				out.Y = append(out.Y, 1)
			case "-1":
				out.Y = append(out.Y, -1)
			default:
				return errAt(name, line, 0, "", "y = %s: want 1 (similar) or -1 (dissimilar)", input.Clip(fields[2], 40))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out.IJ) == 0 {
		return nil, errAt(name, 0, 0, "", "no pairs")
	}
	return out, nil
}

// pairsHeader reads the header of a pairs file: i,j or i,j,y; it returns
// the number of columns.
func pairsHeader(name string, line int, fields []string, needY bool) (int, error) {
	switch strings.ToLower(strings.Join(fields, ",")) {
	case "i,j":
		if needY {
			return 0, errAt(name, line, 0, "", "no y column: want i,j,y (y = +1 similar, -1 dissimilar)")
		}
		return 2, nil
	case "i,j,y":
		return 3, nil
	}
	return 0, errAt(name, line, 0, "", "header %s: want i,j or i,j,y (or no header)", input.Clip(strings.Join(fields, ","), 40))
}
