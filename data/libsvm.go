package data

import (
	"bufio"
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/internal/input"
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
	in, err := textInput(r, name, opt)
	if err != nil {
		return nil, err
	}
	rows, err := parseLIBSVMRows(in, name, opt)
	if err != nil {
		return nil, err
	}
	if rows.n() == 0 {
		return nil, errAt(name, 0, 0, "", "empty file: no data lines")
	}
	if rows.dim == 0 {
		return nil, errAt(name, 0, 0, "", "no features: every line holds a label only")
	}
	return rows.dataset(name, rows.dim), nil
}

// libsvmEntry is a non-zero value of a LIBSVM row: its 0-based feature and
// value.
type libsvmEntry struct {
	j int
	v float64
}

// libsvmRows are the rows of a LIBSVM input, sparse: row i holds
// entries[ptr[i]:ptr[i+1]]; dim is the largest index used.
type libsvmRows struct {
	ptr     []int
	entries []libsvmEntry
	enc     labelEncoder
	dim     int
}

func (s *libsvmRows) n() int { return len(s.ptr) - 1 }

// dataset returns the rows as a dense data set of dim ≥ s.dim features (X
// nil when there are no rows; Classes non-nil).
func (s *libsvmRows) dataset(name string, dim int) *Dataset {
	n := s.n()
	d := &Dataset{Name: baseName(name)}
	if n > 0 && dim > 0 {
		d.X = mat.NewDense(n, dim, nil)
		raw := d.X.RawMatrix()
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+dim]
			for _, e := range s.entries[s.ptr[i]:s.ptr[i+1]] {
				row[e.j] = e.v
			}
		}
	}
	d.Y, d.Classes = s.enc.finish()
	if d.Classes == nil {
		d.Classes = []string{}
	}
	return d
}

// parseLIBSVMRows reads the rows of a LIBSVM input (see ParseLIBSVM) from
// the bounded text reader in.
func parseLIBSVMRows(in io.Reader, name string, opt LoadOptions) (*libsvmRows, error) {
	br := bufio.NewReaderSize(in, 1<<16)
	maxEl := opt.maxElements()
	var (
		ptr     = []int{0}
		entries []libsvmEntry
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
		// The tokens are taken one at a time: a line of millions of them
		// needs no slice of them.
		lab, pos := nextToken(line, 0)
		if lab.s != "" {
			if strings.Contains(lab.s, ":") {
				return nil, errAt(name, lineNo, lab.col, "", "line starts with %s: want a label before the index:value pairs", input.Clip(lab.s, 40))
			}
			if err := input.CheckLabel(lab.s); err != nil {
				return nil, labelErr(errAt(name, lineNo, lab.col, "", "%v", labelMsg(err)))
			}
			seen = seen[:0]
			for {
				var t token
				if t, pos = nextToken(line, pos); t.s == "" {
					break
				}
				is, vs, ok := strings.Cut(t.s, ":")
				if !ok {
					return nil, errAt(name, lineNo, t.col, "", "token %s: want index:value", input.Clip(t.s, 40))
				}
				if strings.EqualFold(is, "qid") {
					continue
				}
				j, err := strconv.Atoi(is)
				if err != nil || j <= 0 {
					return nil, errAt(name, lineNo, t.col, "", "index %s: want an integer ≥ 1", input.Clip(is, 40))
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
					entries = append(entries, libsvmEntry{j - 1, v})
				}
				if len(entries) > maxEl {
					return nil, limitErr(errAt(name, lineNo, t.col, "", "more than %d values (LoadOptions.MaxElements)", maxEl))
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
	return &libsvmRows{ptr: ptr, entries: entries, enc: enc, dim: dim}, nil
}

type token struct {
	s   string
	col int // 1-based byte column
}

// nextToken returns the token of line that starts at or after pos (split
// at spaces and tabs, with its 1-based byte column) and the position after
// it; an empty token at the end of the line.
func nextToken(line string, pos int) (token, int) {
	for pos < len(line) && isSpace(line[pos]) {
		pos++
	}
	start := pos
	for pos < len(line) && !isSpace(line[pos]) {
		pos++
	}
	return token{line[start:pos], start + 1}, pos
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

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
