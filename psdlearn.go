// Package psdlearn learns positive semidefinite matrices: Mahalanobis
// metrics from labelled data (BoostMetric, PSDBoost, FrobMetric, and the
// baselines LMNN and ITML), kernels over a set of objects from pairs or
// distances (SimpleNPKL, DefiniteBoost, MEG) and embeddings (MVU). This root
// package is the front door for a Go program and for the command line; the
// algorithms themselves live in the packages under algos (boost, frob, sdp,
// mvu, npkl, meg, lmnn, itml), the learned model and its file format in
// model, and the numerical backends behind them in engine.
//
// The short path (model.LoadFile needs no native library):
//
//	m, err := psdlearn.FrobMetric{}.Fit(ctx, x, y)   // x n×D, labels y
//	err = m.SaveFile("metric.json")
//	m, err = model.LoadFile("metric.json")
//	z, err := m.Transform(rows) // Euclidean distances in z are the metric's
//
// # The pipeline
//
// Every metric learner runs on one pipeline, Run: data → preprocessing →
// triplets → a solve per C → selection → certificate → model →
// evaluation. The estimators' Fit, FitTriplets and FitPairs methods are
// Run with the data as given; Run itself returns the typed Result: the
// values of C searched, their validation scores, the chosen C, the
// certificate, the wall time of every phase and solve, the warnings and
// the scores on a test set. The command line (psdlearn train) calls Run
// too.
//
// Estimators are small structs in the manner of scikit-learn's: the zero
// value of every field means the documented default (named Default…
// constants and variables, each defined once), and Fit learns from all the
// rows it is given. The triplets are each point's K nearest same-class
// points × its K nearest other-class points on the preprocessed rows.
// Labels are values, not indices: they are remapped to 0..classes−1.
//
// C has one meaning everywhere in this package: the weight of the average
// hinge loss, i.e. the objective is ‖M‖²/2 + C·(1/m)Σ ξ_r for FrobMetric and
// the LP's per-triplet slack weight C/m for PSDBoost, so one C value means
// the same trade-off whatever the number m of triplets (the CLI's --C means
// the same). ITML's Gamma plays the part of C.
//
// Given several C values (the defaults of FrobMetric, PSDBoost and ITML are
// lists), Run chooses the one with the lowest validation error (equal
// errors choose the smaller C): the k-NN error on Common.Validation when it
// is set; otherwise by stratified k-fold cross-validation (Common.Folds,
// default 3), each fold's preprocessing, triplets and metric fitted on the
// other folds, then a fit on all rows with the chosen C; for given triplets
// or pairs, the fraction of held-out constraints (a share Common.HoldOut)
// violated. The values come from Common.Grid, the learner's list by
// default; an adaptive grid (AdaptiveGrid) proposes more values after
// seeing the scores. FrobMetric without C follows the data: its list is
// joined by its multiples for the spread of the feature scales when
// standardising the features lowers the Euclidean validation error, and
// extended with AdaptiveGrid; BoostMetric without Iters doubles its
// iteration limit while the validation error keeps improving clearly.
// Result.CPolicy says where the values came from. A model whose
// validation error is above the Euclidean metric's on the same rows gets
// a warning.
//
// # Certificates and errors
//
// A solve that stops without its certificate (an iteration cap, a stall)
// still gives its model, marked in its certificate, with an error matching
// errs.ErrNotConverged. A cancelled or timed-out context gives the best
// model so far, marked interrupted, with an error matching both the
// context's error and errs.ErrNotConverged. Invalid settings or data give
// an error matching errs.ErrInvalid before any work.
//
// The kernel learners (SimpleNPKL.FitPairs, DefiniteBoost.FitPairs,
// MEG.FitDistances) take ctx first like Fit and return a *model.Model of
// Kind model.KindKernel: a kernel over the given objects only (no Transform
// for new points), with a certificate that claims convergence only when
// the algorithm has a stopping rule that was met.
//
// SimpleNPKL's clustering protocol is Cluster: a kNN Laplacian, then per
// run pairs sampled from the labels (seeded by ClusterRunSeed), a kernel,
// kernel k-means and its pairwise accuracy; the runs asked for in
// ClusterOptions.Keep come back with their kernels as models. ClusterPairs
// does the same from given pairs, scored on held-out ones. MVU.Model turns
// an embedding's Gram matrix into a kernel model. The distributed
// execution mode (package distributed) runs run 1 of the protocol across
// the processes of an MPI job.
//
// Estimators hold no state and are safe for concurrent use; so are models
// once loaded (Transform and Distance only read them), and the inputs,
// which are never modified.
package psdlearn
