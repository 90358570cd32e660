package distributed

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/internal/npy"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
)

// RankError is the error every rank returns when one rank's part of a job
// failed: the same text on every rank, naming the lowest failing rank.
// On that rank it wraps the rank's own error, on the others ErrRemote.
type RankError struct {
	Rank int    // the rank whose part failed
	Msg  string // its error
	err  error
}

// Error implements the error interface: "rank R: MSG".
func (e *RankError) Error() string { return fmt.Sprintf("rank %d: %s", e.Rank, e.Msg) }

// Unwrap returns the failing rank's error on that rank, ErrRemote on the
// others.
func (e *RankError) Unwrap() error { return e.err }

// agree is collective: when err is not nil on some rank, every rank
// returns a *RankError with the message of the lowest failing rank; nil
// when no rank failed.
func agree(comm mpi.Comm, err error) error {
	p, r := comm.Size(), comm.Rank()
	flag := 0.0
	if err != nil {
		flag = float64(p - r)
	}
	v, cerr := comm.AllreduceMaxScalar(flag)
	if cerr != nil {
		return fmt.Errorf("distributed: %w", cerr)
	}
	if v == 0 {
		return nil
	}
	root := p - int(v)
	var msg []byte
	if r == root {
		msg = []byte(err.Error())
	}
	n := []float64{float64(len(msg))}
	if cerr := comm.Bcast(n, root); cerr != nil {
		return fmt.Errorf("distributed: %w", cerr)
	}
	if r != root {
		msg = make([]byte, int(n[0]))
	}
	if len(msg) > 0 {
		if cerr := comm.BcastBytes(msg, root); cerr != nil {
			return fmt.Errorf("distributed: %w", cerr)
		}
	}
	e := &RankError{Rank: root, Msg: string(msg), err: ErrRemote}
	if r == root {
		e.err = err
	}
	return e
}

// partFile is a data file a rank reads parts of.
type partFile interface {
	io.ReaderAt
	io.Closer
}

// openPart opens path for rank's reads by parts and returns its size;
// split is false when the file cannot be read by parts (not a regular
// file). Tests replace it to count the bytes each rank reads.
var openPart = func(path string, rank int) (f partFile, size int64, split bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, false, fmt.Errorf("data: %w", err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, 0, false, fmt.Errorf("data: %w", err)
	}
	return fh, st.Size(), st.Mode().IsRegular(), nil
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// ReadRows is LoadRows reading only this rank's part of one file. When
// spec names an uncompressed CSV, LIBSVM, IDX or npy file (data.SpecFiles,
// or the npy scheme) that every rank sees with the same size (an error
// otherwise), rank r of P reads:
//
//   - CSV and LIBSVM: the lines that start in the bytes r·S/P …
//     (r+1)·S/P − 1 of the file of S bytes, through the end of the last
//     one (a line belongs to the rank whose range holds its first byte),
//     and a CSV file's first record (the header, or the first row that
//     tells whether there is one);
//   - IDX (idx:IMAGES:LABELS) and npy (npy:X.npy[:LABELS.npy]): the
//     headers, then the rows r·n/P … (r+1)·n/P − 1 at their offsets.
//
// The rows are numbered in file order, rank 0's first; a rank may hold no
// rows of a text file (a range inside one long line). opt bounds each
// rank's part: MaxInputBytes its bytes, MaxLineBytes its lines,
// MaxElements its values. Labels are read and checked as by data.Load and
// numbered on the union of every rank's class names (data.Load's
// numbering); a CSV header that HeaderAuto cannot tell from the first row
// alone is decided on the labels of every part, as ParseCSV decides it.
// A rank whose part fails to parse makes every rank return the same
// *RankError, naming the rank and the line in the whole file.
//
// Every other spec (standard input, builtin data, gzip-compressed files,
// RankPlaceholder files) is read by LoadRows with load: a compressed
// stream cannot be entered in the middle, so every rank decompresses the
// whole file and keeps its block. Rows.ReadBytes reports what the rank
// read from its files (0 when load read them). ReadRows is collective.
func ReadRows(comm mpi.Comm, spec string, opt data.LoadOptions, load Loader, minRows int) (*Rows, error) {
	if comm == nil || load == nil {
		return nil, fmt.Errorf("%w: nil communicator or loader", ErrInvalid)
	}
	format, paths, ok := data.SpecFiles(spec)
	if scheme, rest, found := strings.Cut(spec, ":"); found && strings.EqualFold(scheme, npy.Scheme) {
		// npy:X.npy[:LABELS.npy]
		x, y, _ := strings.Cut(rest, ":")
		format, paths, ok = "npy", []string{x}, x != "" && x != data.StdinSpec && !(y != "" && opt.NoLabels)
		if y != "" {
			paths = append(paths, y)
		}
	}
	if !ok || strings.Contains(spec, RankPlaceholder) {
		return LoadRows(comm, spec, load, minRows, nil)
	}
	files, sizes, split, err := openParts(comm.Rank(), paths)
	defer func() {
		for _, f := range files {
			f.r.(partFile).Close()
		}
	}()
	if err := agree(comm, err); err != nil {
		return nil, err
	}
	// Every rank must see the same files: the same sizes, none compressed
	// or special.
	k := len(paths)
	same := make([]float64, 2*k+1)
	for i, s := range sizes {
		same[i], same[k+i] = float64(s), -float64(s)
	}
	if !split {
		same[2*k] = 1
	}
	if err := comm.AllreduceMax(same); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	for i, path := range paths {
		if same[i] != -same[k+i] {
			return nil, fmt.Errorf("%w: the ranks see %s with %.0f to %.0f bytes: every rank must read the same file (a file system all the nodes share), or give one file per rank with %s", ErrInvalid, path, -same[k+i], same[i], RankPlaceholder)
		}
	}
	if same[2*k] != 0 {
		return LoadRows(comm, spec, load, minRows, nil)
	}
	var (
		d    *data.Dataset
		info rowsInfo
	)
	switch format {
	case "idx":
		d, info, err = readIDXPart(comm, files, sizes, paths, opt)
	case "npy":
		d, info, err = readNPYPart(comm, files, sizes, paths, opt)
	default:
		d, info, err = readTextPart(comm, files[0], sizes[0], format, paths[0], opt)
	}
	if err != nil {
		return nil, err
	}
	out, err := partRows(comm, d, info, minRows)
	if err != nil {
		return nil, err
	}
	out.Name = data.BaseName(paths[0])
	for _, f := range files {
		out.ReadBytes += f.n
	}
	if comm.Rank() == 0 {
		// No rank holds the whole data to hash it: the model records its
		// shape only.
		out.Data = &model.DataInfo{Name: spec, Rows: out.N, Features: out.Dim}
	}
	return out, nil
}

// openParts opens the files of a spec; split is false when one of them
// cannot be read by parts (not a regular file, or gzip-compressed).
func openParts(rank int, paths []string) (files []*countingReaderAt, sizes []int64, split bool, err error) {
	split = true
	for _, path := range paths {
		f, size, ok, err := openPart(path, rank)
		if err != nil {
			return files, sizes, false, err
		}
		c := &countingReaderAt{r: f}
		files, sizes = append(files, c), append(sizes, size)
		var head [2]byte
		if ok && size >= 2 {
			if _, err := c.ReadAt(head[:], 0); err != nil {
				return files, sizes, false, fmt.Errorf("data: %s: read: %w", path, err)
			}
			ok = !(head[0] == 0x1f && head[1] == 0x8b)
		}
		split = split && ok
	}
	return files, sizes, split, nil
}

// rowsInfo is what a rank's part says about the whole data.
type rowsInfo struct {
	dim            int
	noRows, noFeat error // the errors of data without rows, without features
	labeled        bool
}

// readIDXPart reads this rank's block of an IDX image and label file.
func readIDXPart(comm mpi.Comm, files []*countingReaderAt, sizes []int64, paths []string, opt data.LoadOptions) (*data.Dataset, rowsInfo, error) {
	d, _, _, err := data.ReadIDXPart(files[0], files[1], sizes[0], sizes[1], paths[0], paths[1], comm.Rank(), comm.Size(), opt)
	if err := agree(comm, err); err != nil {
		return nil, rowsInfo{}, err
	}
	dim := 0
	if d.X != nil {
		_, dim = d.X.Dims()
	}
	dim, err = maxInt(comm, dim)
	return d, rowsInfo{dim: dim, labeled: true}, err
}

// readNPYPart reads this rank's block of a .npy data file and its
// labels, if any.
func readNPYPart(comm mpi.Comm, files []*countingReaderAt, sizes []int64, paths []string, opt data.LoadOptions) (*data.Dataset, rowsInfo, error) {
	var (
		y     io.ReaderAt
		ysize int64
		yname string
	)
	if len(files) > 1 {
		y, ysize, yname = files[1], sizes[1], paths[1]
	}
	d, _, err := npy.ReadPart(files[0], sizes[0], y, ysize, paths[0], yname, comm.Rank(), comm.Size(), opt)
	if err := agree(comm, err); err != nil {
		return nil, rowsInfo{}, err
	}
	dim := 0
	if d.X != nil {
		_, dim = d.X.Dims()
	}
	dim, err = maxInt(comm, dim)
	return d, rowsInfo{dim: dim, labeled: y != nil}, err
}

// readTextPart reads this rank's part of a CSV or LIBSVM file.
func readTextPart(comm mpi.Comm, file *countingReaderAt, size int64, format, path string, opt data.LoadOptions) (*data.Dataset, rowsInfo, error) {
	p, r := comm.Size(), comm.Rank()
	tf, err := data.OpenTextFile(file, size, format, path, opt)
	if err := agree(comm, err); err != nil {
		return nil, rowsInfo{}, err
	}
	// Where every rank's lines start (−1: a rank whose range starts no
	// line).
	lo, hi := int64(r)*size/int64(p), int64(r+1)*size/int64(p)
	start, owns, err := tf.LineStart(lo, hi)
	if err := agree(comm, err); err != nil {
		return nil, rowsInfo{}, err
	}
	mine := []float64{-1}
	if owns {
		mine[0] = float64(start)
	}
	starts := make([]float64, p)
	if err := comm.Allgatherv(mine, starts, repeat(p, 1)); err != nil {
		return nil, rowsInfo{}, fmt.Errorf("distributed: %w", err)
	}
	end := size
	for q := r + 1; q < p; q++ {
		if starts[q] >= 0 {
			end = int64(starts[q])
			break
		}
	}
	var part *data.TextPart
	if owns {
		part, err = tf.ReadPart(start, end)
	}
	// Every rank's lines and features, to number the lines of an error in
	// the whole file and to agree on the number of features.
	stat := []float64{0, 0}
	if part != nil {
		stat = []float64{float64(part.Lines), float64(part.Dim)}
	}
	all := make([]float64, 2*p)
	if cerr := comm.Allgatherv(stat, all, repeat(p, 2)); cerr != nil {
		return nil, rowsInfo{}, fmt.Errorf("distributed: %w", cerr)
	}
	before, dim := 0, 0
	for q := 0; q < p; q++ {
		if q < r {
			before += int(all[2*q])
		}
		dim = max(dim, int(all[2*q+1]))
	}
	if err != nil {
		err = data.ShiftLines(err, before)
	}
	if err := agree(comm, err); err != nil {
		return nil, rowsInfo{}, err
	}
	info := rowsInfo{dim: dim, labeled: format == "libsvm" || !opt.NoLabels, noRows: tf.NoRowsError(), noFeat: tf.NoFeaturesError()}
	drop := false
	if tf.AmbiguousHeader() {
		if drop, err = decideHeader(comm, tf, part); err != nil {
			return nil, rowsInfo{}, err
		}
	}
	d := &data.Dataset{Name: data.BaseName(path), Y: []int{}}
	if info.labeled {
		d.Classes = []string{}
	}
	if part != nil {
		d, err = part.Dataset(dim, drop)
	}
	if err := agree(comm, err); err != nil {
		return nil, rowsInfo{}, err
	}
	return d, info, nil
}

// decideHeader decides, on the labels of every rank's part, whether an
// ambiguous first CSV record is a header (drop it), as ParseCSV decides
// on the whole file; the error of a file that cannot tell is the same on
// every rank.
func decideHeader(comm mpi.Comm, tf *data.TextFile, part *data.TextPart) (drop bool, err error) {
	ev := []float64{0, 0, 0}
	if part != nil {
		recurs, nonNumeric := part.HeaderEvidence()
		others := part.Rows
		if part.First {
			others--
		}
		ev = []float64{b2f(recurs), b2f(nonNumeric), b2f(others > 0)}
	}
	if err := comm.AllreduceMax(ev); err != nil {
		return false, fmt.Errorf("distributed: %w", err)
	}
	switch {
	case ev[2] == 0, ev[0] != 0:
		return false, nil // a single row, or its class occurs again: data
	case ev[1] == 0:
		return true, nil // a header naming the label column above numeric labels
	}
	return false, tf.HeaderError()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// maxInt returns the maximum of v over the ranks.
func maxInt(comm mpi.Comm, v int) (int, error) {
	m, err := comm.AllreduceMaxScalar(float64(v))
	if err != nil {
		return 0, fmt.Errorf("distributed: %w", err)
	}
	return int(m), nil
}

// partRows numbers the rows of every rank's part d (rank 0's first) and
// their classes on the union of the ranks' class names.
func partRows(comm mpi.Comm, d *data.Dataset, info rowsInfo, minRows int) (*Rows, error) {
	rows := len(d.Y)
	var (
		classes []string
		n, lo   int
		err     error
	)
	if info.labeled {
		classes, n, lo, err = unifyRankClasses(comm, d, rows)
	} else {
		n, lo, err = countRows(comm, rows)
	}
	if err != nil {
		return nil, err
	}
	if n == 0 && info.noRows != nil {
		return nil, info.noRows
	}
	if info.dim == 0 && info.noFeat != nil {
		return nil, info.noFeat
	}
	fewest, err := comm.AllreduceMaxScalar(float64(minRows - rows))
	if err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	if fewest > 0 {
		return nil, fmt.Errorf("%w: %d rows in all over %d ranks: some rank has fewer than %d rows (use fewer ranks, or one file per rank with %s)", ErrTooFewRows, n, comm.Size(), minRows, RankPlaceholder)
	}
	out := &Rows{X: d.X, Y: d.Y, Classes: classes, N: n, Dim: info.dim, Lo: lo}
	if out.X != nil {
		if _, c := out.X.Dims(); c != info.dim {
			return nil, fmt.Errorf("distributed: internal error: rank %d has %d features, the data %d", comm.Rank(), c, info.dim)
		}
	}
	return out, nil
}

// countRows returns the number of rows over the ranks and this rank's
// first row.
func countRows(comm mpi.Comm, rows int) (n, lo int, err error) {
	p, r := comm.Size(), comm.Rank()
	all := make([]float64, p)
	if err := comm.Allgatherv([]float64{float64(rows)}, all, repeat(p, 1)); err != nil {
		return 0, 0, fmt.Errorf("distributed: %w", err)
	}
	for q, v := range all {
		if q < r {
			lo += int(v)
		}
		n += int(v)
	}
	return n, lo, nil
}

// HeldBytes returns the bytes of this rank's rows and labels (8 per value).
func (rw *Rows) HeldBytes() int64 {
	b := int64(8 * len(rw.Y))
	if rw.X != nil {
		r, c := rw.X.Dims()
		b += int64(8 * r * c)
	}
	return b
}

// Memory gathers every rank's HeldBytes and ReadBytes, in rank order. It is
// collective.
func (rw *Rows) Memory(comm mpi.Comm) (held, read []int64, err error) {
	p := comm.Size()
	all := make([]float64, 2*p)
	if err := comm.Allgatherv([]float64{float64(rw.HeldBytes()), float64(rw.ReadBytes)}, all, repeat(p, 2)); err != nil {
		return nil, nil, fmt.Errorf("distributed: %w", err)
	}
	held, read = make([]int64, p), make([]int64, p)
	for q := 0; q < p; q++ {
		held[q], read[q] = int64(all[2*q]), int64(all[2*q+1])
	}
	return held, read, nil
}
