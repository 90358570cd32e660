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
