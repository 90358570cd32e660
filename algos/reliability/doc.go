// Package reliability holds no code: its tests drive every public entry point
// of the algorithm packages with bad or degenerate input (NaN/Inf, mismatched
// dimensions, empty input, a single class, k ≥ n, duplicate points, constant
// features) and require a clear error or a finite result — never a panic and
// never a crash inside C.
package reliability
