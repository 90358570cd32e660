package data

import (
	"bufio"
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// ParseLIBSVM reads a data set in LIBSVM / SVMlight sparse format from r:
// one point per line, "label index:value index:value …", indices 1-based and
// unique within a line, omitted entries zero. Blank lines and "#" comments
// are ignored, as are SVMlight "qid:" tokens. The dimension is the largest
// index used. Labels may be numbers or strings.
//
// It rejects empty input, files without any feature, malformed tokens,
// indices ≤ 0 or repeated in a line, NaN and ±Inf values, each with a
// *ParseError naming the line and byte column, and input beyond
// opt.MaxElements or opt.MaxInputBytes with one that also wraps ErrLimit.
func ParseLIBSVM(r io.Reader, name string, opt LoadOptions) (*Dataset, error) {
	type entry struct {
		j int
		v float64
	}
	br := bufio.NewReaderSize(newCapReader(r, name, opt.maxInputBytes()), 1<<16)
	maxEl := opt.maxElements()
	var (
		ptr     = []int{0}
		entries []entry
		enc     labelEncoder
		dim     int
		lineNo  int
		seen    []indexAt // the indices of the current line, to find repeats
	)
	for {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, wrapRead(name, err)
		}
		if line == "" && err == io.EOF {
			break
		}
		lineNo++
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimRight(line, "\r\n")
		toks := fieldsWithCol(line)
		if len(toks) > 0 {
			lab := toks[0]
			if strings.Contains(lab.s, ":") {
				return nil, errAt(name, lineNo, lab.col, "", "line starts with %q: want a label before the index:value pairs", lab.s)
			}
			seen = seen[:0]
			for _, t := range toks[1:] {
				is, vs, ok := strings.Cut(t.s, ":")
				if !ok {
					return nil, errAt(name, lineNo, t.col, "", "token %q: want index:value", t.s)
				}
				if strings.EqualFold(is, "qid") {
					continue
				}
				j, err := strconv.Atoi(is)
				if err != nil || j <= 0 {
					return nil, errAt(name, lineNo, t.col, "", "index %q: want an integer ≥ 1", is)
				}
				if j > maxEl {
					return nil, limitErr(errAt(name, lineNo, t.col, "", "index %d exceeds the limit of %d values (LoadOptions.MaxElements)", j, maxEl))
				}
				if opt.MaxFeatures > 0 && j > opt.MaxFeatures {
					return nil, limitErr(errAt(name, lineNo, t.col, "", "index %d exceeds the limit of %d features (LoadOptions.MaxFeatures)", j, opt.MaxFeatures))
				}
				seen = append(seen, indexAt{j, t.col})
				v, err := parseValue(vs)
				if err != nil {
					return nil, errAt(name, lineNo, t.col+len(is)+1, "", "index %d: %v", j, err)
				}
				if j > dim {
					dim = j
				}
				if v != 0 {
					entries = append(entries, entry{j - 1, v})
				}
			}
			if j, col, dup := firstRepeat(seen); dup {
				return nil, errAt(name, lineNo, col, "", "index %d repeated in the line", j)
			}
			enc.add(lab.s)
			ptr = append(ptr, len(entries))
			if n := len(ptr) - 1; n*dim > maxEl {
				return nil, limitErr(errAt(name, lineNo, 0, "", "%d rows × %d features exceed the limit of %d values (LoadOptions.MaxElements)", n, dim, maxEl))
			}
			if len(ptr)-1 > maxEl { // label-only lines: every row will hold at least one value
				return nil, rowLimit(name, lineNo, maxEl)
			}
		}
		if err == io.EOF {
			break
		}
	}
	n := len(ptr) - 1
	if n == 0 {
		return nil, errAt(name, 0, 0, "", "empty file: no data lines")
	}
	if dim == 0 {
		return nil, errAt(name, 0, 0, "", "no features: every line holds a label only")
	}
	x := mat.NewDense(n, dim, nil)
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+dim]
		for _, e := range entries[ptr[i]:ptr[i+1]] {
			row[e.j] = e.v
		}
	}
	y, classes := enc.finish()
	return &Dataset{Name: baseName(name), X: x, Y: y, Classes: classes}, nil
}

type token struct {
	s   string
	col int // 1-based byte column
}

// fieldsWithCol splits a line at spaces and tabs, remembering where each token starts.
func fieldsWithCol(line string) []token {
	var out []token
	start := -1
	for i := 0; i <= len(line); i++ {
		if i == len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\v' || line[i] == '\f' {
			if start >= 0 {
				out = append(out, token{line[start:i], start + 1})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return out
}

// indexAt is a feature index of a LIBSVM line and the column of its token.
type indexAt struct{ j, col int }

// firstRepeat returns the index repeated in a line whose repetition comes
// first in the line, and the column of that repetition. Sorting the line's
// indices takes 16 bytes per token, where a set would take several times
// more on a line of millions of tokens.
func firstRepeat(s []indexAt) (j, col int, dup bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	slices.SortFunc(s, func(a, b indexAt) int {
		if a.j != b.j {
			return cmp.Compare(a.j, b.j)
		}
		return cmp.Compare(a.col, b.col)
	})
	for k := 1; k < len(s); k++ {
		if s[k].j == s[k-1].j && (!dup || s[k].col < col) {
			j, col, dup = s[k].j, s[k].col, true
		}
	}
	return j, col, dup
}
