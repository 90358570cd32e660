package data

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/internal/input"
	"github.com/psdlearn/psdlearn/progress"
)

// LoadOptions configures Load and the parsers.
type LoadOptions struct {
	// LabelCol selects the label column of a CSV file: a header name, or a
	// 0-based column index, negative indices counting from the end ("-1" is
	// the last column). The empty string means the last column.
	LabelCol string
	// Header says whether the first row of a CSV file is a header:
	// HeaderAuto (the zero value) detects it (see ParseCSV), HeaderPresent
	// and HeaderAbsent say so. Without a header the columns are named c0,
	// c1, ….
	Header HeaderMode
	// NoHeader is HeaderAbsent, kept for existing callers; it overrides
	// Header.
	NoHeader bool
	// NoLabels says a CSV file has no label column: every column is a
	// feature, and the Dataset has Y all zero and no Classes. LabelCol must
	// then be empty. (LIBSVM and IDX inputs always carry labels; NoLabels
	// does not change how they are read.)
	NoLabels bool
	// Stdin is read for the spec "-" (and "csv:-", "libsvm:-"); nil means
	// os.Stdin.
	Stdin io.Reader
	// MaxElements caps rows×features of a loaded data matrix (0 means
	// DefaultMaxElements). Sparse LIBSVM files and IDX headers can describe
	// huge dense matrices in a few bytes; the cap turns that into an error
	// instead of an out-of-memory crash. It also bounds the parsers' own
	// working memory (see ErrLimit).
	MaxElements int
	// MaxInputBytes caps the bytes read from one input after gzip
	// decompression (0 means DefaultMaxInputBytes, 1 GiB), so that a small
	// compressed file cannot expand without bound; parsing runs at 50–100
	// MB/s, so the default also bounds the time spent on a bomb.
	MaxInputBytes int64
	// MaxLineBytes caps the length of one line of a text input (CSV,
	// LIBSVM) in bytes (0 means DefaultMaxLineBytes, 16 MiB). The parsers
	// buffer a line before they split it, so the cap bounds their memory
	// whatever the input: an endless line (/dev/zero, a stream without
	// newlines) is refused once it passes the cap.
	MaxLineBytes int
	// Progress, if set, receives an event every 16 MiB read from a file, so
	// that a long load shows it is alive.
	Progress progress.Func
	// MaxFeatures caps the number of features (0: no cap beyond
	// MaxElements). Metric learning needs D×D matrices, so a caller that
	// will learn or apply a metric can refuse a file with too many features
	// as soon as its header or first out-of-range index is read, before the
	// data matrix is allocated.
	MaxFeatures int
}

// HeaderMode says whether the first row of a CSV file is a header.
type HeaderMode int

// The header modes of LoadOptions.Header.
const (
	// HeaderAuto detects a header: see ParseCSV.
	HeaderAuto HeaderMode = iota
	// HeaderPresent: the first row is a header.
	HeaderPresent
	// HeaderAbsent: the first row is data.
	HeaderAbsent
)

// String returns "auto", "present" or "absent".
func (m HeaderMode) String() string {
	switch m {
	case HeaderAuto:
		return "auto"
	case HeaderPresent:
		return "present"
	case HeaderAbsent:
		return "absent"
	}
	return fmt.Sprintf("HeaderMode(%d)", int(m))
}

func (o LoadOptions) headerMode() HeaderMode {
	if o.NoHeader {
		return HeaderAbsent
	}
	return o.Header
}

// StdinSpec is the data spec that names standard input (LoadOptions.Stdin).
const StdinSpec = "-"

// DefaultMaxElements is the default cap on rows×features (2³⁰ float64s, 8 GiB).
const DefaultMaxElements = 1 << 30

func (o LoadOptions) maxElements() int {
	if o.MaxElements > 0 {
		return o.MaxElements
	}
	return DefaultMaxElements
}

// ErrFormat is wrapped by every error about malformed or unsupported input.
var ErrFormat = errs.New("data: bad format", errs.ErrInvalid)

// ErrAmbiguousHeader is wrapped (with ErrFormat) by the error of a CSV file
// read with HeaderAuto whose first row may be a header or data: set
// LoadOptions.Header to say which.
var ErrAmbiguousHeader = errs.New("data: cannot tell whether the first CSV row is a header", ErrFormat)

// ErrLabel is wrapped (with ErrFormat) by the error of a row whose class
// label is not a label: a missing-value marker ("", "?", "NA", "N/A",
// "NaN", "null", any case), text with a control character or invalid UTF-8,
// or a label longer than MaxLabelBytes.
var ErrLabel = errs.New("data: not a class label", ErrFormat)

// MaxLabelBytes is the longest class label the loaders accept (256 bytes).
const MaxLabelBytes = input.MaxLabelBytes

// CheckLabel returns an error when s is not a usable class label (see
// ErrLabel); the loaders apply it to every label they read.
func CheckLabel(s string) error {
	if err := input.CheckLabel(s); err != nil {
		return fmt.Errorf("%w: %s", ErrLabel, labelMsg(err))
	}
	return nil
}

// labelErr marks a ParseError as one about a label.
func labelErr(e *ParseError) *ParseError {
	e.label = true
	return e
}

// ParseError locates a problem in an input file. Line and Column are 1-based
// (0 when not applicable); for CSV the column is the field number (the
// byte column for malformed quoting, as encoding/csv reports it), for
// LIBSVM the byte column of the offending token. Binary IDX files report a
// byte Offset instead (−1 when not applicable).
type ParseError struct {
	File   string // file name (or the name given to a Parse function)
	Line   int
	Column int
	Field  string // the CSV column name, when known
	Offset int64
	Msg    string

	limit  bool // the input exceeds a resource limit: also wraps ErrLimit
	header bool // the header could not be detected: also wraps ErrAmbiguousHeader
	label  bool // a class label is missing or not a label: also wraps ErrLabel
}

// Error implements the error interface.
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("data: ")
	file := e.File
	if file == "" {
		file = "<input>"
	}
	b.WriteString(file)
	switch {
	case e.Line > 0 && e.Column > 0:
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	case e.Line > 0:
		fmt.Fprintf(&b, ":%d", e.Line)
	case e.Offset >= 0:
		fmt.Fprintf(&b, ": byte %d", e.Offset)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, " (column %q)", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap makes every ParseError match ErrFormat, and those about a resource
// limit (LoadOptions.MaxElements, MaxInputBytes) match ErrLimit too.
func (e *ParseError) Unwrap() []error {
	switch {
	case e.limit:
		return []error{ErrFormat, ErrLimit}
	case e.header:
		return []error{ErrFormat, ErrAmbiguousHeader}
	case e.label:
		return []error{ErrFormat, ErrLabel}
	}
	return []error{ErrFormat}
}

func errAt(file string, line, col int, field, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: line, Column: col, Field: field, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

func errOffset(file string, off int64, format string, args ...any) *ParseError {
	return &ParseError{File: file, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Opener opens the data set called name for a spec "scheme:name".
type Opener func(name string, opt LoadOptions) (*Dataset, error)

var (
	schemeMu sync.RWMutex
	schemes  = map[string]Opener{}
)

// RegisterScheme makes Load resolve specs "scheme:name" with open. Package
// github.com/psdlearn/psdlearn/datasets registers "builtin" from its init
// function, so importing it (even as _) enables specs like "builtin:iris".
// The names "idx", "csv" and "libsvm" are reserved. It panics on a duplicate
// or reserved scheme (a programming error at init time).
func RegisterScheme(scheme string, open Opener) {
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "idx", "csv", "libsvm", "":
		panic("data: reserved scheme " + scheme)
	}
	schemeMu.Lock()
	defer schemeMu.Unlock()
	if _, dup := schemes[scheme]; dup {
		panic("data: duplicate scheme " + scheme)
	}
	schemes[scheme] = open
}

func lookupScheme(scheme string) (Opener, []string) {
	schemeMu.RLock()
	defer schemeMu.RUnlock()
	if o, ok := schemes[scheme]; ok {
		return o, nil
	}
	names := make([]string, 0, len(schemes))
	for n := range schemes {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, names
}

// Load reads the data set described by spec:
//
//	path.csv                  CSV, header row detected (opt.Header), label column per opt.LabelCol (default: last)
//	path.libsvm, .svm, .txt   LIBSVM / SVMlight sparse format ("label idx:val …", 1-based indices)
//	idx:IMAGES:LABELS         MNIST-style IDX image and label files
//	csv:PATH, libsvm:PATH     force a format whatever the extension
//	SCHEME:NAME               a registered scheme, e.g. builtin:iris (see RegisterScheme)
//	-                         CSV read from opt.Stdin (os.Stdin when nil); csv:- and libsvm:- too
//
// Any file may be gzip-compressed (detected from its content; a trailing
// ".gz" is ignored when choosing the format). The Dataset's Name is the
// file's base name without extensions. Errors about the content are
// *ParseError values naming the file, line and column.
func Load(spec string, opt LoadOptions) (*Dataset, error) {
	if spec == "" {
		return nil, fmt.Errorf("%w: empty data spec", ErrFormat)
	}
	if spec == StdinSpec {
		return loadFile(spec, "csv", opt)
	}
	if scheme, rest, ok := strings.Cut(spec, ":"); ok && isScheme(scheme) {
		switch strings.ToLower(scheme) {
		case "idx":
			images, labels, ok := strings.Cut(rest, ":")
			if !ok || images == "" || labels == "" {
				return nil, fmt.Errorf("%w: IDX spec %q: want idx:IMAGES:LABELS", ErrFormat, spec)
			}
			return loadIDXFiles(images, labels, opt)
		case "csv":
			return loadFile(rest, "csv", opt)
		case "libsvm", "svm":
			return loadFile(rest, "libsvm", opt)
		default:
			open, names := lookupScheme(strings.ToLower(scheme))
			if open == nil {
				if len(names) == 0 {
					return nil, fmt.Errorf("%w: unknown spec scheme %q in %q (for builtin: data sets import github.com/psdlearn/psdlearn/datasets)", ErrFormat, scheme, spec)
				}
				return nil, fmt.Errorf("%w: unknown spec scheme %q in %q (registered: %s)", ErrFormat, scheme, spec, strings.Join(names, ", "))
			}
			d, err := open(rest, opt)
			if err != nil {
				return nil, fmt.Errorf("data: %s: %w", spec, err)
			}
			return d, nil
		}
	}
	ext := strings.ToLower(filepath.Ext(strings.TrimSuffix(strings.TrimSuffix(spec, ".gz"), ".GZ")))
	switch ext {
	case ".csv":
		return loadFile(spec, "csv", opt)
	case ".libsvm", ".svm", ".txt", ".svmlight":
		return loadFile(spec, "libsvm", opt)
	}
	return nil, fmt.Errorf("%w: %s: unknown data format %q (want .csv, .libsvm/.svm/.txt, idx:IMAGES:LABELS or builtin:NAME)", ErrFormat, spec, ext)
}

// isScheme reports whether s looks like a spec scheme: a letter followed by
// letters, digits, '_' or '-', at least two characters (so that a Windows
// drive letter is not taken for a scheme).
func isScheme(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
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

// openInput opens path for a bounded read (package internal/input): gzip
// decompressed, at most opt.MaxInputBytes after decompression and, for
// text, lines of at most opt.MaxLineBytes.
func openInput(path string, opt LoadOptions, binary bool) (io.ReadCloser, error) {
	rc, err := input.Open(path, opt.inputOptions(path, binary))
	if err != nil {
		return nil, wrapInput(path, err)
	}
	return rc, nil
}

// inputOptions are the bounds of one input of name.
func (o LoadOptions) inputOptions(name string, binary bool) input.Options {
	opt := input.Options{Name: name, MaxBytes: o.maxInputBytes(), MaxLine: o.maxLineBytes(), Binary: binary,
		BytesOption: "LoadOptions.MaxInputBytes", LineOption: "LoadOptions.MaxLineBytes"}
	if f := o.Progress; f != nil {
		start := time.Now()
		opt.Progress = func(n int64) {
			f(progress.Event{Algorithm: "load", Objective: math.NaN(), Gap: math.NaN(), Elapsed: time.Since(start),
				Message: fmt.Sprintf("reading %s: %d MiB so far", name, n>>20)})
		}
	}
	return opt
}

// wrapInput turns the errors of package input into ParseErrors and an
// open error into one naming the file.
func wrapInput(name string, err error) error {
	var ie *input.Error
	if errors.As(err, &ie) {
		pe := &ParseError{File: ie.Name, Line: ie.Line, Offset: ie.Offset, Msg: ie.Msg, limit: ie.Limit}
		if ie.Line > 0 {
			pe.Offset = -1
		}
		return pe
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe
	}
	return fmt.Errorf("data: %w", err)
}

// stdinName names standard input in errors and is the Dataset name of data
// read from it.
const stdinName = "<stdin>"

func loadFile(path, format string, opt LoadOptions) (*Dataset, error) {
	var (
		r    io.Reader
		name = path
	)
	if path == StdinSpec {
		in := opt.Stdin
		if in == nil {
			in = os.Stdin
		}
		name = stdinName
		ir, err := input.NewReader(in, opt.inputOptions(name, false))
		if err != nil {
			return nil, wrapInput(name, err)
		}
		r = ir
	} else {
		rc, err := openInput(path, opt, false)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		r = rc
	}
	var (
		d   *Dataset
		err error
	)
	switch format {
	case "csv":
		d, err = ParseCSV(r, name, opt)
	default:
		d, err = ParseLIBSVM(r, name, opt)
	}
	if err != nil {
		return nil, err
	}
	d.Name = baseName(path)
	if path == StdinSpec {
		d.Name = "stdin"
	}
	return d, nil
}

func loadIDXFiles(images, labels string, opt LoadOptions) (*Dataset, error) {
	return LoadIDX(opt, IDXFiles{Images: images, Labels: labels})
}

// IDXFiles names an IDX image file and its label file.
type IDXFiles struct{ Images, Labels string }

// LoadIDX reads pairs of IDX image and label files, each plain or
// gzip-compressed, as one Dataset: the rows of the first pair, then of the
// next, with one class list (ordered as Load orders classes). The images of
// every pair must have the same shape. Each file is checked as Load checks
// "idx:IMAGES:LABELS", and the values are converted once, into the
// Dataset's own array: MNIST's training and test files load this way
// without a copy of the 70,000 rows. The Dataset is named after the first
// image file.
func LoadIDX(opt LoadOptions, files ...IDXFiles) (*Dataset, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: LoadIDX: no files", ErrFormat)
	}
	read := func(path string) ([]byte, error) {
		if path == StdinSpec {
			return nil, fmt.Errorf("%w: IDX files cannot be read from standard input (give file names)", ErrFormat)
		}
		rc, err := openInput(path, opt, true)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return readIDX(rc, path, opt.maxElements())
	}
	pairs := make([]idxPair, len(files))
	for i, f := range files {
		ib, err := read(f.Images)
		if err != nil {
			return nil, err
		}
		lb, err := read(f.Labels)
		if err != nil {
			return nil, err
		}
		pairs[i] = idxPair{ib, lb, f.Images, f.Labels}
	}
	d, err := parseIDX(pairs, opt)
	if err != nil {
		return nil, err
	}
	d.Name = baseName(files[0].Images)
	return d, nil
}

// SpecFiles returns the format and the files of a spec that Load reads
// from files: "csv" or "libsvm" and one path, or "idx" and the image and
// label paths. ok is false for standard input and the registered schemes
// (and for specs Load refuses). Whether a file is gzip-compressed is not
// looked at (Load detects it from the content).
func SpecFiles(spec string) (format string, paths []string, ok bool) {
	if spec == "" || spec == StdinSpec {
		return "", nil, false
	}
	if scheme, rest, found := strings.Cut(spec, ":"); found && isScheme(scheme) {
		switch strings.ToLower(scheme) {
		case "idx":
			images, labels, ok := strings.Cut(rest, ":")
			if !ok || images == "" || labels == "" || images == StdinSpec || labels == StdinSpec {
				return "", nil, false
			}
			return "idx", []string{images, labels}, true
		case "csv":
			return "csv", []string{rest}, rest != StdinSpec && rest != ""
		case "libsvm", "svm":
			return "libsvm", []string{rest}, rest != StdinSpec && rest != ""
		}
		return "", nil, false
	}
	switch strings.ToLower(filepath.Ext(strings.TrimSuffix(strings.TrimSuffix(spec, ".gz"), ".GZ"))) {
	case ".csv":
		return "csv", []string{spec}, true
	case ".libsvm", ".svm", ".txt", ".svmlight":
		return "libsvm", []string{spec}, true
	}
	return "", nil, false
}

// BaseName is the name Load gives the data set of a file: its base name
// without extensions.
func BaseName(path string) string { return baseName(path) }
