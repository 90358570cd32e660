package lapack

import "golang.org/x/sys/cpu"

// cpuFeatures reads the processor's capabilities (golang.org/x/sys/cpu
// checks the operating system's support of the AVX and AVX-512 registers).
func cpuFeatures() features {
	x := cpu.X86
	return features{
		avx2: x.HasAVX2, fma: x.HasFMA,
		avx512:     x.HasAVX512F && x.HasAVX512CD && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL,
		avx512bf16: x.HasAVX512F && x.HasAVX512BF16,
	}
}
