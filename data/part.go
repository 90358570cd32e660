package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/psdlearn/psdlearn/internal/input"
)

// Reading a text file by parts: the processes of a distributed run each
// read one byte range of the same CSV or LIBSVM file. A line belongs to the
// part whose range holds its first byte, so every line has one owner: a
// part starts at its first line start (LineStart) and reads through the line
// that straddles its end. The caller exchanges what the parts must agree on
// (where each part starts, how many lines precede it, the number of
// features, whether a CSV file's first row is a header, the class names);
// package distributed does it over MPI.

// TextFile is a CSV or LIBSVM file read by parts (OpenTextFile), through
// an io.ReaderAt. It is not safe for concurrent use.
type TextFile struct {
	r      io.ReaderAt
	size   int64
	format string // "csv" or "libsvm"
	name   string
	opt    LoadOptions
	csv    *csvLayout // CSV: the first record
	first  int64      // CSV: byte offset of the first record
	// ahead holds the bytes LineStart read after the line start it found,
	// at offset aheadOff, so that ReadPart does not read them again.
	ahead    []byte
	aheadOff int64
}

// scanChunk is the size of the reads that look for a line start.
const scanChunk = 4096

// OpenTextFile prepares to read parts of the CSV or LIBSVM file (format
// "csv" or "libsvm") of size bytes behind r; name names it in errors. A
// CSV file's first record is read at once (every part needs it: the
// header, the columns, the label column), skipping the empty lines before
// it as ParseCSV does, within the line limit of opt. The file must not be
// gzip-compressed (a compressed stream cannot be entered in the middle).
func OpenTextFile(r io.ReaderAt, size int64, format, name string, opt LoadOptions) (*TextFile, error) {
	if format != "csv" && format != "libsvm" {
		return nil, fmt.Errorf("%w: %s: format %q cannot be read by parts (want csv or libsvm)", ErrFormat, name, format)
	}
	f := &TextFile{r: r, size: size, format: format, name: name, opt: opt}
	if format == "libsvm" {
		return f, nil
	}
	if size == 0 {
		return nil, errAt(name, 0, 0, "", "empty file")
	}
	// The first record: skip lines that are only a line ending, as
	// encoding/csv does.
	b, off, line, err := f.firstRecord()
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errAt(name, 0, 0, "", "empty file")
	}
	o := f.inputOptions()
	o.Continued, o.Start = off > 0, off
	in, err := input.NewReader(bytes.NewReader(b), o)
	if err != nil {
		return nil, wrapInput(name, err)
	}
	rec, _, err := readCSVRow(newCSVReader(in), name)
	if err == io.EOF {
		return nil, errAt(name, line, 0, "", "empty file")
	}
	if err != nil {
		return nil, quoteHint(shiftLines(wrapRead(name, err), line-1))
	}
	if f.csv, err = newCSVLayout(rec, line, name, opt); err != nil {
		return nil, err
	}
	f.first = off
	return f, nil
}

// firstRecord reads the first line of the file that is not only a line
// ending (empty when there is none): its bytes with its line ending, its
// offset and its line number. It reads in doubling chunks, at most twice
// the bytes through that line plus 256, and refuses a line beyond the line
// limit.
func (f *TextFile) firstRecord() (b []byte, off int64, line int, err error) {
	maxLine := f.opt.maxLineBytes()
	var buf []byte
	start, line := 0, 1
	for {
		// The complete lines read so far.
		for {
			i := bytes.IndexByte(buf[start:], '\n')
			if i < 0 {
				break
			}
			l := buf[start : start+i+1]
			if !emptyCSVLine(l) {
				return l, int64(start), line, nil
			}
			start += i + 1
			line++
		}
		if len(buf)-start > maxLine+1 {
			return nil, 0, 0, limitErr(errAt(f.name, line, 0, "", "line %d is longer than %d bytes, the line limit (LoadOptions.MaxLineBytes)", line, maxLine))
		}
		if int64(len(buf)) == f.size {
			// The last line, without a newline.
			if l := buf[start:]; !emptyCSVLine(l) {
				return l, int64(start), line, nil
			}
			// Only line endings: the checks of a file's start still
			// apply (carriage returns alone), as in one process.
			in, err := input.NewReader(bytes.NewReader(buf), f.inputOptions())
			if err == nil {
				_, err = io.Copy(io.Discard, in)
			}
			if err != nil {
				return nil, 0, 0, wrapInput(f.name, err)
			}
			return nil, 0, 0, nil
		}
		chunk := make([]byte, min(int64(max(256, len(buf))), f.size-int64(len(buf))))
		if err := readAtFull(f.r, chunk, int64(len(buf)), f.name); err != nil {
			return nil, 0, 0, err
		}
		buf = append(buf, chunk...)
	}
}

// emptyCSVLine reports whether encoding/csv skips the line l (with its
// newline, or the last line without one): a line ending alone, "\n" or
// "\r\n", or at the end of the file "" or "\r". A line of several carriage
// returns is a record.
func emptyCSVLine(l []byte) bool {
	s := string(l)
	return s == "" || s == "\n" || s == "\r\n" || s == "\r"
}

// inputOptions are the bounds of the text of one part.
func (f *TextFile) inputOptions() input.Options {
	o := f.opt.inputOptions(f.name, false)
	o.NoGzip = true
	return o
}

// Size returns the file's size in bytes.
func (f *TextFile) Size() int64 { return f.size }

// LineStart returns the first line start in [lo, hi): the first offset x
// in the range with x = 0 or a newline at x−1, and ok = false when the
// range holds none (it lies inside one line). It reads from lo−1, never
// beyond hi, and keeps the bytes it read after x for a ReadPart from x.
func (f *TextFile) LineStart(lo, hi int64) (x int64, ok bool, err error) {
	hi = min(hi, f.size)
	if lo <= 0 {
		return 0, hi > 0, nil
	}
	buf := make([]byte, scanChunk)
	for off := lo - 1; off < hi-1; {
		b := buf[:min(int64(len(buf)), hi-1-off)]
		n, rerr := f.r.ReadAt(b, off)
		if n < len(b) {
			if rerr == nil || rerr == io.EOF {
				rerr = io.ErrUnexpectedEOF
			}
			return 0, false, fmt.Errorf("data: %s: read: %w", f.name, rerr)
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			x = off + int64(i) + 1
			f.ahead, f.aheadOff = b[i+1:], x
			return x, true, nil
		}
		off += int64(n)
	}
	return 0, false, nil
}

// TextPart is the part of a text file read by TextFile.ReadPart: its rows,
// parsed, with what the parts must agree on before they become a data set
// (TextPart.Dataset).
type TextPart struct {
	// Rows is the number of data rows of the part (a CSV header row of
	// HeaderAuto that the file's other parts may turn into a header is
	// counted), Lines the number of newlines in it.
	Rows, Lines int
	// Dim is the number of features: a CSV file's, the largest index of
	// the part's LIBSVM lines.
	Dim int
	// Bytes is the number of bytes of the part.
	Bytes int64
	// First says that the part holds the file's first CSV record.
	First bool

	f    *TextFile
	csv  *csvRows
	svm  *libsvmRows
	name string
}

// ReadPart parses the lines of the file in [start, end), where start is a
// line start (LineStart) and end the next part's start or the file's size.
// Errors are *ParseError values whose lines count from the part's first
// line (line 1); the caller shifts them (ShiftLines) by the lines of the
// parts before. The bounds of opt apply to the part: MaxInputBytes to its
// bytes, MaxLineBytes to each of its lines, MaxElements to its values.
func (f *TextFile) ReadPart(start, end int64) (*TextPart, error) {
	if start < 0 || end < start || end > f.size {
		return nil, fmt.Errorf("%w: %s: part [%d, %d) outside the file's %d bytes", ErrFormat, f.name, start, end, f.size)
	}
	var src io.Reader = io.NewSectionReader(f.r, start, end-start)
	if f.aheadOff == start && len(f.ahead) > 0 {
		// The bytes LineStart read already, then the rest.
		pre := f.ahead[:min(int64(len(f.ahead)), end-start)]
		src = io.MultiReader(bytes.NewReader(pre), io.NewSectionReader(f.r, start+int64(len(pre)), end-start-int64(len(pre))))
	}
	nl := &newlineCounter{r: src}
	o := f.inputOptions()
	o.Continued = start > 0 // the file's start is checked by the part that holds it
	o.Start = start
	in, err := input.NewReader(nl, o)
	if err != nil {
		return nil, wrapInput(f.name, err)
	}
	p := &TextPart{f: f, name: f.name, Bytes: end - start}
	if f.format == "libsvm" {
		if p.svm, err = parseLIBSVMRows(in, f.name, f.opt); err != nil {
			return nil, err
		}
		p.Rows, p.Dim, p.Lines = p.svm.n(), p.svm.dim, nl.lines
		return p, nil
	}
	l := f.csv
	p.csv = &csvRows{l: l, maxEl: f.opt.maxElements()}
	p.First = start <= f.first && f.first < end
	cr := newCSVReader(in)
	for rec := 0; ; rec++ {
		row, line, err := readCSVRow(cr, f.name)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, quoteHint(wrapRead(f.name, err))
		}
		if p.First && rec == 0 {
			// The file's first record: the layout says what it is.
			if l.mode != HeaderPresent {
				if err := p.csv.add(l.first, line); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := p.csv.add(row, line); err != nil {
			return nil, err
		}
	}
	p.Rows, p.Dim, p.Lines = p.csv.n, l.dim, nl.lines
	return p, nil
}

// AmbiguousHeader reports whether the file's first CSV record may be a
// header or data (HeaderAuto: only its label is not a number): the parts
// decide together (TextPart.HeaderEvidence) and the part holding it drops
// it (TextPart.Dataset) when it is a header.
func (f *TextFile) AmbiguousHeader() bool { return f.csv != nil && f.csv.ambiguous }

// NoRowsError is the error of a file without data rows (ParseCSV's and
// ParseLIBSVM's).
func (f *TextFile) NoRowsError() error {
	if f.csv != nil {
		return errAt(f.name, f.csv.line, 0, "", "no data rows after the header")
	}
	return errAt(f.name, 0, 0, "", "empty file: no data lines")
}

// NoFeaturesError is the error of a LIBSVM file whose lines hold labels
// only (ParseLIBSVM's).
func (f *TextFile) NoFeaturesError() error {
	return errAt(f.name, 0, 0, "", "no features: every line holds a label only")
}

// HeaderError is the error of an ambiguous first record that the evidence
// of all the parts cannot settle (ParseCSV's).
func (f *TextFile) HeaderError() error {
	if f.csv == nil {
		return nil
	}
	return f.csv.headerError()
}

// HeaderEvidence returns, over the part's rows other than the file's first
// record, whether one has the first record's class (then the first record
// is data) and whether one has a label that is not a number (then it
// cannot be a header above numeric labels). ParseCSV decides from the same
// two facts over the whole file.
func (p *TextPart) HeaderEvidence() (recurs, nonNumeric bool) {
	if p.csv == nil || p.csv.l.lab < 0 {
		return false, false
	}
	first, _, _ := canonicalLabel(p.f.csv.first[p.csv.l.lab])
	ids := p.csv.enc.ids
	if p.First && p.f.csv.mode != HeaderPresent && len(ids) > 0 {
		ids = ids[1:]
	}
	for _, id := range ids {
		name := p.csv.enc.names[id]
		if name == first {
			recurs = true
		}
		if _, _, ok := canonicalLabel(name); !ok {
			nonNumeric = true
		}
	}
	return recurs, nonNumeric
}

// Dataset returns the part's rows as a data set of dim features (a LIBSVM
// part may have used fewer: dim is the largest index of all the parts). Its
// labels index its own Classes (non-nil, empty when it has no rows; nil
// with LoadOptions.NoLabels); UnifyClasses renumbers the parts alike.
// dropFirst drops the file's first record, when the part holds it (an
// ambiguous header the parts decided is one). X is nil when the part has
// no rows. The part's rows × dim must stay within LoadOptions.MaxElements.
func (p *TextPart) Dataset(dim int, dropFirst bool) (*Dataset, error) {
	maxEl := p.f.opt.maxElements()
	if p.svm != nil {
		if dim < p.svm.dim {
			return nil, fmt.Errorf("%w: %s: %d features for a part with index %d", ErrFormat, p.name, dim, p.svm.dim)
		}
		if n := p.svm.n(); n > 0 && dim > maxEl/n {
			return nil, limitErr(errAt(p.name, 0, 0, "", "this part's %d rows × %d features exceed the limit of %d values (LoadOptions.MaxElements)", n, dim, maxEl))
		}
		return p.svm.dataset(p.name, dim), nil
	}
	if dim != p.csv.l.dim {
		return nil, fmt.Errorf("%w: %s: %d features for a CSV file of %d", ErrFormat, p.name, dim, p.csv.l.dim)
	}
	if dropFirst && p.First && p.csv.n > 0 {
		p.csv.dropFirst()
		p.Rows = p.csv.n
	}
	d := p.csv.dataset()
	if p.csv.l.lab >= 0 && d.Classes == nil {
		d.Classes = []string{}
	}
	return d, nil
}

// quoteHint adds to an error about CSV quoting that a quoted line break
// cannot be split: the likely cause when the file reads in one process.
func quoteHint(err error) error {
	var pe *ParseError
	if errors.As(err, &pe) && strings.Contains(pe.Msg, "quote") {
		pe.Msg += " (a quoted field that holds a line break cannot be split between parts: read the file in one process or as one file per rank)"
	}
	return err
}

// ShiftLines returns err with the line of a *ParseError it holds moved down
// by lines (the lines of the parts before the one that read it); other
// errors are returned as they are.
func ShiftLines(err error, lines int) error { return shiftLines(err, lines) }

func shiftLines(err error, lines int) error {
	var pe *ParseError
	if errors.As(err, &pe) && pe.Line > 0 && lines != 0 {
		// The line limit's message names the line too.
		if old := fmt.Sprintf("line %d ", pe.Line); strings.HasPrefix(pe.Msg, old) {
			pe.Msg = fmt.Sprintf("line %d ", pe.Line+lines) + pe.Msg[len(old):]
		}
		pe.Line += lines
	}
	return err
}

// newlineCounter counts the newlines read through it.
type newlineCounter struct {
	r     io.Reader
	lines int
}

func (c *newlineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.lines += bytes.Count(p[:n], []byte{'\n'})
	return n, err
}
