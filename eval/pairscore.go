package eval

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Pair scores: the quality of a learned distance on labelled pairs and in
// retrieval.
//
// A pair is labelled y = +1 (similar, a must-link) or y = −1 (dissimilar, a
// cannot-link), and scored by a distance: smaller means more similar, and a
// pair is declared similar when its distance is ≤ a threshold. The
// functions take the distances and the labels as parallel slices, so any
// distance works (squared or not: the AUC and the accuracy of a calibrated
// threshold do not depend on a monotone transform, only the threshold's
// value does).

// checkScoredPairs validates parallel distances and ±1 labels.
func checkScoredPairs(dist []float64, y []int) (pos, neg int, err error) {
	if len(dist) == 0 {
		return 0, 0, fmt.Errorf("%w: no pairs", ErrInvalid)
	}
	if len(dist) != len(y) {
		return 0, 0, fmt.Errorf("%w: %d distances for %d pair labels", ErrInvalid, len(dist), len(y))
	}
	for r, v := range dist {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, fmt.Errorf("%w: distance of pair %d is %v, want a finite number", ErrInvalid, r, v)
		}
		switch y[r] {
		case 1:
			pos++
		case -1:
			neg++
		default:
			return 0, 0, fmt.Errorf("%w: label of pair %d is %d, want +1 (similar) or -1 (dissimilar)", ErrInvalid, r, y[r])
		}
	}
	return pos, neg, nil
}

// PairAUC returns the area under the ROC curve of the distances dist of
// labelled pairs (y[r] = +1 similar, −1 dissimilar; smaller distances mean
// more similar): the probability that a random similar pair is closer than
// a random dissimilar one, a tie counting 1/2. It is the Mann–Whitney
// statistic U/(n₊n₋), computed from the tie-averaged ranks of the distances
// in O(n log n): 1 separates the classes perfectly, 0.5 is chance, 0 is
// perfectly inverted. Both labels must occur, and every distance must be
// finite; errors wrap ErrInvalid.
func PairAUC(dist []float64, y []int) (float64, error) {
	pos, neg, err := checkScoredPairs(dist, y)
	if err != nil {
		return 0, err
	}
	if pos == 0 || neg == 0 {
		return 0, fmt.Errorf("%w: ROC AUC needs similar and dissimilar pairs, got %d and %d", ErrInvalid, pos, neg)
	}
	// A dissimilar pair beats a similar one when its distance is larger:
	// U = Σ over dissimilar pairs of their 1-based ranks − n₋(n₋+1)/2.
	r := ranks(dist)
	var sum float64
	for i, v := range y {
		if v == -1 {
			sum += r[i] + 1
		}
	}
	u := sum - float64(neg)*float64(neg+1)/2
	return u / (float64(pos) * float64(neg)), nil
}

// PairAccuracy returns the fraction of labelled pairs decided right by the
// threshold t: a pair is declared similar when dist ≤ t, and that is right
// when y = +1. Errors wrap ErrInvalid (no pairs, lengths that differ, a
// label other than ±1, a non-finite distance, a NaN threshold).
func PairAccuracy(dist []float64, y []int, t float64) (float64, error) {
	if math.IsNaN(t) {
		return 0, fmt.Errorf("%w: NaN threshold", ErrInvalid)
	}
	p, err := scoredPairs(dist, y)
	if err != nil {
		return 0, err
	}
	return VerificationAccuracy(dist, p, t)
}

// CalibrateThreshold returns the threshold that maximises PairAccuracy on
// validation pairs, and that accuracy. Thresholds are swept over the cuts
// between consecutive distinct distances: the returned threshold lies
// midway between the largest distance it accepts and the next larger one
// (never on a distance, so ties at a distance are decided together), half
// the smallest distance when rejecting every pair is best (the smallest
// minus 1 if that is not positive), or the largest distance when accepting
// every pair is. Among equally accurate cuts the smallest threshold wins.
// This is BestThreshold on ±1 labels, the rule the verification reports
// use. Errors wrap ErrInvalid.
func CalibrateThreshold(dist []float64, y []int) (threshold, accuracy float64, err error) {
	p, err := scoredPairs(dist, y)
	if err != nil {
		return 0, 0, err
	}
	return BestThreshold(dist, p)
}

// scoredPairs validates dist and y and returns y as constraints.Pairs (the
// point indices are not used) for VerificationAccuracy and BestThreshold.
func scoredPairs(dist []float64, y []int) (*constraints.Pairs, error) {
	if _, _, err := checkScoredPairs(dist, y); err != nil {
		return nil, err
	}
	p := &constraints.Pairs{List: make([]constraints.LabelledPair, len(y))}
	for r, v := range y {
		p.List[r] = constraints.LabelledPair{A: r, B: r, Same: v == 1}
	}
	return p, nil
}

// PrecisionAtK is the retrieval precision@k of the Euclidean distance: for
// every row of queryX, the fraction of its k nearest rows of refX whose
// label (refY) equals the query's (queryY), averaged over the queries.
// Neighbours come from the k-NN search of KNNPredict (sparse.KNNBLAS with
// the BLAS of b, nil meaning engine.Default()), so equal distances are
// taken by lower reference index, as the k-NN classifier takes them.
// Labels must be ≥ 0 and 1 ≤ k ≤ rows of refX; errors wrap ErrInvalid.
// No queries give 0. For a learned metric use MetricPrecisionAtK.
func PrecisionAtK(b engine.Backend, refX *mat.Dense, refY []int, queryX *mat.Dense, queryY []int, k int) (float64, error) {
	if err := checkKNN(refX, refY, queryX, k); err != nil {
		return 0, err
	}
	if nq, _ := queryX.Dims(); nq != len(queryY) {
		return 0, fmt.Errorf("%w: %d query points, %d query labels", ErrInvalid, nq, len(queryY))
	}
	nb, err := sparse.KNNBLAS(engine.Or(b).BLAS(), queryX, refX, k, false)
	if err != nil {
		return 0, fmt.Errorf("eval: %w", err)
	}
	return precision(nb, refY, queryY), nil
}

// LOOPrecisionAtK is PrecisionAtK of every row of x against the other rows
// (a point is never its own neighbour), like LOOKNNError; k must be below
// the number of rows.
func LOOPrecisionAtK(b engine.Backend, x *mat.Dense, y []int, k int) (float64, error) {
	if err := checkKNN(x, y, x, k); err != nil {
		return 0, err
	}
	if n, _ := x.Dims(); k > n-1 {
		return 0, fmt.Errorf("%w: leave-one-out k = %d needs more than %d points", ErrInvalid, k, n)
	}
	nb, err := sparse.KNNBLAS(engine.Or(b).BLAS(), x, x, k, true)
	if err != nil {
		return 0, fmt.Errorf("eval: %w", err)
	}
	return precision(nb, y, y), nil
}

// MetricPrecisionAtK is PrecisionAtK in the metric m: both sets are mapped
// by X·L (Euclidean distances there are m's distances) first.
func MetricPrecisionAtK(b engine.Backend, m *model.Metric, refX *mat.Dense, refY []int, queryX *mat.Dense, queryY []int, k int) (float64, error) {
	zr, zq, err := metricMap(b, m, refX, queryX)
	if err != nil {
		return 0, err
	}
	return PrecisionAtK(b, zr, refY, zq, queryY, k)
}

// MetricKNNPredict is KNNPredict in the metric m: the labels that
// MetricKNNError scores.
func MetricKNNPredict(b engine.Backend, m *model.Metric, trainX *mat.Dense, trainY []int, testX *mat.Dense, k int) ([]int, error) {
	zr, zq, err := metricMap(b, m, trainX, testX)
	if err != nil {
		return nil, err
	}
	return KNNPredict(b, zr, trainY, zq, k)
}

// metricMap maps the reference and query rows by X·L of m.
func metricMap(b engine.Backend, m *model.Metric, refX, queryX *mat.Dense) (zr, zq *mat.Dense, err error) {
	if m == nil || refX == nil || queryX == nil {
		return nil, nil, fmt.Errorf("%w: nil metric or data", ErrInvalid)
	}
	d := m.Dim()
	if _, c := refX.Dims(); c != d {
		return nil, nil, fmt.Errorf("%w: reference data has %d features, the metric %d", ErrInvalid, c, d)
	}
	if _, c := queryX.Dims(); c != d {
		return nil, nil, fmt.Errorf("%w: query data has %d features, the metric %d", ErrInvalid, c, d)
	}
	if n, _ := refX.Dims(); n == 0 {
		return nil, nil, fmt.Errorf("%w: no reference points", ErrInvalid)
	}
	impl := engine.Or(b).BLAS()
	if zr, err = m.TransformBLAS(impl, refX); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if nq, _ := queryX.Dims(); nq == 0 {
		// TransformBLAS cannot allocate a matrix of no rows: an empty view.
		return zr, zr.Slice(0, 0, 0, m.Rank()).(*mat.Dense), nil
	}
	if zq, err = m.TransformBLAS(impl, queryX); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return zr, zq, nil
}

// precision averages, over the queries of nb, the fraction of neighbours
// whose label refY equals the query's label queryY.
func precision(nb *sparse.Neighbors, refY, queryY []int) float64 {
	if len(queryY) == 0 || nb.K == 0 {
		return 0
	}
	var sum float64
	for q, yq := range queryY {
		idx, _ := nb.Row(q)
		hit := 0
		for _, j := range idx {
			if refY[j] == yq {
				hit++
			}
		}
		sum += float64(hit) / float64(nb.K)
	}
	return sum / float64(len(queryY))
}

// TripletSatisfaction returns the fraction of the triplets (i, j, k) of ts
// with d_M(x_i, x_j) < d_M(x_i, x_k), strictly (a tie counts as a
// violation), for the metric m (nil: Euclidean) on the rows of x.
func TripletSatisfaction(m *model.Metric, x *mat.Dense, ts *constraints.TripletSet) (float64, error) {
	if ts == nil || ts.Len() == 0 {
		return 0, fmt.Errorf("%w: no triplets", ErrInvalid)
	}
	if x == nil {
		return 0, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	if err := ts.Validate(); err != nil {
		return 0, err
	}
	n, d := x.Dims()
	if ts.N != n {
		return 0, fmt.Errorf("%w: triplets on %d points, data of %d rows", ErrInvalid, ts.N, n)
	}
	if m == nil {
		m = model.Identity(d)
	}
	dist := make([]float64, len(ts.Pairs))
	if err := m.PairSqDistances(dist, x, ts.Pairs); err != nil {
		return 0, err
	}
	h := make([]float64, ts.Len())
	ts.Margins(h, dist)
	ok := 0
	for _, v := range h {
		if v > 0 {
			ok++
		}
	}
	return float64(ok) / float64(len(h)), nil
}
