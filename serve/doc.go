// Package serve puts a learned metric model behind HTTP: it maps raw rows
// into the learned space, measures metric distances between raw rows, and
// predicts classes by k nearest neighbours against a labelled reference
// set, with JSON in and out. examples/serve is the command around it.
//
// Like package model it uses gonum only: a service built on it links no
// native library, and its numbers do not depend on the backend that
// trained the model.
//
// # Endpoints
//
// Rows are arrays of InputDim() numbers (the raw features, before the
// model's preprocessing). Every POST body is one JSON object; numbers
// that are not finite cannot be written in JSON, and a row of the wrong
// length gets 400 naming the row.
//
//	POST /v1/transform  {"rows": [[…], …]}
//	                    → {"rows": [[…], …]}   OutputDim() coordinates per row
//	POST /v1/distance   {"a": [[…], …], "b": [[…], …]}
//	                    → {"distances": […]}   the metric distance of a[i] and b[i]
//	POST /v1/predict    {"rows": [[…], …], "k": 5, "neighbors": true}
//	                    → {"labels": […], "neighbors": [[{"row": 7, "label": "3", "distance": 0.8}, …], …]}
//	GET  /v1/model      → the model's dimensions, the classes and the limits
//	GET  /healthz       → ok
//
// "k" (default Options.K) and "neighbors" (default false) are optional.
// Errors are {"error": "…"} with 400 (a malformed request), 404, 405, 413
// (a body or a number of rows over the limits) or 503 (no free slot, or
// the request's time budget spent).
//
// # Memory and concurrency
//
// A Handler is safe for concurrent use. At most Options.MaxInFlight
// requests compute at once; each takes its buffers from a pool (the body,
// the decoded rows, the response, the query's coordinates and its
// neighbours), so a request's allocations do not grow with its rows, and
// the model calls it makes (Model.TransformRowTo, Model.Distance,
// Index.Predict) allocate nothing. The memory a service holds is the index
// plus, per slot, buffers bounded by the request limits.
//
// k-NN predictions scan the reference rows, mapped into the learned space
// once by NewIndex, with exact Euclidean distances there (see Index).
package serve
