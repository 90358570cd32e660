//go:build amd64 && !noasm

#include "textflag.h"

// func transpose8AVX(dst []float32, dstStride int, src []float32, srcStride int)
// Writes the 8×8 block at src (rows srcStride apart) transposed into dst
// (rows dstStride apart): dst[c*dstStride+i] = src[i*srcStride+c].
TEXT ·transpose8AVX(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ dstStride+24(FP), DX
	MOVQ src_base+32(FP), SI
	MOVQ srcStride+56(FP), CX
	SHLQ $2, DX
	SHLQ $2, CX
	VMOVUPS (SI), Y0
	ADDQ    CX, SI
	VMOVUPS (SI), Y1
	ADDQ    CX, SI
	VMOVUPS (SI), Y2
	ADDQ    CX, SI
	VMOVUPS (SI), Y3
	ADDQ    CX, SI
	VMOVUPS (SI), Y4
	ADDQ    CX, SI
	VMOVUPS (SI), Y5
	ADDQ    CX, SI
	VMOVUPS (SI), Y6
	ADDQ    CX, SI
	VMOVUPS (SI), Y7
	// Pairs of rows interleaved.
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	// Quadruples of rows.
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	// The 128-bit halves: columns 0–3 from the low halves, 4–7 high.
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DI)
	ADDQ    DX, DI
	VMOVUPS Y9, (DI)
	ADDQ    DX, DI
	VMOVUPS Y10, (DI)
	ADDQ    DX, DI
	VMOVUPS Y11, (DI)
	ADDQ    DX, DI
	VMOVUPS Y12, (DI)
	ADDQ    DX, DI
	VMOVUPS Y13, (DI)
	ADDQ    DX, DI
	VMOVUPS Y14, (DI)
	ADDQ    DX, DI
	VMOVUPS Y15, (DI)
	VZEROUPPER
	RET
