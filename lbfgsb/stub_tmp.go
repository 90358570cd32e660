package lbfgsb

// TEMPORARY scaffold: replaced by the real implementations.
const HaveNative = false

var Go Solver
var Native Solver
