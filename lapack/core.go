package lapack

// Core describes the OpenBLAS kernels in use.
type Core struct {
	// Name is OpenBLAS's name of its kernel set ("Haswell", "SkylakeX",
	// …), empty in builds without the native BLAS.
	Name string
	// Detected is the kernel set OpenBLAS chose itself when psdlearn
	// replaced it (see BLASCore), empty otherwise.
	Detected string
}

// String returns the name, with OpenBLAS's own choice when it was replaced.
func (c Core) String() string {
	switch {
	case c.Name == "":
		return "none"
	case c.Detected != "":
		return c.Name + " (OpenBLAS chose " + c.Detected + ")"
	}
	return c.Name
}

// preAVX are OpenBLAS's kernel sets for processors without AVX. A build with
// runtime kernel selection (DYNAMIC_ARCH) falls back to one of them when it
// does not recognise the processor: OpenBLAS before 0.3.25 gives Prescott to
// every Intel model newer than its table (Debian 12 ships 0.3.21, which
// does not know Emerald Rapids or Raptor Lake) and Barcelona to unknown AMD
// families. On a processor with AVX2 that choice is never deliberate, and
// its GEMMs run 4 to 6 times slower.
var preAVX = map[string]bool{
	"Katmai": true, "Coppermine": true, "Northwood": true, "Prescott": true, "Banias": true,
	"Atom": true, "Core2": true, "Penryn": true, "Dunnington": true, "Nehalem": true,
	"Athlon": true, "Opteron": true, "Opteron_SSE3": true, "Barcelona": true, "Nano": true, "Bobcat": true,
}

// coreFor returns the kernel sets to try, best first, for a processor whose
// OpenBLAS kernel set is detected: none unless detected is a pre-AVX set on
// a processor (and operating system) with AVX2 and FMA. The order is that
// of OpenBLAS 0.3.25's own fallback for unknown models.
func coreFor(detected string, f features) []string {
	if !preAVX[detected] || !(f.avx2 && f.fma) {
		return nil
	}
	var want []string
	if f.avx512 {
		if f.avx512bf16 {
			want = append(want, "Cooperlake")
		}
		want = append(want, "SkylakeX")
	}
	return append(want, "Haswell")
}

// features are the processor capabilities the kernel sets need, each
// usable only if the operating system saves the registers.
type features struct {
	avx2, fma  bool
	avx512     bool // F, CD, BW, DQ and VL: OpenBLAS's SkylakeX kernels
	avx512bf16 bool
}
