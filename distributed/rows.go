package distributed

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// RankPlaceholder in a data spec names one file per rank: rank r reads the
// spec with the placeholder replaced by r, and no rank reads another's
// rows.
const RankPlaceholder = "{rank}"

// ErrTooFewRows is wrapped by the error of LoadRows and Graph when a rank
// has fewer rows than the run needs (a layout the caller chose, not bad
// data).
var ErrTooFewRows = errs.New("distributed: too few rows per rank", errs.ErrInvalid)

// Rows is one rank's contiguous block of the rows of a data set, with what
// every rank knows of the whole. The rows are numbered rank by rank: rank
// 0's first.
type Rows struct {
	// X holds this rank's rows (nil when it has none), Y their labels,
	// indices into Classes.
	X *mat.Dense
	Y []int
	// Classes is the union of every rank's class names, in the order
	// data.Load gives classes, so that every rank numbers them alike.
	Classes []string
	// N is the number of rows over all ranks, Dim the number of features,
	// Lo the number of this rank's first row.
	N, Dim, Lo int
	// Name is the data set's name.
	Name string
	// ReadBytes is the number of bytes this rank read from the data files
	// when it read only its part of them (ReadRows); 0 when the whole data
	// was loaded.
	ReadBytes int64
	// Data describes the whole data for a model file (on rank 0; nil on the
	// others): its name, shape and hash, or only its shape when no rank
	// holds all of it (one file per rank).
	Data *model.DataInfo
}

// A Loader loads a data set named by spec (the command line's reader, with
// its header, label and size options).
type Loader func(spec string) (*data.Dataset, error)

// LoadRows loads this rank's rows of spec with load. With RankPlaceholder in
// spec, rank r reads only its own file (every file needs at least one row);
// the ranks then agree, before anything else is exchanged, that every file
// loaded and that they have the same number of features (a file that fails
// makes every rank return the same *RankError, naming the lowest failing
// rank: on that rank it wraps its error, on the others ErrRemote), and on
// one class list: the union of their label names, ordered as data.Load
// orders classes, so that the rows carry the labels a one-process run on
// the files concatenated in rank order would give them. Otherwise every
// rank parses the data and keeps the block r·n/P … (r+1)·n/P − 1.
//
// Every rank needs at least minRows rows (an error wrapping ErrTooFewRows).
// prep, if not nil, transforms the whole data before the split
// (standardisation, fitted on all the rows as in one process); it needs
// every rank to read the whole data, so with RankPlaceholder it is an
// error wrapping ErrInvalid. LoadRows is collective.
func LoadRows(comm mpi.Comm, spec string, load Loader, minRows int, prep func(*mat.Dense) (*mat.Dense, error)) (*Rows, error) {
	if comm == nil || load == nil {
		return nil, fmt.Errorf("%w: nil communicator or loader", ErrInvalid)
	}
	p, r := comm.Size(), comm.Rank()
	if strings.Contains(spec, RankPlaceholder) {
		if prep != nil {
			return nil, fmt.Errorf("%w: with one file per rank (%s) the data cannot be standardised across the files: standardise them beforehand", ErrInvalid, RankPlaceholder)
		}
		return loadRankFiles(comm, spec, load)
	}
	ds, err := load(spec)
	if err != nil {
		return nil, err
	}
	out := &Rows{Name: ds.Name, Classes: ds.Classes}
	out.N, out.Dim = ds.X.Dims()
	if out.N < minRows*p {
		return nil, fmt.Errorf("%w: %d rows for %d ranks: every rank needs at least %d rows", ErrTooFewRows, out.N, p, minRows)
	}
	x := ds.X
	if prep != nil {
		if x, err = prep(x); err != nil {
			return nil, err
		}
	}
	lo, hi := r*out.N/p, (r+1)*out.N/p
	if hi > lo {
		out.X = mat.DenseCopyOf(x.Slice(lo, hi, 0, out.Dim))
	}
	out.Y = append([]int(nil), ds.Y[lo:hi]...)
	out.Lo = lo
	if r == 0 {
		out.Data = model.DescribeData(ds.Name, ds.X, ds.Y, ds.Classes)
	}
	return out, nil
}

// loadRankFiles is LoadRows with one file per rank.
func loadRankFiles(comm mpi.Comm, spec string, load Loader) (*Rows, error) {
	r := comm.Rank()
	path := strings.ReplaceAll(spec, RankPlaceholder, strconv.Itoa(r))
	d, lerr := load(path)
	rows, dim := 0, 0
	if lerr == nil {
		rows, dim = d.X.Dims()
		if rows == 0 {
			lerr = fmt.Errorf("%w: %s has no rows: every rank needs at least one", ErrTooFewRows, path)
		}
	}
	// A rank whose file failed stops every rank with its error.
	if err := agree(comm, lerr); err != nil {
		return nil, err
	}
	dims := []float64{float64(dim), -float64(dim)}
	if err := comm.AllreduceMax(dims); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	if dims[0] != -dims[1] {
		return nil, fmt.Errorf("%w: the ranks' files of %s have %g to %g features", ErrInvalid, spec, -dims[1], dims[0])
	}
	classes, n, lo, err := unifyRankClasses(comm, d, rows)
	if err != nil {
		return nil, err
	}
	out := &Rows{X: d.X, Y: d.Y, Classes: classes, N: n, Dim: dim, Lo: lo, Name: spec}
	if r == 0 {
		// No rank holds the whole data to hash it: the model records its
		// shape only.
		out.Data = &model.DataInfo{Name: spec, Rows: n, Features: dim}
	}
	return out, nil
}

// unifyRankClasses gathers every rank's row count and class names,
// renumbers d's labels on the union of the class names (data.UnifyClasses)
// and returns the union, the total number of rows and this rank's first
// row.
func unifyRankClasses(comm mpi.Comm, d *data.Dataset, rows int) (classes []string, n, lo int, err error) {
	p, r := comm.Size(), comm.Rank()
	// Rows and the length of the class names of every rank.
	names := strings.Join(d.Classes, "\x00")
	sizes := make([]float64, 2*p)
	if err := comm.Allgatherv([]float64{float64(rows), float64(len(names))}, sizes, repeat(p, 2)); err != nil {
		return nil, 0, 0, fmt.Errorf("distributed: %w", err)
	}
	counts := make([]int, p)
	total := 0
	for q := 0; q < p; q++ {
		if q < r {
			lo += int(sizes[2*q])
		}
		n += int(sizes[2*q])
		counts[q] = int(sizes[2*q+1])
		total += counts[q]
	}
	// Every rank's class names, as bytes.
	send := make([]float64, len(names))
	for i := 0; i < len(names); i++ {
		send[i] = float64(names[i])
	}
	recv := make([]float64, total)
	if err := comm.Allgatherv(send, recv, counts); err != nil {
		return nil, 0, 0, fmt.Errorf("distributed: %w", err)
	}
	others := make([]*data.Dataset, 0, p)
	off := 0
	for q := 0; q < p; q++ {
		b := make([]byte, counts[q])
		for i := range b {
			b[i] = byte(recv[off+i])
		}
		off += counts[q]
		if q != r && len(b) > 0 { // a rank without rows has no classes
			others = append(others, &data.Dataset{Classes: strings.Split(string(b), "\x00")})
		}
	}
	if err := data.UnifyClasses(append([]*data.Dataset{d}, others...)...); err != nil {
		return nil, 0, 0, fmt.Errorf("distributed: %w", err)
	}
	return d.Classes, n, lo, nil
}

// repeat returns p copies of v.
func repeat(p, v int) []int {
	c := make([]int, p)
	for i := range c {
		c[i] = v
	}
	return c
}

// Counts returns every rank's number of rows, in rank order. It is
// collective.
func (rw *Rows) Counts(comm mpi.Comm) ([]int, error) {
	p := comm.Size()
	all := make([]float64, p)
	if err := comm.Allgatherv([]float64{float64(len(rw.Y))}, all, repeat(p, 1)); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	counts := make([]int, p)
	for q, v := range all {
		counts[q] = int(v)
	}
	return counts, nil
}

// AllLabels gathers every rank's labels on every rank, in row order
// (counts: every rank's number of rows, as Counts returns). It is
// collective.
func (rw *Rows) AllLabels(comm mpi.Comm, counts []int) ([]int, error) {
	send := make([]float64, len(rw.Y))
	for i, v := range rw.Y {
		send[i] = float64(v)
	}
	all := make([]float64, rw.N)
	if err := comm.Allgatherv(send, all, counts); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	y := make([]int, rw.N)
	for i, v := range all {
		y[i] = int(v)
	}
	return y, nil
}

// Gather returns the whole data set on every rank: every rank's rows and
// labels in rank order, numbered as Classes (no labels when the ranks
// read none). It is collective, and every rank then holds all N rows.
func (rw *Rows) Gather(comm mpi.Comm) (*data.Dataset, error) {
	p := comm.Size()
	mine := 0
	if rw.X != nil {
		var c int
		if mine, c = rw.X.Dims(); c != rw.Dim || (rw.Y != nil && len(rw.Y) != mine) {
			return nil, fmt.Errorf("%w: %d×%d rows for %d labels and %d features", ErrInvalid, mine, c, len(rw.Y), rw.Dim)
		}
	}
	all := make([]float64, p)
	if err := comm.Allgatherv([]float64{float64(mine)}, all, repeat(p, 1)); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	rows, cells, n := make([]int, p), make([]int, p), 0
	for q, v := range all {
		rows[q], cells[q] = int(v), int(v)*rw.Dim
		n += rows[q]
	}
	if n != rw.N || n == 0 || rw.Dim == 0 {
		return nil, fmt.Errorf("%w: the ranks hold %d rows of %d features, the data %d", ErrInvalid, n, rw.Dim, rw.N)
	}
	var send []float64
	if mine > 0 {
		send = make([]float64, 0, mine*rw.Dim)
		for i := 0; i < mine; i++ {
			send = append(send, rw.X.RawRowView(i)...)
		}
	}
	x := make([]float64, n*rw.Dim)
	if err := comm.Allgatherv(send, x, cells); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	if len(rw.Classes) == 0 { // no labels (the union of the ranks' classes is empty on every rank)
		return &data.Dataset{Name: rw.Name, X: mat.NewDense(n, rw.Dim, x)}, nil
	}
	ys := make([]float64, mine)
	for i, v := range rw.Y {
		ys[i] = float64(v)
	}
	yall := make([]float64, n)
	if err := comm.Allgatherv(ys, yall, rows); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	y := make([]int, n)
	for i, v := range yall {
		y[i] = int(v)
	}
	return &data.Dataset{Name: rw.Name, X: mat.NewDense(n, rw.Dim, x), Y: y, Classes: slices.Clone(rw.Classes)}, nil
}
