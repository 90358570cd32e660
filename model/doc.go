// Package model holds what psdlearn learns and stores: a Mahalanobis Metric
// (the PSD matrix M with a factor L, M = L Lᵀ), a low-rank Kernel
// K = V diag(λ) Vᵀ, and the model file that keeps either of them together
// with the preprocessing fitted on the training data (JSON with a format
// name and version; loading validates symmetry, finiteness and
// positive semidefiniteness).
//
// A metric Model works on raw data: Transform maps rows into the learned
// space, and Distance and PairDistances give the metric's distances between
// raw rows, the preprocessing applied first. TransformRowTo, TransformTo,
// Distance and DistancesTo write into the caller's memory and allocate
// nothing, for serving one request at a time.
//
// # File format
//
// A model file is one JSON object, {"format": "psdlearn-model", "version":
// 3, "kind": "metric" or "kernel", …}. Save writes version 3; Load reads
// versions 1 to 3 and rejects any other. Version 3 added the metric's
// factor "l", which Load checks against M on random vectors instead of
// decomposing M again. Version 2 added "provenance" (see
// Provenance): the psdlearn module and Go versions, the backend, the seed,
// the split as --split spells it ("0.7,0.15,0.15" or "rows:…"), the data set
// as read (name, rows, features and DataSHA256) and the creation time (RFC
// 3339, UTC; omitted when zero, for reproducible files). A version 1 file
// loads with a nil Provenance. docs/model-format.md describes every field
// with an example.
package model
