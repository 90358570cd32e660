//go:build amd64 && !noasm

#include "textflag.h"

// func axpy4AVX2(n int, v *float64, w *[4]float64, ct *float64, ldc int)
// For l = 0..3 and j < n (n a multiple of 4): ct[l*ldc+j] += w[l]·v[j],
// rounded as a product then a sum (VMULPD, VADDPD), like the Go loop.
TEXT ·axpy4AVX2(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ v+8(FP), SI
	MOVQ w+16(FP), AX
	MOVQ ct+24(FP), DI
	MOVQ ldc+32(FP), DX
	SHLQ $3, DX
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VBROADCASTSD 24(AX), Y3
	LEAQ (DI)(DX*1), R8
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	XORQ BX, BX

axpyloop:
	CMPQ BX, CX
	JGE  axpydone
	VMOVUPD (SI)(BX*8), Y4
	VMULPD  Y4, Y0, Y5
	VADDPD  (DI)(BX*8), Y5, Y5
	VMOVUPD Y5, (DI)(BX*8)
	VMULPD  Y4, Y1, Y6
	VADDPD  (R8)(BX*8), Y6, Y6
	VMOVUPD Y6, (R8)(BX*8)
	VMULPD  Y4, Y2, Y7
	VADDPD  (R9)(BX*8), Y7, Y7
	VMOVUPD Y7, (R9)(BX*8)
	VMULPD  Y4, Y3, Y8
	VADDPD  (R10)(BX*8), Y8, Y8
	VMOVUPD Y8, (R10)(BX*8)
	ADDQ    $4, BX
	JMP     axpyloop

axpydone:
	VZEROUPPER
	RET

// func dot4AVX2(n int, v *float64, ct *float64, ldc int, acc *[16]float64)
// For l = 0..3 and lanes k = 0..3: acc[4l+k] = Σ_{j ≡ k mod 4, j < n}
// v[j]·ct[l*ldc+j] (n a multiple of 4), accumulated in order of j, each
// term rounded as a product then a sum: Dot's four accumulators.
TEXT ·dot4AVX2(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ v+8(FP), SI
	MOVQ ct+16(FP), DI
	MOVQ ldc+24(FP), DX
	MOVQ acc+32(FP), AX
	SHLQ $3, DX
	LEAQ (DI)(DX*1), R8
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ BX, BX

dotloop:
	CMPQ BX, CX
	JGE  dotdone
	VMOVUPD (SI)(BX*8), Y4
	VMULPD  (DI)(BX*8), Y4, Y5
	VADDPD  Y5, Y0, Y0
	VMULPD  (R8)(BX*8), Y4, Y6
	VADDPD  Y6, Y1, Y1
	VMULPD  (R9)(BX*8), Y4, Y7
	VADDPD  Y7, Y2, Y2
	VMULPD  (R10)(BX*8), Y4, Y8
	VADDPD  Y8, Y3, Y3
	ADDQ    $4, BX
	JMP     dotloop

dotdone:
	VMOVUPD Y0, 0(AX)
	VMOVUPD Y1, 32(AX)
	VMOVUPD Y2, 64(AX)
	VMOVUPD Y3, 96(AX)
	VZEROUPPER
	RET
