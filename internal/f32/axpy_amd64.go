//go:build amd64 && !noasm

package f32

import "golang.org/x/sys/cpu"

// useAVX2 reports that the processor and the operating system support AVX2.
var useAVX2 = cpu.X86.HasAVX2

// axpyAVX2 sets y += alpha·x with 256-bit multiplies and adds (no FMA).
// len(y) must equal len(x).
//
//go:noescape
func axpyAVX2(alpha float32, x, y []float32)

// sqDistAVX2 returns SqDist(a, b) with 256-bit subtracts, conversions,
// multiplies and adds (no FMA). len(b) must equal len(a) ≥ 8.
//
//go:noescape
func sqDistAVX2(a, b []float32) float64
