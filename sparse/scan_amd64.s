//go:build amd64 && !noasm

#include "textflag.h"

// func nextBelowAVX2(row, rv []float32, qv, worst float32, from int) int
// Returns the first j ≥ from with !((qv + rv[j]) − (row[j] + row[j]) > worst),
// or len(row).
TEXT ·nextBelowAVX2(SB), NOSPLIT, $0-72
	MOVQ row_base+0(FP), SI
	MOVQ row_len+8(FP), CX
	MOVQ rv_base+24(FP), DI
	VBROADCASTSS qv+48(FP), Y0
	VBROADCASTSS worst+52(FP), Y1
	MOVQ from+56(FP), AX
	MOVQ CX, DX
	SUBQ $8, DX // last start of a full vector

loop8:
	CMPQ AX, DX
	JGT  tail
	VMOVUPS (DI)(AX*4), Y2
	VADDPS  Y2, Y0, Y2      // qv + rv
	VMOVUPS (SI)(AX*4), Y3
	VADDPS  Y3, Y3, Y3      // 2·dot, exact
	VSUBPS  Y3, Y2, Y2      // (qv + rv) − 2·dot
	VCMPPS  $0x0A, Y1, Y2, Y4 // NGT_US: !(dist > worst), true for NaN
	VMOVMSKPS Y4, BX
	TESTL   BX, BX
	JNZ     found
	ADDQ    $8, AX
	JMP     loop8

found:
	BSFL BX, BX
	ADDQ BX, AX
	MOVQ AX, ret+64(FP)
	VZEROUPPER
	RET

tail:
	CMPQ AX, CX
	JGE  none
	// VEX-encoded scalar instructions: legacy SSE ones after 256-bit VEX
	// ones (the upper halves of the Y registers dirty) pay a
	// state-transition penalty on many processors.
	VMOVSS (DI)(AX*4), X2
	VADDSS X0, X2, X2
	VMOVSS (SI)(AX*4), X3
	VADDSS X3, X3, X3
	VSUBSS X3, X2, X2
	VUCOMISS X1, X2
	JA   skip // dist > worst (ordered)
	MOVQ AX, ret+64(FP)
	VZEROUPPER
	RET

skip:
	INCQ AX
	JMP  tail

none:
	MOVQ CX, ret+64(FP)
	VZEROUPPER
	RET
