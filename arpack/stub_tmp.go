package arpack

// TEMPORARY scaffold: replaced by the real implementations.
const HaveNative = false

// Go is the pure-Go solver (scaffold).
var Go Solver

// Native is the native solver (scaffold).
var Native Solver
